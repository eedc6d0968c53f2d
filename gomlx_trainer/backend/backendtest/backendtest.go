package backendtest

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gomlx/compute"
	_ "github.com/gomlx/compute/gobackend" // the pure Go backend

	"github.com/mathrl/mathrl/gomlx_trainer/backend"
	"github.com/mathrl/mathrl/internal/testenv"
)

// DefaultConfig is the backend tests use when neither MATHRL_TEST_BACKEND nor
// GOMLX_BACKEND is set: the one `--backend cpu` opens.
const DefaultConfig = backend.CPUConfig

// KindEnv names the variable that runs the tests on a mathrl backend kind
// (cpu or xla-cpu), resolved as `--backend` resolves it; scripts/test.sh runs
// every graph test with it set to each.
const KindEnv = "MATHRL_TEST_BACKEND"

// Kind is the backend kind the tests run on: MATHRL_TEST_BACKEND, else
// backend.CPU.
func Kind() string {
	if k := os.Getenv(KindEnv); k != "" {
		return k
	}
	return backend.CPU
}

// IsXLA reports whether the tests run on XLA (MATHRL_TEST_BACKEND=xla-cpu, or
// a GOMLX_BACKEND of XLA).
func IsXLA() bool {
	c, err := Config()
	return err == nil && strings.HasPrefix(c, "xla:")
}

// Config is the GoMLX backend configuration the tests open: the one
// MATHRL_TEST_BACKEND's kind resolves to, else GOMLX_BACKEND, else
// DefaultConfig.
func Config() (string, error) {
	if k := os.Getenv(KindEnv); k != "" {
		p, err := backend.Resolve(backend.Options{Kind: k}, backend.RealHost())
		if err != nil {
			return "", fmt.Errorf("%s=%s: %w", KindEnv, k, err)
		}
		if err := applyLibraryPath(p); err != nil {
			return "", fmt.Errorf("%s=%s: %w", KindEnv, k, err)
		}
		return p.Config, nil
	}
	if c := os.Getenv("GOMLX_BACKEND"); c != "" {
		return c, nil
	}
	return DefaultConfig, nil
}

// applyLibraryPath applies plan p's environment when it sets
// LD_LIBRARY_PATH (the CUDA plugin's libraries), as `mathrl --backend cuda`
// does: backend.Apply re-executes the test binary once with it, so that the
// loader finds them. Plans without it (cpu, xla-cpu) leave the environment
// alone.
func applyLibraryPath(p backend.Plan) error {
	if _, ok := p.Env["LD_LIBRARY_PATH"]; !ok {
		return nil
	}
	return backend.Apply(p)
}

// New opens the backend Config names and fails t when it cannot (GoMLX panics
// on an unknown backend name; New turns that into a test failure).
func New(t testing.TB) compute.Backend {
	t.Helper()
	config, err := Config()
	if err != nil {
		t.Fatalf("backendtest: %v", err)
	}
	b, err := open(config)
	if err != nil {
		t.Fatalf("backendtest: GoMLX backend %q: %v", config, err)
	}
	return b
}

// open calls compute.NewWithConfig, returning its panic as an error.
func open(config string) (b compute.Backend, err error) {
	defer func() {
		if r := recover(); r != nil {
			b, err = nil, fmt.Errorf("%v", r)
		}
	}()
	return compute.NewWithConfig(config)
}

// XLACPUPlugin returns XLA's CPU PJRT plugin: MATHRL_PJRT_CPU_PLUGIN, else the
// one scripts/setup.sh installs under the repository's .cache/pjrt-cpu. It
// calls testenv.Missing when there is none.
func XLACPUPlugin(t testing.TB) string {
	t.Helper()
	if p := os.Getenv("MATHRL_PJRT_CPU_PLUGIN"); p != "" {
		if _, err := os.Stat(p); err != nil {
			testenv.Missing(t, "XLA's CPU PJRT plugin MATHRL_PJRT_CPU_PLUGIN="+p)
		}
		return p
	}
	cache := filepath.Join(testenv.RepoRoot(t), ".cache")
	p := backend.FindCPUPlugin([]string{cache}, nil)
	if p == "" {
		testenv.Missing(t, "XLA's CPU PJRT plugin under "+cache+" ("+backend.CPUPluginPackage+")")
	}
	return p
}
