package backend

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"

	"github.com/gomlx/compute"
	_ "github.com/gomlx/compute/gobackend" // the pure Go backend
	"github.com/gomlx/go-xla/compute/xla"  // XLA through a PJRT plugin (dlopen'ed; nothing is linked)
	"github.com/gomlx/go-xla/pjrt"

	"github.com/mathrl/mathrl/gomlx_trainer/layout"
)

// The backend kinds accepted by --backend.
const (
	CPU    = "cpu"     // GoMLX's pure Go backend, sequential ops
	XLACPU = "xla-cpu" // XLA's CPU compiler through a PJRT CPU plugin
	CUDA   = "cuda"    // XLA through a PJRT CUDA plugin
	Auto   = "auto"    // CUDA when a plugin and an NVIDIA driver are found, else xla-cpu when its plugin is found, else cpu
)

// Kinds lists the backend kinds, for flag help and errors.
const Kinds = "cpu, xla-cpu, cuda or auto"

// CPUConfig is the GOMLX_BACKEND value for the CPU: the pure Go backend with
// sequential ops (its parallel mode deadlocks on small machines, v0.26 and
// v0.28.2 alike), run in the order the graph created them (v0.28's default
// order keeps more buffers alive: with it, recomputed layers and chunked
// log-probs save half as much memory; see docs/gomlx.md).
const CPUConfig = "go:ops_sequential,creation_order"

// reexecMarker is set in the environment of the process re-executed with a new
// LD_LIBRARY_PATH, so that it never re-executes again.
const reexecMarker = "MATHRL_BACKEND_REEXEC"

// Options chooses a backend.
type Options struct {
	Kind string // CPU, XLACPU, CUDA or Auto ("" is Auto)
	// PJRTPlugin is --pjrt-plugin: the plugin of the kind chosen (the CUDA
	// plugin for cuda and auto, the CPU plugin for xla-cpu); it overrides
	// MATHRL_PJRT_PLUGIN or MATHRL_PJRT_CPU_PLUGIN and discovery.
	PJRTPlugin string
	// NumDevices is the devices the backend must have (num_devices; 0 or 1:
	// one). xla-cpu opens its plugin with that many CPU devices; cuda must see
	// at least that many GPUs; cpu has one.
	NumDevices int
}

// Plan is a resolved choice: the GoMLX backend configuration and the
// environment it needs, with the reasons, for `mathrl doctor`.
type Plan struct {
	Kind      string            // CPU, XLACPU or CUDA
	Config    string            // the GOMLX_BACKEND value: CPUConfig, "xla:/abs/cpu_plugin.so" or "xla:/abs/xla_cuda_plugin.so,"+CUDAOptions
	Found     Found             // what discovery found (CUDA)
	CPUPlugin string            // the PJRT CPU plugin found (xla-cpu), "" when none
	Env       map[string]string // variables to set before the plugin loads
	Why       []string          // how the choice was made, one line each
	// Fallback says, in one line, why auto fell back to the pure Go backend
	// where it would have used XLA's CPU compiler; "" otherwise.
	Fallback string
}

// Line is the one line a command prints about the backend it opened.
func (p Plan) Line() string {
	if p.Fallback != "" {
		return fmt.Sprintf("backend: %s (%s): %s", p.Kind, p.Config, p.Fallback)
	}
	return fmt.Sprintf("backend: %s (%s)", p.Kind, p.Config)
}

// Host is what Resolve reads from the machine; tests replace it.
type Host struct {
	Getenv       func(string) string
	SitePackages func() []string // python3's site-packages folders, in search order
	CacheDirs    func() []string // the project caches (.cache folders) to look in for the CPU plugin
	HasNVIDIA    func() bool     // an NVIDIA driver is loaded
}

// RealHost reads the running machine.
func RealHost() Host {
	return Host{Getenv: os.Getenv, SitePackages: SitePackages, CacheDirs: CacheDirs, HasNVIDIA: hasNVIDIA}
}

// Resolve turns options into a plan without changing anything.
func Resolve(opts Options, h Host) (Plan, error) {
	kind := opts.Kind
	if kind == "" {
		kind = Auto
	}
	switch kind {
	case CPU:
		return cpuPlan("--backend cpu: GoMLX pure Go backend"), nil
	case XLACPU:
		return resolveXLACPU(opts.PJRTPlugin, h)
	case CUDA, Auto:
		return resolveCUDA(kind, opts.PJRTPlugin, h)
	}
	return Plan{}, fmt.Errorf("backend: unknown backend %q (%s)", kind, Kinds)
}

