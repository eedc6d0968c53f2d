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

// TestDifferingKey changes each knob of Default() in turn: resume accepts
// the change of a knob that says how long the run goes, how often it
// evaluates, saves and records rollouts, how many checkpoints it keeps or
// where it computes, and names any other.
func TestDifferingKey(t *testing.T) {
	free := map[string]bool{"num_rollout": true, "eval_interval": true, "save_interval": true, "keep_ckpts": true,
		"backend": true, "save_rollouts_every": true, "save_rollouts_groups": true}
	if len(resumeFree) != len(free) {
		t.Errorf("resumeFree %v, want the keys of %v", resumeFree, free)
	}
	for _, k := range Knobs() {
		c := Default()
		switch p := k.Ptr(&c).(type) {
		case *string:
			*p += "x"
		case *int:
			*p++
		case *int64:
			*p++
		case *float64:
			*p += 0.5
		case *bool:
			*p = !*p
		default:
			t.Fatalf("knob %s: type %T", k.Key, p)
		}
		want := k.Key
		if free[k.Key] {
			want = ""
		}
		if got := differingKey(Default(), c); got != want {
			t.Errorf("%s changed: differingKey %q, want %q", k.Key, got, want)
		}
	}
}
