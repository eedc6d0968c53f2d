package grpo

import (
	"math"
	"testing"
)

// TestFlowRLStepWeightsAreSequenceMeans checks that the trainer steps FlowRL
// with the weights its loss is written for whatever calculate_per_token_loss
// says: each sequence with loss tokens weighs s_i = Σ_t w_i,t = 1/N in all,
// so the loss is the mean of the sequences' w·δ² (the paper's), not a mean
// over tokens that would weigh a long response's residual by its length. The
// same config with advantage_estimator grpo keeps the token mean (every loss
// token 1/total), so the check sees calculate_per_token_loss taken.
func TestFlowRLStepWeightsAreSequenceMeans(t *testing.T) {
	masks := [][]float32{{1, 1, 1, 1, 1, 1}, {1, 0, 1}, {1, 1, 1, 1, 0, 0, 0, 1}, {1}}
	var total float64
	for _, m := range masks {
		for _, v := range m {
			total += float64(v)
		}
	}
	for _, perToken := range []bool{true, false} {
		cfg := Default()
		cfg.AdvantageEstimator, cfg.CalculatePerTokenLoss = "flowrl", perToken
		tr := &trainer{cfg: cfg}
		for i, w := range TokenWeights(masks, tr.stepOptions(1e-6).PerTokenLoss) {
			var s float64
			for _, v := range w {
				s += float64(v)
			}
			if want := 1 / float64(len(masks)); math.Abs(s-want) > 1e-6 {
				t.Errorf("flowrl, calculate_per_token_loss %v: sequence %d weighs %v in all, want 1/N = %v", perToken, i, s, want)
			}
		}
	}
	cfg := Default()
	cfg.AdvantageEstimator, cfg.CalculatePerTokenLoss = "grpo", true
	tr := &trainer{cfg: cfg}
	for i, w := range TokenWeights(masks, tr.stepOptions(1e-6).PerTokenLoss) {
		for k, v := range w {
			if want := float64(masks[i][k]) / total; math.Abs(float64(v)-want) > 1e-7 {
				t.Errorf("grpo, calculate_per_token_loss: weight [%d][%d] = %v, want %v", i, k, v, want)
			}
		}
	}
}
