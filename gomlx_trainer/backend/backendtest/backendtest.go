package backendtest

import (
	"fmt"
	"os"
	"testing"

	"github.com/gomlx/compute"
	_ "github.com/gomlx/compute/gobackend" // the pure Go backend

	"github.com/mathrl/mathrl/gomlx_trainer/backend"
)

// DefaultConfig is the backend tests use when GOMLX_BACKEND is not set: the
// one `--backend cpu` opens.
const DefaultConfig = backend.CPUConfig

// New opens the backend named by GOMLX_BACKEND, or DefaultConfig when it is
// unset, and fails t when it cannot (GoMLX panics on an unknown backend name;
// New turns that into a test failure).
func New(t testing.TB) compute.Backend {
	t.Helper()
	config := os.Getenv("GOMLX_BACKEND")
	if config == "" {
		config = DefaultConfig
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