func cpuPlan(why ...string) Plan {
	return Plan{Kind: CPU, Config: CPUConfig, Why: why, Env: map[string]string{"GOMLX_NO_AUTO_INSTALL": "1"}}
}

// resolveXLACPU plans XLA's CPU compiler: the plugin from the flag, else
// MATHRL_PJRT_CPU_PLUGIN, else the first one FindCPUPlugin finds.
func resolveXLACPU(flag string, h Host) (Plan, error) {
	plugin, why, err := cpuPlugin(flag, h)
	if err != nil {
		return Plan{Why: why}, err
	}
	if plugin == "" {
		return Plan{Why: why}, fmt.Errorf("backend: --backend xla-cpu: no PJRT CPU plugin: %s; "+
			"pass --pjrt-plugin, set MATHRL_PJRT_CPU_PLUGIN, or run `bash scripts/setup.sh` (it installs %s under .cache/); nothing is downloaded",
			strings.Join(why, "; "), CPUPluginPackage)
	}
	return xlaCPUPlan(plugin, why), nil
}

func xlaCPUPlan(plugin string, why []string) Plan {
	return Plan{Kind: XLACPU, Config: "xla:" + plugin, CPUPlugin: plugin, Why: why,
		Env: map[string]string{"GOMLX_NO_AUTO_INSTALL": "1"}}
}

// cpuPlugin finds the PJRT CPU plugin; it returns "" (and no error) when there
// is none, with what was tried in why.
func cpuPlugin(flag string, h Host) (plugin string, why []string, err error) {
	source := "--pjrt-plugin"
	if flag == "" {
		flag, source = h.Getenv("MATHRL_PJRT_CPU_PLUGIN"), "MATHRL_PJRT_CPU_PLUGIN"
	}
	if flag != "" {
		p, err := pluginFile(source, flag)
		if err != nil {
			return "", nil, err
		}
		return p, []string{fmt.Sprintf("CPU plugin from %s: %s", source, p)}, nil
	}
	var cache []string
	if h.CacheDirs != nil {
		cache = h.CacheDirs()
	}
	var sites []string
	if h.SitePackages != nil {
		sites = h.SitePackages()
	}
	if p := FindCPUPlugin(cache, sites); p != "" {
		return p, []string{"CPU plugin found: " + p}, nil
	}
	return "", []string{fmt.Sprintf("no %s in the project caches %v nor in python3 site-packages %v",
		CPUPluginRelPath, cache, sites)}, nil
}

// pluginFile makes a plugin path absolute and checks that it is a file.
func pluginFile(source, path string) (string, error) {
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	if st, err := os.Stat(path); err != nil || st.IsDir() {
		return "", fmt.Errorf("backend: %s %s: not a file", source, path)
	}
	return path, nil
}

// resolveCUDA plans CUDA, or for auto whatever the machine has.
func resolveCUDA(kind, flag string, h Host) (Plan, error) {
	var why []string
	plugin, source := flag, "--pjrt-plugin"
	if plugin == "" {
		plugin, source = h.Getenv("MATHRL_PJRT_PLUGIN"), "MATHRL_PJRT_PLUGIN"
	}
	var found Found
	if plugin != "" {
		p, err := pluginFile(source, plugin)
		if err != nil {
			return Plan{}, err
		}
		why = append(why, fmt.Sprintf("plugin from %s: %s", source, p))
		// The libraries still come from site-packages when the plugin lives there.
		found = Discover(h.SitePackages())
		found.Plugin = p
	} else {
		sites := h.SitePackages()
		found = Discover(sites)
		if found.Plugin == "" {
			why = append(why, fmt.Sprintf("no jax_plugins/xla_cuda*/xla_cuda_plugin.so under python3 site-packages %v", sites))
		} else {
			why = append(why, "plugin found in site-packages: "+found.Plugin)
		}
	}
	nvidia := h.HasNVIDIA()
	if kind == Auto {
		if found.Plugin == "" || !nvidia {
			if !nvidia {
				why = append(why, "no NVIDIA driver (/proc/driver/nvidia/version)")
			}
			return resolveAutoCPU(found, why, h)
		}
		why = append(why, "--backend auto: using CUDA")
	}
	if found.Plugin == "" {
		return Plan{Found: found, Why: why}, errors.New("backend: --backend cuda: no PJRT CUDA plugin: pass --pjrt-plugin, " +
			"set MATHRL_PJRT_PLUGIN, or install JAX's CUDA plugin (jax-cuda13-pjrt) for python3; nothing is downloaded")
	}
	if !nvidia {
		why = append(why, "warning: no NVIDIA driver seen; the plugin will fail to find a device")
	}
	env := cudaEnv(found, h.Getenv)
	return Plan{Kind: CUDA, Config: "xla:" + found.Plugin + "," + CUDAOptions, Found: found, Env: env, Why: why}, nil
}

