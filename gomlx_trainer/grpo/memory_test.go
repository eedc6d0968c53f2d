package grpo

import (
	"testing"

	"github.com/gomlx/compute/dtypes"

	"github.com/mathrl/mathrl/gomlx_trainer/memplan"
	"github.com/mathrl/mathrl/gomlx_trainer/qwen3"
)

// TestMemoryPlanCountsTheReference: the plan of a recipe counts a frozen
// reference policy's weights (P·d bytes, as many as the policy's) exactly
// when the trainer loads one (needsReference): with a non-zero KL penalty
// and with advantage_estimator flowrl, not with the penalty off or at 0.
func TestMemoryPlanCountsTheReference(t *testing.T) {
	shape, err := qwen3.NamedConfig("tiny")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		edit func(*Config)
		want bool
	}{
		{"grpo", func(c *Config) {}, false},
		{"grpo, KL penalty", func(c *Config) { c.UseKLLoss, c.KLLossCoef = true, 0.01 }, true},
		{"grpo, KL penalty at 0", func(c *Config) { c.UseKLLoss, c.KLLossCoef = true, 0 }, false},
		{"grpo, kl_loss_coef without use_kl_loss", func(c *Config) { c.UseKLLoss, c.KLLossCoef = false, 0.01 }, false},
		{"flowrl", func(c *Config) { c.AdvantageEstimator = "flowrl" }, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := Default()
			cfg.TinyModel, cfg.DType, cfg.PromptData = "tiny", "float32", "arith"
			tc.edit(&cfg)
			if err := cfg.Validate(); err != nil {
				t.Fatal(err)
			}
			if got := needsReference(cfg); got != tc.want {
				t.Fatalf("needsReference = %v, want %v", got, tc.want)
			}
			rc, err := cfg.MemoryRecipe()
			if err != nil {
				t.Fatal(err)
			}
			rep := memplan.Plan(shape, rc, 1<<40, memplan.CPU)
			want := int64(0)
			if tc.want {
				want = shape.Params() * int64(dtypes.Float32.Size())
			}
			if got := rep.Train.Term(memplan.TermReference); got != want {
				t.Errorf("the training step's reference term is %d bytes, want %d (recipe %+v)", got, want, rc)
			}
			if got := rep.Rollout.Term(memplan.TermReference); got != want {
				t.Errorf("the rollout's reference term is %d bytes, want %d", got, want)
			}
		})
	}
}
