package grpo

import (
	"math"
	"path/filepath"
	"testing"

	"github.com/gomlx/compute"

	"github.com/mathrl/mathrl/gomlx_trainer/backend/backendtest"
	"github.com/mathrl/mathrl/gomlx_trainer/qwen3"
	"github.com/mathrl/mathrl/gomlx_trainer/tokenizer"
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

// demoRecipe returns configs/demo.yaml with its hf_checkpoint, which names a
// folder from the repository's root, found from this package's folder.
func demoRecipe(t testing.TB) Config {
	t.Helper()
	root := filepath.Join("..", "..")
	cfg, err := LoadRecipe(filepath.Join(root, "configs", "demo.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	cfg.HFCheckpoint = filepath.Join(root, cfg.HFCheckpoint)
	return cfg
}

// policyAndProtocol builds cfg's policy and its chat protocol, as a run does.
func policyAndProtocol(tb testing.TB, cfg Config) (*qwen3.Model, *tokenizer.Protocol) {
	tb.Helper()
	model, err := newPolicy(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	proto, _, err := newProtocol(cfg, model.Config.VocabSize)
	if err != nil {
		tb.Fatal(err)
	}
	return model, proto
}
