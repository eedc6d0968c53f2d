package grpo

import (
	"testing"

	"github.com/mathrl/mathrl/gomlx_trainer/qwen3"
)

// TestRecipeToLossAndOptimizer checks that every loss and optimizer knob of a
// recipe lands in its own field (distinct values, so a swap shows).
func TestRecipeToLossAndOptimizer(t *testing.T) {
	cfg := Default()
	cfg.EpsClip, cfg.EpsClipHigh = 0.1, 0.3
	cfg.UseKLLoss, cfg.KLLossCoef, cfg.KLLossType, cfg.EntropyCoef = true, 0.05, "k1", 0.002
	cfg.AdamBeta1, cfg.AdamBeta2, cfg.AdamEps, cfg.WeightDecay, cfg.ClipGrad = 0.8, 0.95, 1e-7, 0.01, 2
	if got, want := lossConfig(cfg), (LossConfig{EpsLow: 0.1, EpsHigh: 0.3, KLCoef: 0.05, KLType: "k1", EntropyCoef: 0.002}); got != want {
		t.Errorf("lossConfig = %+v, want %+v", got, want)
	}
	cfg.UseKLLoss = false
	if got := lossConfig(cfg); got.KLCoef != 0 {
		t.Errorf("use_kl_loss false: KL coefficient %v, want 0", got.KLCoef)
	}
	cfg.RecomputeLayers, cfg.LogProbChunk = true, 512
	if got, want := modelOptions(cfg), (qwen3.ModelOptions{Remat: true, LogProbChunk: 512}); got != want {
		t.Errorf("modelOptions = %+v, want %+v", got, want)
	}
	if got, want := adamConfig(cfg), (AdamWConfig{Beta1: 0.8, Beta2: 0.95, Eps: 1e-7, WeightDecay: 0.01, ClipNorm: 2}); got != want {
		t.Errorf("adamConfig = %+v, want %+v", got, want)
	}
}
