package backend

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gomlx/compute"
)

// fakeSite builds a site-packages folder laid out as JAX's jax-cuda13-pjrt and
// the NVIDIA CUDA 13 wheels lay it out.
func fakeSite(t *testing.T) string {
	t.Helper()
	sp := filepath.Join(t.TempDir(), "lib", "python3.12", "site-packages")
	for _, f := range []string{
		"jax_plugins/xla_cuda13/xla_cuda_plugin.so",
		"jax_plugins/xla_cuda13/__init__.py",
		"nvidia/cu13/lib/libcudart.so.13",
		"nvidia/cu13/bin/ptxas",
		"nvidia/cu13/nvvm/libdevice/libdevice.10.bc",
		"nvidia/cudnn/lib/libcudnn.so.9",
		"nvidia/nccl/lib/libnccl.so.2",
		"nvidia/__init__.py",
	} {
		p := filepath.Join(sp, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, nil, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return sp
}

func fakeHost(env map[string]string, sites []string, nvidia bool) Host {
	return Host{
		Getenv:       func(k string) string { return env[k] },
		SitePackages: func() []string { return sites },
		HasNVIDIA:    func() bool { return nvidia },
	}
}

func TestDiscover(t *testing.T) {
	sp := fakeSite(t)
	f := Discover([]string{filepath.Join(t.TempDir(), "empty"), sp})
	if f.Plugin != filepath.Join(sp, "jax_plugins/xla_cuda13/xla_cuda_plugin.so") {
		t.Errorf("plugin %q", f.Plugin)
	}
	want := []string{filepath.Join(sp, "nvidia/cu13/lib"), filepath.Join(sp, "nvidia/cudnn/lib"), filepath.Join(sp, "nvidia/nccl/lib")}
	if strings.Join(f.LibDirs, ":") != strings.Join(want, ":") {
		t.Errorf("lib dirs %v, want %v", f.LibDirs, want)
	}
	if f.PtxasDir != filepath.Join(sp, "nvidia/cu13/bin") || f.CUDADataDir != filepath.Join(sp, "nvidia/cu13") {
		t.Errorf("ptxas %q, cuda data dir %q", f.PtxasDir, f.CUDADataDir)
	}
}

func TestResolve(t *testing.T) {
	sp := fakeSite(t)
	plugin := filepath.Join(sp, "jax_plugins/xla_cuda13/xla_cuda_plugin.so")
	env := map[string]string{"LD_LIBRARY_PATH": "/usr/local/lib", "PATH": "/usr/bin", "XLA_FLAGS": "--xla_dump_to=/tmp/x"}

	p, err := Resolve(Options{Kind: Auto}, fakeHost(env, []string{sp}, true))
	if err != nil {
		t.Fatal(err)
	}
	if p.Kind != CUDA || p.Config != "xla:"+plugin+","+CUDAOptions {
		t.Fatalf("auto with plugin and driver: %+v", p)
	}
	if !strings.HasPrefix(p.Env["LD_LIBRARY_PATH"], filepath.Join(sp, "nvidia/cu13/lib")+":") ||
		!strings.HasSuffix(p.Env["LD_LIBRARY_PATH"], ":/usr/local/lib") {
		t.Errorf("LD_LIBRARY_PATH %q", p.Env["LD_LIBRARY_PATH"])
	}
	if p.Env["PATH"] != filepath.Join(sp, "nvidia/cu13/bin")+":/usr/bin" {
		t.Errorf("PATH %q", p.Env["PATH"])
	}
	if p.Env["XLA_FLAGS"] != "--xla_dump_to=/tmp/x --xla_gpu_cuda_data_dir="+filepath.Join(sp, "nvidia/cu13") {
		t.Errorf("XLA_FLAGS %q", p.Env["XLA_FLAGS"])
	}
	if p.Env["GOPJRT_CUDA_CHECKS"] != "0" || p.Env["GOMLX_NO_AUTO_INSTALL"] != "1" {
		t.Errorf("env %v", p.Env)
	}

	// Auto without a driver, or without a plugin, is the CPU.
	for _, h := range []Host{fakeHost(env, []string{sp}, false), fakeHost(env, nil, true)} {
		p, err := Resolve(Options{}, h)
		if err != nil || p.Kind != CPU || p.Config != CPUConfig {
			t.Errorf("auto: %+v, %v", p, err)
		}
	}
	// cuda without a plugin is an error that says what to do.
	if _, err := Resolve(Options{Kind: CUDA}, fakeHost(env, nil, true)); err == nil || !strings.Contains(err.Error(), "--pjrt-plugin") {
		t.Errorf("cuda without plugin: %v", err)
	}
	// The flag beats the variable, which beats discovery.
	other := filepath.Join(t.TempDir(), "my_plugin.so")
	os.WriteFile(other, nil, 0o644)
	envWith := map[string]string{"MATHRL_PJRT_PLUGIN": plugin}
	p, err = Resolve(Options{Kind: CUDA, PJRTPlugin: other}, fakeHost(envWith, []string{sp}, true))
	if err != nil || p.Config != "xla:"+other+","+CUDAOptions {
		t.Errorf("flag: %+v, %v", p, err)
	}
	p, err = Resolve(Options{Kind: CUDA}, fakeHost(map[string]string{"MATHRL_PJRT_PLUGIN": other}, []string{sp}, true))
	if err != nil || p.Config != "xla:"+other+","+CUDAOptions {
		t.Errorf("variable: %+v, %v", p, err)
	}
	if _, err := Resolve(Options{Kind: CUDA, PJRTPlugin: "/no/such/plugin.so"}, fakeHost(nil, nil, true)); err == nil {
		t.Error("missing plugin file: no error")
	}
	if _, err := Resolve(Options{Kind: "tpu"}, fakeHost(nil, nil, true)); err == nil {
		t.Error("unknown kind: no error")
	}
	// cpu never looks for plugins.
	p, err = Resolve(Options{Kind: CPU}, fakeHost(env, []string{sp}, true))
	if err != nil || p.Config != CPUConfig {
		t.Errorf("cpu: %+v, %v", p, err)
	}
}

func TestPrependPaths(t *testing.T) {
	for _, tc := range []struct {
		list string
		dirs []string
		want string
	}{
		{"", []string{"/a", "/b"}, "/a:/b"},
		{"/x", []string{"/a"}, "/a:/x"},
		{"/a:/x", []string{"/a", "/b"}, "/b:/a:/x"},
		{"/a", []string{"/a"}, "/a"},
	} {
		if got := prependPaths(tc.list, tc.dirs); got != tc.want {
			t.Errorf("prependPaths(%q, %v) = %q, want %q", tc.list, tc.dirs, got, tc.want)
		}
	}
}

func TestReport(t *testing.T) {
	sp := fakeSite(t)
	var buf bytes.Buffer
	if err := report(&buf, fakeHost(nil, []string{sp}, false)); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{"--backend auto: cpu", "no NVIDIA driver", "xla_cuda_plugin.so", "NVIDIA library folders: 3", "CPU backend " + CPUConfig + ": ok", "XLA CPU plugin (--backend xla-cpu): not found", "CPU backend's matrix-product kernels: " + GoKernels()} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
	if advised := strings.Contains(out, SIMDAdvice); advised == SIMD {
		t.Errorf("a build with SIMD %v advises building with it: %v\n%s", SIMD, advised, out)
	}
}

// TestApplyReexecsOnce runs this test binary as a child that applies a plan
// changing LD_LIBRARY_PATH: the child must re-execute itself once and then see
// the new value (the dynamic loader reads it only at start).
func TestApplyReexecsOnce(t *testing.T) {
	if os.Getenv("MATHRL_TEST_APPLY_CHILD") == "1" {
		p := Plan{Kind: CPU, Config: CPUConfig, Env: map[string]string{"LD_LIBRARY_PATH": "/fake/nvidia/cu13/lib"}}
		if err := Apply(p); err != nil {
			fmt.Println("apply error:", err)
			os.Exit(2)
		}
		fmt.Printf("child: LD_LIBRARY_PATH=%s reexec=%s GOMLX_BACKEND=%s\n",
			os.Getenv("LD_LIBRARY_PATH"), os.Getenv(reexecMarker), os.Getenv("GOMLX_BACKEND"))
		os.Exit(0)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestApplyReexecsOnce$", "-test.count=1")
	cmd.Env = append(os.Environ(), "MATHRL_TEST_APPLY_CHILD=1", "LD_LIBRARY_PATH=", reexecMarker+"=")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	want := "child: LD_LIBRARY_PATH=/fake/nvidia/cu13/lib reexec=1 GOMLX_BACKEND=" + CPUConfig
	if !strings.Contains(string(out), want) {
		t.Errorf("child printed %q, want %q", out, want)
	}
	if strings.Count(string(out), "child:") != 1 {
		t.Errorf("child ran its body %d times", strings.Count(string(out), "child:"))
	}
}

// TestOpenCUDAWithoutPluginIsAnError opens a CUDA plan whose plugin does not
// exist: the client options path must give an error naming the plugin, not a
// panic.
func TestOpenCUDAWithoutPluginIsAnError(t *testing.T) {
	plugin := filepath.Join(t.TempDir(), "xla_cuda_plugin.so")
	_, err := open(Plan{Kind: CUDA, Config: "xla:" + plugin + "," + CUDAOptions}, 1)
	if err == nil || !strings.Contains(err.Error(), plugin) {
		t.Errorf("open of a missing plugin: %v, want an error naming %s", err, plugin)
	}
}

// TestNumDevicesOnCPUIsAnError asks the pure Go backend for two devices: one
// error naming num_devices, its value and the backends that have more.
func TestNumDevicesOnCPUIsAnError(t *testing.T) {
	_, _, err := New(Options{Kind: CPU, NumDevices: 2})
	if err == nil || !strings.Contains(err.Error(), "num_devices: 2") || !strings.Contains(err.Error(), "xla-cpu") {
		t.Errorf("cpu with 2 devices: %v, want an error naming num_devices 2 and xla-cpu", err)
	}
}

// TestCheckDevices refuses more devices than a backend has, saying how many would work.
func TestCheckDevices(t *testing.T) {
	if err := checkDevices(CUDA, 8, 8); err != nil {
		t.Errorf("8 of 8: %v", err)
	}
	err := checkDevices(CUDA, 2, 8)
	if err == nil || !strings.Contains(err.Error(), "num_devices: 8") || !strings.Contains(err.Error(), "at most 2") {
		t.Errorf("8 of 2: %v, want an error naming num_devices 8 and at most 2", err)
	}
}

// fakeCache builds a project cache holding the CPU plugin where
// scripts/setup.sh installs it.
func fakeCache(t *testing.T) (cache, plugin string) {
	t.Helper()
	cache = filepath.Join(t.TempDir(), ".cache")
	plugin = filepath.Join(cache, CPUPluginCacheDir, CPUPluginRelPath)
	if err := os.MkdirAll(filepath.Dir(plugin), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(plugin, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	return cache, plugin
}

func TestResolveXLACPU(t *testing.T) {
	cache, plugin := fakeCache(t)
	withCache := fakeHost(nil, nil, false)
	withCache.CacheDirs = func() []string { return []string{filepath.Join(t.TempDir(), "other"), cache} }

	p, err := Resolve(Options{Kind: XLACPU}, withCache)
	if err != nil || p.Kind != XLACPU || p.Config != "xla:"+plugin || p.CPUPlugin != plugin {
		t.Fatalf("xla-cpu from the cache: %+v, %v", p, err)
	}
	// auto without CUDA takes XLA's CPU compiler when its plugin is there...
	p, err = Resolve(Options{Kind: Auto}, withCache)
	if err != nil || p.Kind != XLACPU || p.Fallback != "" {
		t.Errorf("auto with the CPU plugin: %+v, %v", p, err)
	}
	// ...and the pure Go backend otherwise, saying so in its one line.
	p, err = Resolve(Options{Kind: Auto}, fakeHost(nil, nil, false))
	if err != nil || p.Kind != CPU || !strings.Contains(p.Line(), "scripts/setup.sh` installs "+CPUPluginPackage) {
		t.Errorf("auto without plugins: %+v (%q), %v", p, p.Line(), err)
	}
	// The flag beats the variable, which beats the cache; a site-packages install is found too.
	other := filepath.Join(t.TempDir(), "my_cpu_plugin.so")
	os.WriteFile(other, nil, 0o644)
	withVar := withCache
	withVar.Getenv = func(k string) string { return map[string]string{"MATHRL_PJRT_CPU_PLUGIN": other}[k] }
	if p, err := Resolve(Options{Kind: XLACPU}, withVar); err != nil || p.CPUPlugin != other {
		t.Errorf("variable: %+v, %v", p, err)
	}
	if p, err := Resolve(Options{Kind: XLACPU, PJRTPlugin: plugin}, withVar); err != nil || p.CPUPlugin != plugin {
		t.Errorf("flag: %+v, %v", p, err)
	}
	site := filepath.Dir(filepath.Dir(plugin))
	if got := FindCPUPlugin(nil, []string{site}); got != plugin {
		t.Errorf("FindCPUPlugin in site-packages %s: %q", site, got)
	}
	// None anywhere is one error that says what was tried and what to do.
	_, err = Resolve(Options{Kind: XLACPU}, fakeHost(nil, []string{"/no/site"}, false))
	if err == nil || !strings.Contains(err.Error(), "/no/site") || !strings.Contains(err.Error(), "scripts/setup.sh") {
		t.Errorf("xla-cpu without a plugin: %v", err)
	}
	if _, err := Resolve(Options{Kind: XLACPU, PJRTPlugin: "/no/such/cpu.so"}, withCache); err == nil ||
		!strings.Contains(err.Error(), "/no/such/cpu.so") {
		t.Errorf("xla-cpu with a missing --pjrt-plugin: %v", err)
	}
}

// TestOpenUnloadableCPUPlugin opens a plugin file that is no library: the
// error names the file.
func TestOpenUnloadableCPUPlugin(t *testing.T) {
	_, plugin := fakeCache(t)
	t.Setenv("MATHRL_PJRT_CPU_PLUGIN", plugin)
	// New applies the plan to the process before it fails to open the
	// plugin: restore what it sets for the later tests
	t.Setenv("GOMLX_BACKEND", os.Getenv("GOMLX_BACKEND"))
	t.Setenv("GOMLX_NO_AUTO_INSTALL", os.Getenv("GOMLX_NO_AUTO_INSTALL"))
	_, _, err := New(Options{Kind: XLACPU})
	if err == nil || !strings.Contains(err.Error(), "cannot load the PJRT CPU plugin "+plugin) {
		t.Errorf("unloadable plugin: %v", err)
	}
}

// TestNewHostLeavesTheProcessBackend opens the host backend (XLA's CPU
// plugin where one is found, else the pure Go backend) and checks that the
// process's GOMLX_BACKEND still names the device's backend: opening the host
// for optimizer_cpu_offload must not make later backends the host's.
func TestNewHostLeavesTheProcessBackend(t *testing.T) {
	const device = "go:ops_sequential,creation_order"
	t.Setenv("GOMLX_BACKEND", device)
	b, p, err := NewHost()
	if err != nil {
		t.Fatal(err)
	}
	defer b.Finalize()
	if got := os.Getenv("GOMLX_BACKEND"); got != device {
		t.Errorf("after NewHost (%s), GOMLX_BACKEND=%q, want %q", p.Config, got, device)
	}
}

// TestDiscoverPrefersTheNewestPlugin installs several CUDA plugins across
// site-packages folders: the newest CUDA wins wherever it is (by number, so
// 12 beats 9), the earlier folder among plugins for the same CUDA, and a
// plugin folder without a number is taken only when it is alone.
func TestDiscoverPrefersTheNewestPlugin(t *testing.T) {
	site := func(dirs ...string) string {
		sp := t.TempDir()
		for _, d := range dirs {
			p := filepath.Join(sp, "jax_plugins", d, "xla_cuda_plugin.so")
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, nil, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		return sp
	}
	plugin := func(sp, dir string) string { return filepath.Join(sp, "jax_plugins", dir, "xla_cuda_plugin.so") }
	old, mixed, same, bare := site("xla_cuda12"), site("xla_cuda9", "xla_cuda13", "xla_cuda"), site("xla_cuda12"), site("xla_cuda")
	nines := site("xla_cuda9", "xla_cuda12")
	for _, tc := range []struct {
		name  string
		sites []string
		want  string
	}{
		{"newest in a later folder", []string{old, mixed}, plugin(mixed, "xla_cuda13")},
		{"newest in the first folder", []string{mixed, old}, plugin(mixed, "xla_cuda13")},
		{"12 beats 9", []string{nines}, plugin(nines, "xla_cuda12")},
		{"same CUDA: the first folder", []string{same, old}, plugin(same, "xla_cuda12")},
		{"numbered beats none", []string{bare, old}, plugin(old, "xla_cuda12")},
		{"none alone", []string{bare}, plugin(bare, "xla_cuda")},
	} {
		if got := Discover(tc.sites).Plugin; got != tc.want {
			t.Errorf("%s: plugin %q, want %q", tc.name, got, tc.want)
		}
	}
}

// describedAs is a backend that describes itself as desc.
type describedAs struct {
	compute.Backend
	desc string
}

func (b describedAs) Description() string { return b.desc }

func TestOnCUDA(t *testing.T) {
	for desc, want := range map[string]bool{
		"xla:cuda - PJRT plugin (xla_cuda_plugin.so) [1 device(s)]": true,
		"XLA CUDA PJRT plugin": true,
		"go":                   false,
		"xla:cpu - PJRT plugin (pjrt_c_api_cpu_plugin.so) [1 device(s)]": false,
	} {
		if got := OnCUDA(describedAs{desc: desc}); got != want {
			t.Errorf("OnCUDA(%q) = %v, want %v", desc, got, want)
		}
	}
	if OnCUDA(nil) {
		t.Error("OnCUDA(nil) = true")
	}
}
