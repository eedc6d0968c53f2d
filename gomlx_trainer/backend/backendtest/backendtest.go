package backendtest

import (
	"fmt"
	"os"
	"testing"

	"github.com/gomlx/gomlx/backends"
	_ "github.com/gomlx/gomlx/backends/simplego" // the pure Go backend
)

// DefaultConfig is the backend tests use when GOMLX_BACKEND is not set.
const DefaultConfig = "go:ops_sequential"

// New opens the backend named by GOMLX_BACKEND, or DefaultConfig when it is
// unset, and fails t when it cannot (GoMLX panics on an unknown backend name;
// New turns that into a test failure).
func New(t testing.TB) backends.Backend {
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

// open calls backends.NewWithConfig, returning its panic as an error.
func open(config string) (b backends.Backend, err error) {
	defer func() {
		if r := recover(); r != nil {
			b, err = nil, fmt.Errorf("%v", r)
		}
	}()
	return backends.NewWithConfig(config)
}
