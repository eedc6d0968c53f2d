package memplan_test

import (
	"testing"

	"github.com/gomlx/compute/dtypes"

	"github.com/mathrl/mathrl/gomlx_trainer/memplan"
	"github.com/mathrl/mathrl/gomlx_trainer/precision"
	"github.com/mathrl/mathrl/gomlx_trainer/qwen3"
)

// The XLA update writes anew the bf16 weight (2), moments (8) and master (4, 2 or 0):
// of the largest weight on one device, of every parameter (and the accumulators) on several.
func TestOptimizerUpdateCountsTheMaster(t *testing.T) {
	for _, tc := range []struct {
		master  string
		perElem int64 // bytes of a weight's fresh state: 2 + 8 + the master's
	}{{precision.MasterFloat32, 14}, {precision.MasterRemainder, 12}, {precision.MasterStochastic, 10}} {
		s := memplan.Step{DType: dtypes.BFloat16, State: memplan.State{Precision: precision.Optimizer{Master: tc.master}}}
		// one device: weight by weight, the largest weight (the embedding, 40 elements)
		if got := memplan.OptimizerUpdate(handConfig(), s, memplan.XLA); got != tc.perElem*40 {
			t.Errorf("master %s: the update holds %d bytes, want %d", tc.master, got, tc.perElem*40)
		}
		// several devices: one graph, a fresh copy of every parameter's state and the accumulators
		s.Devices = 2
		if got, want := memplan.OptimizerUpdate(handConfig(), s, memplan.XLA), (tc.perElem+4)*356; got != want {
			t.Errorf("master %s on 2 devices: the update holds %d bytes, want %d", tc.master, got, want)
		}
	}
	off := memplan.Step{DType: dtypes.BFloat16, State: memplan.State{OffloadFraction: 1}}
	if got := memplan.OptimizerUpdate(handConfig(), off, memplan.XLA); got != 0 {
		t.Errorf("every weight's update on the host: the device's update holds %d bytes, want 0", got)
	}
}

// Only one device frees the accumulators between steps.
func TestSamplingKeepsAccumulatorsOnSeveralDevices(t *testing.T) {
	s := memplan.Session{DType: dtypes.Float32, Batch: 4, PromptLen: 100, ResponseLen: 60, Training: true, Devices: 2}
	for _, tc := range []struct {
		devices int
		fsdp    bool
		want    int64
	}{{2, false, 4 * 356}, {2, true, 4 * 356 / 2}, {1, false, 0}} {
		s.Devices, s.FSDP = tc.devices, tc.fsdp
		if got := memplan.Sampling(handConfig(), s, memplan.XLA).Term(memplan.TermAccumulators); got != tc.want {
			t.Errorf("%d devices, fsdp %v: accumulators %d bytes while sampling, want %d", tc.devices, tc.fsdp, got, tc.want)
		}
	}
}

// Stochastic rounding and rounding to nearest keep no master: 2 + 4 + 8 bytes.
func TestNoMasterWithoutMasterWeights(t *testing.T) {
	cfg, _ := qwen3.NamedConfig("qwen3-8b")
	for _, m := range []string{precision.MasterStochastic, precision.MasterNone} {
		b := memplan.Breakdown{Terms: memplan.Resident(cfg, dtypes.BFloat16, false, memplan.State{Precision: precision.Optimizer{Master: m}})}
		if b.Term(memplan.TermMaster) != 0 || b.Total() != 14*cfg.Params() {
			t.Errorf("master %s: %+v, want 14 bytes per parameter and no master", m, b)
		}
	}
}

// MaxSamplingBatchKept is the plan with offload_train off (64 vs 13 here).
func TestPlanKeptSamplingBatch(t *testing.T) {
	cfg, _ := qwen3.NamedConfig("qwen3-4b")
	rc := memplan.Recipe{DType: dtypes.BFloat16, GlobalBatch: 8, MicroBatch: 1, PromptLen: 1024, ResponseLen: 3072,
		RolloutSamples: 64, SamplingBatch: 8, RecomputeLayers: true, State: memplan.State{OffloadTrain: true}}
	const limit = 60 << 30
	rep := memplan.Plan(cfg, rc, limit, memplan.XLA)
	kept := rc
	kept.State.OffloadTrain = false
	want := memplan.Plan(cfg, kept, limit, memplan.XLA).MaxSamplingBatch
	if rep.MaxSamplingBatchKept != want || want >= rep.MaxSamplingBatch {
		t.Errorf("largest sampling batch %d, kept %d; want kept %d, below the first", rep.MaxSamplingBatch, rep.MaxSamplingBatchKept, want)
	}
}
