package seeding

import (
	"math"
	"testing"
)

// TestSequenceSeedsFitAnInt64: every sequence seed is below 2^63 (servers
// keep seeds in an int64), and neighbours differ.
func TestSequenceSeedsFitAnInt64(t *testing.T) {
	seen := map[uint64]bool{}
	for _, seed := range []uint64{0, 1, math.MaxUint64} {
		for i := range 1000 {
			s := SequenceSeed(seed, i)
			if s >= 1<<63 || seen[s] {
				t.Fatalf("SequenceSeed(%d, %d) = %d: past 2^63 or repeated", seed, i, s)
			}
			seen[s] = true
		}
	}
}
