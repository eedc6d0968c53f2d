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

// TestGoKernelsSwitchSpellings checks that GoKernels reads compute's switches
// as compute does (envutil.ReadBool): any case of 0/false/f/no/off/disabled
// turns a width off like "false", any true spelling leaves it on like unset,
// and a value that is not a boolean leaves it on too (compute refuses such a
// value when the process starts). Each spelling is compared with "false" and
// with the unset switch, so the test holds on any CPU and in any build.
func TestGoKernelsSwitchSpellings(t *testing.T) {
	for _, name := range []string{"GOMLX_GO_SIMD_AVX512", "GOMLX_GO_SIMD_AVX2"} {
		t.Setenv("GOMLX_GO_SIMD_AVX512", "")
		t.Setenv("GOMLX_GO_SIMD_AVX2", "")
		if name == "GOMLX_GO_SIMD_AVX2" {
			t.Setenv("GOMLX_GO_SIMD_AVX512", "false") // the AVX2 switch decides only without AVX-512
		}
		t.Setenv(name, "false")
		off := GoKernels()
		t.Setenv(name, "")
		on := GoKernels()
		for _, tc := range []struct {
			value string
			want  string
		}{
			{"0", off}, {"FALSE", off}, {"f", off}, {"No", off}, {"off", off}, {"disabled", off},
			{"1", on}, {"TRUE", on}, {"yes", on}, {"On", on}, {"enabled", on}, {"maybe", on},
		} {
			t.Setenv(name, tc.value)
			if got := GoKernels(); got != tc.want {
				t.Errorf("%s=%q: GoKernels() = %q, want %q (%q with it off, %q with it unset)", name, tc.value, got, tc.want, off, on)
			}
		}
	}
}
