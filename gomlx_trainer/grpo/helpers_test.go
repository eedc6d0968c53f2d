package grpo

import (
	"math"
	"testing"

	"github.com/gomlx/compute"

	"github.com/mathrl/mathrl/gomlx_trainer/backend/backendtest"
)

// testBackend returns the backend of GOMLX_BACKEND, or GoMLX's sequential pure
// Go backend when the environment has not chosen one.
func testBackend(t testing.TB) compute.Backend {
	t.Helper()
	return backendtest.New(t)
}

func near(a, b, tol float64) bool {
	return math.Abs(a-b) <= tol*(1+math.Abs(b))
}
