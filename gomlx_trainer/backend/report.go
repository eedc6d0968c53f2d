package backend

import (
	"fmt"
	"io"
	"regexp"
	"strings"

	"github.com/gomlx/compute"
	"github.com/gomlx/go-xla/pjrt"
)

// Report writes, for `mathrl doctor`, what --backend auto would choose and why:
// the CUDA plugin, the NVIDIA library folders, ptxas and libdevice; the XLA CPU
// plugin with its PJRT API version and device count; and whether the pure Go
// backend opens.
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
	reportXLACPU(w, h)
	if b, err := newWithConfig(CPUConfig); err != nil {
		fmt.Fprintf(w, "CPU backend %s: failed: %v\n", CPUConfig, err)
	} else {
		fmt.Fprintf(w, "CPU backend %s: ok (%s)\n", CPUConfig, b.Description())
		b.Finalize()
	}
	fmt.Fprintf(w, "CPU backend's matrix-product kernels: %s (GOEXPERIMENT=simd build: %v)\n", GoKernels(), SIMD)
	if !SIMD {
		fmt.Fprintf(w, "  %s\n", SIMDAdvice)
	}
	return nil
}

// reportXLACPU writes the XLA CPU plugin found, its PJRT C API version and its
// device count, or why there is none.
func reportXLACPU(w io.Writer, h Host) {
	plugin, why, err := cpuPlugin("", h)
	switch {
	case err != nil:
		fmt.Fprintf(w, "XLA CPU plugin (--backend xla-cpu): %v\n", err)
		return
	case plugin == "":
		fmt.Fprintf(w, "XLA CPU plugin (--backend xla-cpu): not found: %s\n", strings.Join(why, "; "))
		return
	}
	fmt.Fprintf(w, "XLA CPU plugin (--backend xla-cpu): %s\n", plugin)
	major, minor, err := pluginVersion(plugin)
	if err != nil {
		fmt.Fprintf(w, "  cannot load it: %v\n", err)
		return
	}
	b, err := newWithConfig("xla:" + plugin)
	if err != nil {
		fmt.Fprintf(w, "  PJRT C API %d.%d; cannot open a client: %v\n", major, minor, err)
		return
	}
	fmt.Fprintf(w, "  PJRT C API %d.%d, %d device(s): ok\n", major, minor, b.NumDevices())
	b.Finalize()
}

// pluginVersion loads a PJRT plugin and returns its C API version.
func pluginVersion(path string) (major, minor int, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%v", r)
		}
	}()
	p, err := pjrt.GetPlugin(path)
	if err != nil {
		return 0, 0, err
	}
	major, minor = p.Version()
	return major, minor, nil
}

// pluginPath matches an absolute path to a shared library in a backend's
// description.
var pluginPath = regexp.MustCompile(`/[^\s,()]*/([^/\s,()]+\.so)`)

// Describe is b's description with each plugin path cut to the file's name,
// so that what a run records names the plugin, not the machine's folders.
func Describe(b compute.Backend) string {
	return pluginPath.ReplaceAllString(b.Description(), "$1")
}
