package backend

import (
	"fmt"
	"io"
	"strings"
)

// Report writes, for `mathrl doctor`, what --backend auto would choose and why:
// the plugin, the NVIDIA library folders, ptxas and libdevice, and whether the
// CPU backend opens.
func Report(w io.Writer) error {
	return report(w, RealHost())
}

func report(w io.Writer, h Host) error {
	p, err := Resolve(Options{Kind: Auto}, h)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "--backend auto: %s (GOMLX_BACKEND=%s)\n", p.Kind, p.Config)
	for _, line := range p.Why {
		fmt.Fprintf(w, "  %s\n", line)
	}
	none := func(s string) string {
		if s == "" {
			return "not found"
		}
		return s
	}
	f := p.Found
	fmt.Fprintf(w, "PJRT CUDA plugin: %s\n", none(f.Plugin))
	fmt.Fprintf(w, "NVIDIA library folders: %d %s\n", len(f.LibDirs), strings.Join(f.LibDirs, ":"))
	fmt.Fprintf(w, "ptxas folder: %s\n", none(f.PtxasDir))
	fmt.Fprintf(w, "libdevice (XLA_FLAGS --xla_gpu_cuda_data_dir): %s\n", none(f.CUDADataDir))
	if b, err := newWithConfig(CPUConfig); err != nil {
		fmt.Fprintf(w, "CPU backend %s: failed: %v\n", CPUConfig, err)
	} else {
		fmt.Fprintf(w, "CPU backend %s: ok (%s)\n", CPUConfig, b.Description())
		b.Finalize()
	}
	fmt.Fprintf(w, "CPU backend's AVX2/AVX-512 matmuls (a build with GOEXPERIMENT=simd): %s\n", map[bool]string{true: "yes", false: "no"}[SIMD])
	fmt.Fprintf(w, "  %s\n", SIMDAdvice)
	return nil
}