// resolveAutoCPU is auto without CUDA: XLA's CPU compiler when its plugin is
// found, else the pure Go backend, with the line that says why.
func resolveAutoCPU(found Found, why []string, h Host) (Plan, error) {
	plugin, more, err := cpuPlugin("", h)
	if err != nil {
		return Plan{}, err
	}
	why = append(why, more...)
	if plugin != "" {
		p := xlaCPUPlan(plugin, append(why, "--backend auto: using xla-cpu"))
		p.Found = found
		return p, nil
	}
	p := cpuPlan(append(why, "--backend auto: using the CPU (pure Go)")...)
	p.Found = found
	p.Fallback = "XLA's CPU plugin is not installed, so the pure Go backend runs (`bash scripts/setup.sh` installs " + CPUPluginPackage + ")"
	return p, nil
}

// cudaEnv is the environment the CUDA plugin needs (see Found).
func cudaEnv(f Found, getenv func(string) string) map[string]string {
	env := map[string]string{"GOPJRT_CUDA_CHECKS": "0", "GOMLX_NO_AUTO_INSTALL": "1"}
	if len(f.LibDirs) > 0 {
		env["LD_LIBRARY_PATH"] = prependPaths(getenv("LD_LIBRARY_PATH"), f.LibDirs)
	}
	if f.PtxasDir != "" {
		env["PATH"] = prependPaths(getenv("PATH"), []string{f.PtxasDir})
	}
	if f.CUDADataDir != "" {
		flags := getenv("XLA_FLAGS")
		if !strings.Contains(flags, "--xla_gpu_cuda_data_dir") {
			flags = strings.TrimSpace(flags + " --xla_gpu_cuda_data_dir=" + f.CUDADataDir)
		}
		env["XLA_FLAGS"] = flags
	}
	return env
}

// prependPaths puts dirs (those not already there) in front of a colon-separated list.
func prependPaths(list string, dirs []string) string {
	have := strings.Split(list, ":")
	var add []string
	for _, d := range dirs {
		if !slices.Contains(have, d) && !slices.Contains(add, d) {
			add = append(add, d)
		}
	}
	if list == "" {
		return strings.Join(add, ":")
	}
	if len(add) == 0 {
		return list
	}
	return strings.Join(add, ":") + ":" + list
}

// Found is what discovery found under site-packages.
type Found struct {
	Plugin      string   // jax_plugins/xla_cuda*/xla_cuda_plugin.so
	LibDirs     []string // every nvidia/*/lib folder (CUDA runtime, cuDNN, cuBLAS, NCCL...)
	PtxasDir    string   // the folder holding ptxas (nvidia/cu13/bin or nvidia/cuda_nvcc/bin)
	CUDADataDir string   // the folder holding nvvm/libdevice/libdevice.10.bc
}

