package memplan_test

import (
	"math/rand/v2"
	"testing"

	"github.com/gomlx/compute/dtypes"

	"github.com/mathrl/mathrl/gomlx_trainer/backend/backendtest"
	"github.com/mathrl/mathrl/gomlx_trainer/grpo"
	"github.com/mathrl/mathrl/gomlx_trainer/memplan"
	"github.com/mathrl/mathrl/gomlx_trainer/precision"
	"github.com/mathrl/mathrl/gomlx_trainer/qwen3"
)

// TestDeviceStateMatchesThePlan trains a bfloat16 model two steps under
// each way of keeping the optimizer state, then reads how many bytes of the
// learner's variables hold a device buffer: between steps (no gradient
// accumulator, see grpo.Learner), and after OffloadState, when the trainer
// samples. Both must equal the plan's resident terms exactly: Resident less
// the accumulators, and what Sampling keeps.
func TestDeviceStateMatchesThePlan(t *testing.T) {
	b := backendtest.New(t)
	cfg := shape(64, 2, 512, 128, 4, 2)
	for _, tc := range []struct {
		name  string
		state memplan.State
	}{
		{"float32 master", memplan.State{}},
		{"remainders, bfloat16 moments", memplan.State{Precision: precision.Optimizer{Master: precision.MasterRemainder, ExpAvgDType: dtypes.BFloat16}}},
		{"optimizer on the host", memplan.State{Precision: precision.Optimizer{Master: precision.MasterRemainder}, OffloadFraction: 1}},
		{"half on the host", memplan.State{OffloadFraction: 0.5}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			model, err := qwen3.NewRandom(cfg, dtypes.BFloat16, 1)
			if err != nil {
				t.Fatal(err)
			}
			l := grpo.NewLearner(b, model, grpo.LossConfig{EpsLow: 0.2, EpsHigh: 0.28},
				grpo.AdamWConfig{Beta1: 0.9, Beta2: 0.98, Eps: 1e-8, ClipNorm: 1, Precision: tc.state.Precision}, 1)
			if tc.state.OffloadFraction > 0 {
				if err := l.OffloadOptimizer(backendtest.New(t), tc.state.OffloadFraction); err != nil {
					t.Fatal(err)
				}
			}
			seqs := sequences(rand.New(rand.NewPCG(1, 2)), 2, 8, 8, cfg.VocabSize)
			for range 2 {
				if _, _, err := l.Step(seqs, grpo.StepOptions{LR: 1e-6}); err != nil {
					t.Fatal(err)
				}
			}
			between, err := l.DeviceStateBytes()
			if err != nil {
				t.Fatal(err)
			}
			plan := memplan.Breakdown{Terms: memplan.Resident(cfg, dtypes.BFloat16, false, tc.state)}
			want := plan.Total() - plan.Term(memplan.TermAccumulators)
			// The plan leaves out the step counter (4 bytes). The offloaded share
			// is whole tensors (the first weights up to the fraction), the
			// plan's the fraction itself: within the largest tensor's state.
			tol := int64(4)
			if f := tc.state.OffloadFraction; f > 0 && f < 1 {
				tol = int64(cfg.VocabSize * cfg.Hidden * 12)
			}
			if abs(between-want) > tol {
				t.Errorf("between steps %d bytes on the device, planned %d (%+v)", between, want, plan)
			}
			if err := l.OffloadState(); err != nil {
				t.Fatal(err)
			}
			sampling, err := l.DeviceStateBytes()
			if err != nil {
				t.Fatal(err)
			}
			s := memplan.Session{DType: dtypes.BFloat16, Batch: 1, PromptLen: 8, ResponseLen: 8, Training: true, State: tc.state}
			s.State.OffloadTrain = true
			if got := memplan.Sampling(cfg, s, memplan.XLA).Term(memplan.TermWeights); sampling != got ||
				memplan.Sampling(cfg, s, memplan.XLA).Term(memplan.TermMoments) != 0 {
				t.Errorf("while sampling %d bytes on the device, planned %d of weights and no other state", sampling, got)
			}
			t.Logf("%s: %d bytes on the device between steps (planned %d), %d while sampling", tc.name, between, want, sampling)
		})
	}
}

func abs(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}
