package memplan

import (
	"slices"
	"testing"

	"github.com/mathrl/mathrl/gomlx_trainer/sampler"
)

// TestBuckets checks the sampler's allocation rules that the plan relies on: the cache
// grows through powers of two from 64 to 2048, then multiples of 2048, never
// past the capacity; chunks pad to 1 or a power of two from 16.
func TestBuckets(t *testing.T) {
	var lengths []int
	for n := 1; n <= 8192; n++ {
		if b := sampler.CacheBucket(n, sampler.DefaultCapacity(8192)); len(lengths) == 0 || lengths[len(lengths)-1] != b {
			lengths = append(lengths, b)
		}
	}
	if want := []int{64, 128, 256, 512, 1024, 2048, 4096, 6144, 8192}; !slices.Equal(lengths, want) {
		t.Errorf("cache lengths up to 8192 tokens %v, want %v", lengths, want)
	}
	for _, tc := range []struct{ n, capacity, want int }{
		{1, 64, 64}, {65, 1024, 128}, {2048, 4096, 2048}, {2049, 4096, 4096}, {5120, 8192, 6144},
		{10240, 16384, 10240}, {18432, 32768, 18432}, {300, 256, 256},
	} {
		if got := sampler.CacheBucket(tc.n, tc.capacity); got != tc.want {
			t.Errorf("sampler.CacheBucket(%d, %d) = %d, want %d", tc.n, tc.capacity, got, tc.want)
		}
	}
	for _, tc := range []struct{ n, want int }{{0, 1}, {1, 1}, {2, 16}, {16, 16}, {17, 32}, {300, 512}, {512, 512}} {
		if got := sampler.ChunkBucket(tc.n); got != tc.want {
			t.Errorf("sampler.ChunkBucket(%d) = %d, want %d", tc.n, got, tc.want)
		}
	}
	if got := sampler.DefaultCapacity(5120); got != 8192 {
		t.Errorf("sampler.DefaultCapacity(5120) = %d, want 8192", got)
	}
}
