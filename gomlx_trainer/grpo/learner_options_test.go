package grpo

import (
	"testing"

	"github.com/mathrl/mathrl/gomlx_trainer/qwen3"
)

// TestLearnerOptionsSameStep checks that the memory options change nothing the
// learner computes: the reference's log-probs, and the statistics and gradient
// norm of a warm-start step and of a policy step with the KL penalty, are the
// plain learner's within 1e-5.
func TestLearnerOptionsSameStep(t *testing.T) {
	backend := testBackend(t)
	lossCfg := LossConfig{EpsLow: 0.2, EpsHigh: 0.28, KLCoef: 0.1, KLType: "k3", EntropyCoef: 0.01}
	adam := AdamWConfig{Beta1: 0.9, Beta2: 0.98, Eps: 1e-8, ClipNorm: 1}
	run := func(opts qwen3.ModelOptions) []float64 {
		l := NewLearnerWith(backend, tinyModel(t, 3), lossCfg, adam, 0.9, opts).WithReference(tinyModel(t, 4), 0.9)
		b, _ := packBatch(testSequences())
		ref, err := l.ref.LogProbs(b.IDs, b.Targets)
		if err != nil {
			t.Fatal(err)
		}
		out := []float64{float64(ref[1][1]), float64(ref[2][3])}
		for _, sft := range []bool{true, false} {
			st, norm, err := l.Step(testSequences(), StepOptions{SFT: sft, MicroBatch: 2, LR: 1e-3})
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, st.Loss, st.EntropySum, st.KLSum, st.RatioSum, norm)
		}
		return out
	}
	want := run(qwen3.ModelOptions{})
	for _, opts := range []qwen3.ModelOptions{{LogProbChunk: 5}, {Remat: true}, {Remat: true, LogProbChunk: 7}} {
		got := run(opts)
		for i := range want {
			if !near(got[i], want[i], 1e-5) {
				t.Errorf("%+v: value %d is %v, plain learner %v", opts, i, got[i], want[i])
			}
		}
	}
}
