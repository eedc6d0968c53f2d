package memplan_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/gomlx/compute/dtypes"

	"github.com/mathrl/mathrl/gomlx_trainer/backend"
	"github.com/mathrl/mathrl/gomlx_trainer/backend/backendtest"
	"github.com/mathrl/mathrl/gomlx_trainer/grpo"
	"github.com/mathrl/mathrl/gomlx_trainer/layout"
	"github.com/mathrl/mathrl/gomlx_trainer/memplan"
	"github.com/mathrl/mathrl/gomlx_trainer/qwen3"
)

// offloadEnv, set in a child test process, makes TestOffloadedStepPeakOnXLA
// run the measured steps (measureOffloadedStep) instead of the comparison.
const offloadEnv = "MATHRL_MEMPLAN_OFFLOAD"

// TestOffloadedStepPeakOnXLA takes two optimizer steps of layerHeavy in
// bfloat16 (float32 master) on one XLA CPU device with no offload and with
// optimizer_cpu_offload of all and of half the parameters (the host's
// update on the pure Go backend, so that XLA's dump holds the device's
// programs only), and compares the device's peak in the update with the
// plan's within 10%: the bytes of the device store's variables as the update
// starts, plus the largest temporaries and outputs of a device program of
// the update (the clip graph, each kept weight's update), from XLA's buffer
// assignment. The weights coming back from the host are not a program's;
// each replaces its old value as it arrives (one weight's transient).
func TestOffloadedStepPeakOnXLA(t *testing.T) {
	if spec := os.Getenv(offloadEnv); spec != "" {
		measureOffloadedStep(t, spec)
		return
	}
	if testing.Short() {
		t.Skip("compiles and runs training steps on XLA's CPU")
	}
	if k := backendtest.Kind(); k != backend.XLACPU {
		t.Skipf("the measurement reads XLA's buffer assignment: %s=%s, not %s", backendtest.KindEnv, k, backend.XLACPU)
	}
	backendtest.XLACPUPlugin(t)
	cfg := layerHeavy.config()
	var peaks []int64
	for _, fraction := range []float64{0, 1, 0.5} {
		dir := t.TempDir()
		m := runChild(t, "TestOffloadedStepPeakOnXLA", dir, fmt.Sprintf("%s=%s %g", offloadEnv, dir, fraction))
		got := m.Resident + programsFresh(t, filepath.Join(dir, "dump"), "AdamW_", "GradientClip")
		step := memplan.Step{DType: dtypes.BFloat16, Rows: shardedRows, SeqLen: layout.PadLength(shardedPrompt + shardedResponse),
			State: memplan.State{OffloadFraction: fraction}}
		plan := residentOf(memplan.TrainStep(cfg, step, memplan.XLA)) + memplan.OptimizerUpdate(cfg, step, memplan.XLA)
		ratio := float64(got) / float64(plan)
		t.Logf("optimizer_offload_fraction %g: device resident %.1f MB, peak in the update %.1f MB, plan %.1f MB (ratio %.3f)",
			fraction, float64(m.Resident)/1e6, float64(got)/1e6, float64(plan)/1e6, ratio)
		if ratio < 0.9 || ratio > 1.1 {
			t.Errorf("fraction %g: the update's device peak %d bytes, plan %d: off by more than 10%%", fraction, got, plan)
		}
		peaks = append(peaks, got)
	}
	if !(peaks[1] < peaks[2] && peaks[2] < peaks[0]) {
		t.Errorf("device peaks %v for no offload, all and half on the host: want all < half < none", peaks)
	}
}

// measureOffloadedStep runs, in the child process, two optimizer steps of
// layerHeavy in bfloat16 with spec's ("dir fraction") share of the
// optimizer on a Go backend, makes the accumulators again (as a step has
// them when its update starts) and writes the bytes of the device store's
// variables to dir.
func measureOffloadedStep(t *testing.T, spec string) {
	var dir string
	var fraction float64
	if _, err := fmt.Sscanf(spec, "%s %g", &dir, &fraction); err != nil {
		t.Fatalf("%s=%q: %v", offloadEnv, spec, err)
	}
	b, _, err := backend.New(backend.Options{Kind: backend.XLACPU, PJRTPlugin: backendtest.XLACPUPlugin(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Finalize()
	cfg := layerHeavy.config()
	model, err := qwen3.NewRandom(cfg, dtypes.BFloat16, 1)
	if err != nil {
		t.Fatal(err)
	}
	l := grpo.NewLearner(b, model, grpo.LossConfig{EpsLow: 0.2, EpsHigh: 0.28}, grpo.AdamWConfig{Beta1: 0.9, Beta2: 0.98, Eps: 1e-8, ClipNorm: 1}, 1)
	if fraction > 0 {
		host, _, err := backend.New(backend.Options{Kind: backend.CPU})
		if err != nil {
			t.Fatal(err)
		}
		defer host.Finalize()
		if err := l.OffloadOptimizer(host, fraction); err != nil {
			t.Fatal(err)
		}
	}
	seqs := sequences(rand.New(rand.NewPCG(1, 2)), shardedRows, shardedPrompt, shardedResponse, cfg.VocabSize)
	for range 2 {
		if _, _, err := l.Step(seqs, grpo.StepOptions{MicroBatch: shardedRows, PerTokenLoss: true, LR: 1e-6}); err != nil {
			t.Fatal(err)
		}
	}
	if err := model.Store.InitializeVariables(b, nil); err != nil {
		t.Fatal(err)
	}
	var m measured
	for v := range model.Store.IterVariables() {
		if v.HasValue() {
			m.Resident += int64(v.Shape().Memory())
		}
	}
	writeMeasured(t, dir, m)
}
