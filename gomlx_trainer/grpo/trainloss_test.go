package grpo

import (
	"context"
	"math"
	"strings"
	"testing"
)

// TestTrainStepLossOnMixedRewards runs one rollout whose rewards differ within
// each group (a reward read off the response's length) and checks the logged
// loss of its optimizer step against a computation from the logged samples
// alone. On the first step the policy is the one that sampled, so every ratio
// is 1 (up to rounding) and nothing is clipped: the loss is −Σ_i A_i·Σ_t w_it,
// with the advantages A_i of the group's rewards (sample std, as slime) and the
// token weights w_it = 1/N over all N sampled tokens (token mean) or
// 1/(n_i·B) over a sequence's n_i sampled tokens (mean of B sequence means).
// The two differ when sequences have unequal lengths, which the test checks
// first.
func TestTrainStepLossOnMixedRewards(t *testing.T) {
	if testing.Short() {
		t.Skip("trains a tiny model")
	}
	for _, tc := range []struct {
		perToken, memoryOptions bool
	}{{true, false}, {false, false}, {true, true}} {
		perToken := tc.perToken
		cfg := smokeConfig(t)
		cfg.NumRollout, cfg.EvalPromptData, cfg.SaveInterval = 1, "", 0
		cfg.RolloutBatchSize, cfg.NSamplesPerPrompt, cfg.GlobalBatchSize, cfg.MicroBatchSize = 3, 4, 12, 4
		cfg.SFTSteps, cfg.CalculatePerTokenLoss, cfg.DynamicSampling = 6, perToken, false
		if tc.memoryOptions { // the same loss with chunked log-probs, recomputed layers and token-packed micro-batches
			cfg.LogProbChunk, cfg.RecomputeLayers, cfg.MaxTokensPerMicroBatch = 16, true, 256
		}
		var got RolloutLog
		lengthReward := func(response, _ string, _ int) Reward { return Reward{Value: float64(len(response) % 3)} }
		var log testLog
		err := Train(context.Background(), cfg, TrainOptions{Backend: testBackend(t), Tools: arithTools{}, Progress: &log,
			Reward: lengthReward, OnRollout: func(r RolloutLog) { got = r }})
		if err != nil {
			t.Fatalf("%v\n%s", err, log)
		}
		if len(got.Steps) != 1 || len(got.Samples) != 12 {
			t.Fatalf("%d steps, %d samples; want 1 and 12", len(got.Steps), len(got.Samples))
		}
		tokenMean, seqMean := expectedFirstLoss(got, cfg.NSamplesPerPrompt, cfg.AdvantageEps)
		if math.Abs(tokenMean-seqMean) < 1e-3 {
			t.Fatalf("token-mean loss %v and sequence-mean loss %v are too close to tell apart: lengths %v", tokenMean, seqMean, sampledLengths(got))
		}
		want := seqMean
		if perToken {
			want = tokenMean
		}
		step := got.Steps[0]
		if math.Abs(step.Loss-want) > 1e-4*(1+math.Abs(want)) {
			t.Errorf("%+v: step-1 loss %v, want %v (token mean %v, sequence mean %v)", tc, step.Loss, want, tokenMean, seqMean)
		}
		if step.ClipFraction != 0 {
			t.Errorf("%+v: clip fraction %v on the sampling policy, want 0", tc, step.ClipFraction)
		}
	}
}

// expectedFirstLoss computes, from the logged samples and rewards, the loss of
// an on-policy step with token-mean and with sequence-mean weights.
func expectedFirstLoss(r RolloutLog, group int, eps float64) (tokenMean, seqMean float64) {
	lengths := sampledLengths(r)
	total := 0.0
	for _, n := range lengths {
		total += n
	}
	for start := 0; start < len(r.Rewards); start += group {
		g := r.Rewards[start : start+group]
		mean := 0.0
		for _, x := range g {
			mean += x / float64(group)
		}
		ss := 0.0
		for _, x := range g {
			ss += (x - mean) * (x - mean)
		}
		std := math.Sqrt(ss / float64(group-1))
		for i, x := range g {
			a := (x - mean) / (std + eps)
			if n := lengths[start+i]; n > 0 {
				tokenMean -= a * n / total
				seqMean -= a / float64(len(r.Rewards))
			}
		}
	}
	return tokenMean, seqMean
}

// sampledLengths is the number of tokens each sample's policy sampled.
func sampledLengths(r RolloutLog) []float64 {
	out := make([]float64, len(r.Samples))
	for i, s := range r.Samples {
		for _, m := range s.Mask {
			out[i] += float64(m)
		}
	}
	return out
}

// TestNoPromptFits stops with an error naming the knob when no training prompt
// fits rollout_max_prompt_len, instead of drawing prompts for ever.
func TestNoPromptFits(t *testing.T) {
	cfg := smokeConfig(t)
	cfg.SFTSteps, cfg.EvalPromptData, cfg.RolloutMaxPromptLen = 0, "", 4
	var log testLog
	err := Train(context.Background(), cfg, TrainOptions{Backend: testBackend(t), Tools: arithTools{}, Progress: &log})
	if err == nil || !strings.Contains(err.Error(), "rollout_max_prompt_len 4") {
		t.Fatalf("Train = %v, want an error naming rollout_max_prompt_len\n%s", err, log)
	}
}