// Discover looks for JAX's CUDA PJRT plugin and the NVIDIA wheels' folders under
// each site-packages folder, in order. Of several plugins the one for the
// newest CUDA wins (jax_plugins/xla_cuda13 over xla_cuda12, wherever each is),
// the earlier folder among plugins for the same CUDA; the library folders come
// from every site-packages folder.
func Discover(sitePackages []string) Found {
	var f Found
	newest := -1
	for _, sp := range sitePackages {
		plugins, _ := filepath.Glob(filepath.Join(sp, "jax_plugins", "xla_cuda*", "xla_cuda_plugin.so"))
		for _, p := range plugins {
			if v := pluginCUDA(p); v > newest {
				f.Plugin, newest = p, v
			}
		}
		libs, _ := filepath.Glob(filepath.Join(sp, "nvidia", "*", "lib"))
		sort.Strings(libs)
		for _, l := range libs {
			if st, err := os.Stat(l); err == nil && st.IsDir() && !slices.Contains(f.LibDirs, l) {
				f.LibDirs = append(f.LibDirs, l)
			}
		}
		if f.PtxasDir == "" {
			for _, sub := range []string{"cu13", "cuda_nvcc", "cu12"} {
				if isFile(filepath.Join(sp, "nvidia", sub, "bin", "ptxas")) {
					f.PtxasDir = filepath.Join(sp, "nvidia", sub, "bin")
					break
				}
			}
		}
		if f.CUDADataDir == "" {
			cands, _ := filepath.Glob(filepath.Join(sp, "nvidia", "*", "nvvm", "libdevice", "libdevice.10.bc"))
			sort.Strings(cands)
			for _, c := range cands {
				f.CUDADataDir = filepath.Dir(filepath.Dir(filepath.Dir(c)))
				if strings.HasSuffix(f.CUDADataDir, "cu13") || strings.HasSuffix(f.CUDADataDir, "cuda_nvcc") {
					break
				}
			}
		}
	}
	return f
}

// pluginCUDA is the CUDA major version in the folder name of a plugin,
// jax_plugins/xla_cudaN/xla_cuda_plugin.so: N, or 0 when the name has none.
func pluginCUDA(plugin string) int {
	v, err := strconv.Atoi(strings.TrimPrefix(filepath.Base(filepath.Dir(plugin)), "xla_cuda"))
	if err != nil || v < 0 {
		return 0
	}
	return v
}

func isFile(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir()
}

// SitePackages asks python3 for its site-packages folders (global then user).
// It returns nil when python3 is missing; it never installs anything.
func SitePackages() []string {
	py, err := exec.LookPath("python3")
	if err != nil {
		return nil
	}
	out, err := exec.Command(py, "-c",
		"import site,sys\nfor p in site.getsitepackages()+[site.getusersitepackages()]: print(p)").Output()
	if err != nil {
		return nil
	}
	var dirs []string
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if line = strings.TrimSpace(line); line != "" {
			if st, err := os.Stat(line); err == nil && st.IsDir() {
				dirs = append(dirs, line)
			}
		}
	}
	return dirs
}

func hasNVIDIA() bool {
	_, err := os.Stat("/proc/driver/nvidia/version")
	return err == nil
}

// Apply sets the plan's environment in this process. LD_LIBRARY_PATH is read
// by the dynamic loader only at process start, so when it must change Apply
// re-executes the program once with the new environment (it does not return
// then); the re-executed process finds the variables set and goes on.
func Apply(p Plan) error {
	needReexec := false
	for k, v := range p.Env {
		if k == "LD_LIBRARY_PATH" && os.Getenv(k) != v {
			needReexec = true
		}
		if err := os.Setenv(k, v); err != nil {
			return fmt.Errorf("backend: %w", err)
		}
	}
	if err := os.Setenv(compute.ConfigEnvVar, p.Config); err != nil {
		return fmt.Errorf("backend: %w", err)
	}
	if needReexec && os.Getenv(reexecMarker) == "" {
		self, err := os.Executable()
		if err != nil {
			return fmt.Errorf("backend: re-exec for LD_LIBRARY_PATH: %w", err)
		}
		os.Setenv(reexecMarker, "1")
		err = syscall.Exec(self, os.Args, os.Environ())
		return fmt.Errorf("backend: re-exec %s for LD_LIBRARY_PATH: %w", self, err)
	}
	return nil
}

// SIMDAdvice is what a binary built without GOEXPERIMENT=simd advises: GoMLX's
// Go backend has its AVX2/AVX-512 kernels only in a SIMD build, which
// scripts/build.sh makes (measured with GoMLX v0.28.16, with the Go backend's
// fused attention off; see docs/gomlx.md). The planner's CPU rules count the
// SIMD kernels' workspace in a SIMD build.
const SIMDAdvice = "built without GOEXPERIMENT=simd: build with it (scripts/build.sh does) for GoMLX's AVX2/AVX-512 kernels, " +
	"2.4-8x faster at the CPU demo's shapes; mathrl plan's CPU memory figures are those of the build that runs it"

// New resolves the options, applies the plan (it becomes this process's
// backend, see Apply) and opens the backend.
func New(opts Options) (compute.Backend, Plan, error) {
	return newBackend(opts, true)
}

