package grpo

import (
	"testing"

	"github.com/gomlx/compute/dtypes"

	"github.com/mathrl/mathrl/gomlx_trainer/qwen3"
)

// TestEvalLoadsTheRequestedDType is the regression test of `mathrl eval
// --dtype bf16`, which once ran in float32 without a word: every spelling
// qwen3.ParseDType reads gives its dtype, and anything else is an error.
func TestEvalLoadsTheRequestedDType(t *testing.T) {
	cfg, err := qwen3.NamedConfig("tiny")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := qwen3.WriteRandom(cfg, dir, "F32", 1); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]dtypes.DType{"bf16": dtypes.BFloat16, "bfloat16": dtypes.BFloat16, "f32": dtypes.Float32, "float32": dtypes.Float32} {
		req := DefaultEvalRequest()
		req.Model, req.DType = dir, name
		m, err := req.loadModel()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got := m.Weight("model.embed_tokens.weight").Shape().DType; got != want {
			t.Errorf("--dtype %s: weights in %s, want %s", name, got, want)
		}
	}
	req := DefaultEvalRequest()
	req.Model, req.DType = dir, "fp16"
	if _, err := req.loadModel(); err == nil {
		t.Error("--dtype fp16: no error")
	}
}
