package grpo

import (
	"math"
	"os"
	"sync"
	"testing"

	"github.com/gomlx/gomlx/backends"
	_ "github.com/gomlx/gomlx/backends/simplego"
)

var (
	backendOnce sync.Once
	backendVal  backends.Backend
	backendErr  error
)

// testBackend returns the CPU backend, choosing GoMLX's sequential pure Go
// backend when the environment has not chosen one.
func testBackend(t testing.TB) backends.Backend {
	t.Helper()
	backendOnce.Do(func() {
		if os.Getenv("GOMLX_BACKEND") == "" {
			os.Setenv("GOMLX_BACKEND", "go:ops_sequential")
		}
		os.Setenv("GOMLX_NO_AUTO_INSTALL", "1")
		backendVal, backendErr = backends.New()
	})
	if backendErr != nil {
		t.Fatalf("backend: %v", backendErr)
	}
	return backendVal
}

func near(a, b, tol float64) bool {
	return math.Abs(a-b) <= tol*(1+math.Abs(b))
}
