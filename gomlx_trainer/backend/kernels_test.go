package backend

import (
	"os"
	"runtime"
	"strings"
	"testing"
)

// TestGoKernelsFollowTheCPU checks GoKernels, in the build at hand, against
// the CPU's flags as Linux reports them in /proc/cpuinfo and against
// compute's switches for each kernel width.
func TestGoKernelsFollowTheCPU(t *testing.T) {
	info, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		t.Skipf("no /proc/cpuinfo: %v", err)
	}
	flags := map[string]bool{}
	for _, line := range strings.Split(string(info), "\n") {
		if name, value, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(name) == "flags" {
			for _, f := range strings.Fields(value) {
				flags[f] = true
			}
			break
		}
	}
	avx512 := flags["avx512f"] && flags["avx512cd"] && flags["avx512bw"] && flags["avx512dq"] && flags["avx512vl"]
	simd := SIMD && runtime.GOARCH == "amd64"
	t.Logf("SIMD build %v, AVX2 %v, AVX-512 %v", SIMD, flags["avx2"], avx512)
	for _, tc := range []struct{ avx512, avx2 string }{{"", ""}, {"false", ""}, {"", "false"}, {"false", "false"}, {"true", "1"}} {
		t.Setenv("GOMLX_GO_SIMD_AVX512", tc.avx512)
		t.Setenv("GOMLX_GO_SIMD_AVX2", tc.avx2)
		want := KernelsGo
		switch {
		case simd && tc.avx512 != "false" && avx512:
			want = KernelsAVX512
		case simd && tc.avx2 != "false" && flags["avx2"]:
			want = KernelsAVX2
		}
		if got := GoKernels(); got != want {
			t.Errorf("GOMLX_GO_SIMD_AVX512=%q GOMLX_GO_SIMD_AVX2=%q: GoKernels() = %q, want %q", tc.avx512, tc.avx2, got, want)
		}
	}
}