// newBackend resolves opts and opens the backend, first applying the plan
// to the process's environment when apply is set.
func newBackend(opts Options, apply bool) (compute.Backend, Plan, error) {
	p, err := Resolve(opts, RealHost())
	if err != nil {
		return nil, p, err
	}
	if p.Kind == CPU {
		if err := layout.CheckOneDevice(backendNames, opts.NumDevices, "on the pure Go backend (cpu)",
			"--backend xla-cpu (its CPU plugin opens as many devices as asked) or cuda"); err != nil {
			return nil, p, err
		}
	}
	if apply {
		if err := Apply(p); err != nil {
			return nil, p, err
		}
	}
	b, err := open(p, opts.NumDevices)
	if err != nil {
		if p.Kind == XLACPU {
			return nil, p, fmt.Errorf("backend: --backend xla-cpu: cannot load the PJRT CPU plugin %s (%s): %w",
				p.CPUPlugin, strings.Join(p.Why, "; "), err)
		}
		return nil, p, fmt.Errorf("backend: %s: %w", p.Config, err)
	}
	if err := checkDevices(p.Kind, b.NumDevices(), opts.NumDevices); err != nil {
		b.Finalize()
		return nil, p, err
	}
	return b, p, nil
}

// NewHost opens a backend on the host CPU for work moved off the device
// (optimizer_cpu_offload): XLA's CPU compiler where its plugin is found,
// else the pure Go backend (the plan's Fallback says why). It leaves the
// process's environment alone: GOMLX_BACKEND still names the device's
// backend, for whatever opens a backend from it later.
func NewHost() (compute.Backend, Plan, error) {
	b, p, err := newBackend(Options{Kind: XLACPU}, false)
	if err == nil {
		return b, p, nil
	}
	b, p, cpuErr := newBackend(Options{Kind: CPU}, false)
	if cpuErr != nil {
		return nil, p, cpuErr
	}
	p.Fallback = fmt.Sprintf("the host backend is the pure Go backend: %v", err)
	return b, p, nil
}

// backendNames name the knobs in the errors of the layout checks.
var backendNames = layout.Names{Prefix: "backend:", Devices: "num_devices", Sharding: "sharding"}

// checkDevices refuses num_devices want on a backend of kind with have
// devices (layout.CheckHave).
func checkDevices(kind string, have, want int) error {
	return layout.CheckHave(backendNames, want, have, "the "+kind+" backend")
}

// CUDAOptions are the XLA backend's options for the CUDA plugin, written after
// the plugin's path in the GOMLX_BACKEND value: no preallocation, so that the
// device's memory is taken as a run needs it (and the stages of a check share
// it), under a ceiling of 97% of the device instead of XLA's default 75%, which
// is too little for the seed recipes (see `mathrl plan`). GoMLX's XLA backend
// passes them to the PJRT client as its create options.
const CUDAOptions = "preallocate=false,memory_fraction=0.97"

// CPUDeviceCountOption is the PJRT create option that sets how many devices
// XLA's CPU plugin opens. GoMLX's configuration string cannot carry it (the
// plugin rejects unknown options given there), so open passes it through
// xla.NewWithOptions.
const CPUDeviceCountOption = "cpu_device_count"

// open opens the backend of a plan by its configuration, on xla-cpu with
// numDevices CPU devices when more than one is asked.
func open(p Plan, numDevices int) (compute.Backend, error) {
	if p.Kind == XLACPU && numDevices > 1 {
		return newXLACPU(p.CPUPlugin, numDevices)
	}
	return newWithConfig(p.Config)
}

// newXLACPU opens XLA's CPU plugin with n devices, turning its panics into
// errors.
func newXLACPU(plugin string, n int) (b compute.Backend, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%v", r)
		}
	}()
	xb, err := xla.NewWithOptions(plugin, pjrt.NamedValuesMap{CPUDeviceCountOption: int64(n)})
	if err != nil {
		return nil, err // not xb: a nil *xla.Backend is a non-nil compute.Backend
	}
	return xb, nil
}

// newWithConfig opens a GoMLX backend, turning its panics into errors.
func newWithConfig(config string) (b compute.Backend, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%v", r)
		}
	}()
	return compute.NewWithConfig(config)
}

// OnCUDA reports whether b runs on XLA's CUDA plugin (its description names
// the plugin, through any wrapper that passes it on).
func OnCUDA(b compute.Backend) bool {
	return b != nil && strings.Contains(strings.ToLower(b.Description()), "cuda")
}
