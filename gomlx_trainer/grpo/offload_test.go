package grpo

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gomlx/compute/dtypes"

	"github.com/mathrl/mathrl/gomlx_trainer/precision"
	"github.com/mathrl/mathrl/gomlx_trainer/qwen3"
)

// bf16Learner is a learner of a copy of the bfloat16 tiny model start.
func bf16Learner(t *testing.T, start *qwen3.Model, adam AdamWConfig) *Learner {
	t.Helper()
	m, err := start.Copy()
	if err != nil {
		t.Fatal(err)
	}
	return NewLearner(testBackend(t), m, LossConfig{EpsLow: 0.2, EpsHigh: 0.28}, adam, 1)
}

// sameWeights fails t unless the two models' weights are equal bit for bit.
func sameWeights(t *testing.T, got, want *qwen3.Model) {
	t.Helper()
	w := weightsOf(t, want)
	for name, g := range weightsOf(t, got) {
		for i := range g {
			if g[i] != w[name][i] {
				t.Fatalf("%s[%d]: %v, want %v", name, i, g[i], w[name][i])
			}
		}
	}
}

// weightBytes is the bytes of the model's weights.
func weightBytes(m *qwen3.Model) int64 {
	var n int64
	for _, spec := range m.Config.Tensors() {
		n += int64(m.Weight(spec.Name).Shape().Memory())
	}
	return n
}

// TestOffloadStateLeavesOnlyTheWeights checks that no gradient accumulator
// outlives its step, that between steps OffloadState leaves nothing but the
// weights on the device, and that a run that offloads
// before every step ends bit for bit where one that does not ends.
func TestOffloadStateLeavesOnlyTheWeights(t *testing.T) {
	adam := AdamWConfig{Beta1: 0.9, Beta2: 0.98, Eps: 1e-8, ClipNorm: 1, Precision: precision.Optimizer{Master: precision.MasterRemainder}}
	start, _ := startingModels(t, 4)
	kept, offloaded := bf16Learner(t, start, adam), bf16Learner(t, start, adam)
	for step := range 4 {
		trainSteps(t, kept, step, 1)
		trainSteps(t, offloaded, step, 1)
		for _, v := range offloaded.vars {
			if accumulator(offloaded.Model.Store, v).HasValue() {
				t.Fatalf("step %d: the accumulator of %s outlives the step", step, v.Path())
			}
		}
		before, err := offloaded.DeviceStateBytes()
		if err != nil {
			t.Fatal(err)
		}
		if err := offloaded.OffloadState(); err != nil {
			t.Fatal(err)
		}
		after, err := offloaded.DeviceStateBytes()
		if err != nil {
			t.Fatal(err)
		}
		if w := weightBytes(offloaded.Model); after != w || before <= w {
			t.Fatalf("step %d: %d bytes on the device before OffloadState, %d after; the weights are %d", step, before, after, w)
		}
	}
	sameWeights(t, offloaded.Model, kept.Model)
}

// TestOptimizerOnTheHostMatchesTheDevice runs the update of all, and of half,
// of the weights on a host backend (here the test backend again): the
// weights end bit for bit as when all of it runs on the device, the
// device keeps no moments or master of the offloaded weights, and a run
// saved and resumed with the host's state ends the same too.
func TestOptimizerOnTheHostMatchesTheDevice(t *testing.T) {
	adam := AdamWConfig{Beta1: 0.9, Beta2: 0.98, Eps: 1e-8, WeightDecay: 0.1, ClipNorm: 1}
	start, _ := startingModels(t, 6)
	device := bf16Learner(t, start, adam)
	trainSteps(t, device, 0, 4)
	for _, fraction := range []float64{1, 0.5} {
		host := bf16Learner(t, start, adam)
		if err := host.OffloadOptimizer(testBackend(t), fraction); err != nil {
			t.Fatal(err)
		}
		trainSteps(t, host, 0, 2)
		for _, v := range host.host.vars {
			if p := movedState(host.Model.Store, v); len(p) > 0 {
				t.Errorf("fraction %g: the device still holds %v", fraction, p)
			}
		}
		if n := len(host.host.vars); fraction == 1 && n != len(host.vars) || fraction < 1 && (n == 0 || n == len(host.vars)) {
			t.Errorf("fraction %g: %d of %d weights offloaded", fraction, n, len(host.vars))
		}
		dir := filepath.Join(t.TempDir(), "ckpt", CheckpointName(2))
		if err := host.save(dir, nil, TrainState{Step: 2, Config: Default()}, nil); err != nil {
			t.Fatal(err)
		}
		trainSteps(t, host, 2, 2)
		sameWeights(t, host.Model, device.Model)

		model, _, err := LoadCheckpoint(dir, dtypes.BFloat16)
		if err != nil {
			t.Fatal(err)
		}
		resumed := NewLearner(testBackend(t), model, LossConfig{EpsLow: 0.2, EpsHigh: 0.28}, adam, 1)
		if err := resumed.OffloadOptimizer(testBackend(t), fraction); err != nil {
			t.Fatal(err)
		}
		trainSteps(t, resumed, 2, 2)
		sameWeights(t, resumed.Model, device.Model)
	}
}

// TestOffloadOptimizerRefuses checks OffloadOptimizer's errors.
func TestOffloadOptimizerRefuses(t *testing.T) {
	start, _ := startingModels(t, 6)
	l := bf16Learner(t, start, AdamWConfig{Beta1: 0.9, Beta2: 0.98, Eps: 1e-8})
	for _, f := range []float64{0, -1, 1.5} {
		if err := l.OffloadOptimizer(testBackend(t), f); err == nil || !strings.Contains(err.Error(), "optimizer_offload_fraction") {
			t.Errorf("fraction %g: %v", f, err)
		}
	}
	trainSteps(t, l, 0, 1)
	if err := l.OffloadOptimizer(testBackend(t), 1); err == nil || !strings.Contains(err.Error(), "before the first step") {
		t.Errorf("after a step: %v", err)
	}
}

// TestTrainOffloadsInBFloat16 trains the smoke recipe in bfloat16 with the
// recipes' memory options (optimizer_cpu_offload on half the weights,
// offload_train, precision-aware remainders), through a warm start, two
// rollouts, evaluations and a checkpoint, and requires the final checkpoint's
// weights to equal bit for bit those of the run with everything kept on the
// device.
func TestTrainOffloadsInBFloat16(t *testing.T) {
	if testing.Short() {
		t.Skip("trains a tiny model twice")
	}
	train := func(offload bool) *qwen3.Model {
		cfg := smokeConfig(t)
		cfg.DType, cfg.UsePrecisionAwareOptimizer = "bfloat16", true
		cfg.OffloadTrain, cfg.OptimizerCPUOffload, cfg.OptimizerOffloadFraction = offload, offload, 0.5
		var log testLog
		err := Train(context.Background(), cfg, TrainOptions{Backend: testBackend(t), HostBackend: testBackend(t), Tools: arithTools{}, Progress: &log})
		if err != nil {
			t.Fatalf("%v\n%s", err, log)
		}
		dir, err := LatestCheckpoint(RunFolder(cfg.Save).CkptDir())
		if err != nil {
			t.Fatal(err)
		}
		model, _, err := LoadCheckpoint(dir, dtypes.BFloat16)
		if err != nil {
			t.Fatal(err)
		}
		return model
	}
	sameWeights(t, train(true), train(false))
}
