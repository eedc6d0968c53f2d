package grpo

import (
	"math"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/gomlx/compute"

	"github.com/mathrl/mathrl/gomlx_trainer/backend"
	"github.com/mathrl/mathrl/gomlx_trainer/backend/backendtest"
)

// dataParallelRecipe is the tiny recipe of the sharding tests: a global batch
// of 8 sequences in micro-batches of 4 (so 1, 2 and 4 devices split them) at
// learning rate 1e-4. AdamW divides each gradient by its own magnitude, so a
// float32 rounding difference in a near-zero gradient moves that weight by up
// to a fraction of the learning rate: at 1e-2 one device alone ends 6e-5 away
// from itself when its micro-batches are 2 rows instead of 4. At 1e-4 that is
// 6e-7, while each step still moves a weight by about 1e-4, so a gradient
// computed on part of the batch shows far above the tolerance.
func dataParallelRecipe() Config {
	c := Default()
	c.TinyModel, c.PromptData, c.Seed = "tiny", "arith", 5
	c.GlobalBatchSize, c.MicroBatchSize, c.NSamplesPerPrompt, c.RolloutBatchSize = 8, 4, 4, 2
	c.LR = 1e-4
	return c
}

// dataParallelBatches are the 3 optimizer steps' sequences: 8 each, of random
// lengths, masks (a tool response left out) and advantages, drawn from seed.
func dataParallelBatches(seed uint64) [][]Sequence {
	r := rand.New(rand.NewPCG(seed, 1))
	steps := make([][]Sequence, 3)
	for s := range steps {
		for range 8 {
			prompt := make([]int, 2+r.IntN(6))
			resp := make([]int, 1+r.IntN(12))
			mask := make([]float32, len(resp))
			lp := make([]float32, len(resp))
			for i := range prompt {
				prompt[i] = r.IntN(256)
			}
			for i := range resp {
				resp[i] = r.IntN(256)
				if i == 0 || r.IntN(5) > 0 {
					mask[i], lp[i] = 1, -5.6+0.5*float32(r.NormFloat64())
				}
			}
			steps[s] = append(steps[s], Sequence{Prompt: prompt, Response: resp, Mask: mask, LogProbs: lp, Advantage: r.NormFloat64()})
		}
	}
	return steps
}

// xlaCPUDevices opens XLA's CPU plugin with n devices, as mathrl train
// --backend xla-cpu --devices n does; it skips the test unless
// MATHRL_TEST_BACKEND is xla-cpu (the device count is XLA's alone) and the
// plugin is installed.
func xlaCPUDevices(t *testing.T, n int) compute.Backend {
	t.Helper()
	if k := backendtest.Kind(); k != backend.XLACPU {
		t.Skipf("several devices need XLA: %s=%s, not %s", backendtest.KindEnv, k, backend.XLACPU)
	}
	plugin := backendtest.XLACPUPlugin(t)
	// backend.New sets the GoMLX environment for the process; restore it after the test.
	t.Setenv(compute.ConfigEnvVar, os.Getenv(compute.ConfigEnvVar))
	t.Setenv("GOMLX_NO_AUTO_INSTALL", os.Getenv("GOMLX_NO_AUTO_INSTALL"))
	b, _, err := backend.New(backend.Options{Kind: backend.XLACPU, PJRTPlugin: plugin, NumDevices: n})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Finalize)
	return b
}

// trainDataParallel runs the recipe's 3 optimizer steps on n devices under
// sharding data (plainly on one for n = 1) and returns the final weights.
func trainDataParallel(t *testing.T, cfg Config, n int) map[string][]float32 {
	t.Helper()
	b := xlaCPUDevices(t, n)
	m, err := newPolicy(cfg)
	if err != nil {
		t.Fatal(err)
	}
	l := NewLearnerWith(b, m, lossConfig(cfg), adamConfig(cfg), cfg.RolloutTemperature, modelOptions(cfg))
	if err := l.ShardData(n); err != nil {
		t.Fatal(err)
	}
	for step, seqs := range dataParallelBatches(uint64(cfg.Seed)) {
		o := StepOptions{PerTokenLoss: cfg.CalculatePerTokenLoss, MicroBatch: cfg.MicroBatchSize, LR: cfg.LR}
		if _, _, err := l.Step(seqs, o); err != nil {
			t.Fatalf("%d devices, step %d: %v", n, step, err)
		}
	}
	return weightsOf(t, m)
}

// maxAbsDiff is the largest |a - b| over every weight.
func maxAbsDiff(t *testing.T, a, b map[string][]float32) float64 {
	t.Helper()
	d := 0.0
	for name, x := range a {
		y := b[name]
		if len(y) != len(x) {
			t.Fatalf("%s: %d values against %d", name, len(x), len(y))
		}
		for i := range x {
			d = max(d, math.Abs(float64(x[i]-y[i])))
		}
	}
	return d
}

// TestShardDataMatchesOneDevice is the correctness test of sharding data: the
// same recipe, global batch and seed, 3 optimizer steps on 1, 2 and 4 XLA CPU
// devices, end with the same weights (float32, within 1e-5); and the steps do
// move them (by far more than that), so a gradient left unreduced would show.
func TestShardDataMatchesOneDevice(t *testing.T) {
	cfg := dataParallelRecipe()
	start, err := newPolicy(cfg)
	if err != nil {
		t.Fatal(err)
	}
	initial := weightsOf(t, start)
	one := trainDataParallel(t, cfg, 1)
	t.Logf("1 device: the weights moved by up to %.3g", maxAbsDiff(t, one, initial))
	if moved := maxAbsDiff(t, one, initial); moved < 1e-4 {
		t.Fatalf("3 steps moved the weights by at most %.3g: the test cannot tell a wrong gradient", moved)
	}
	for _, n := range []int{2, 4} {
		got := trainDataParallel(t, cfg, n)
		d := maxAbsDiff(t, got, one)
		t.Logf("%d devices: max |w - w(1 device)| = %.3g after 3 steps", n, d)
		if d > 1e-5 {
			t.Errorf("%d devices: weights differ from the 1-device run by up to %.3g, want at most 1e-5", n, d)
		}
	}
}

// TestShardDataRowsMustSplit gives 4 devices a micro-batch of 2 rows: one
// error saying it does not split and what would.
func TestShardDataRowsMustSplit(t *testing.T) {
	cfg := dataParallelRecipe()
	b := xlaCPUDevices(t, 4)
	m, err := newPolicy(cfg)
	if err != nil {
		t.Fatal(err)
	}
	l := NewLearnerWith(b, m, lossConfig(cfg), adamConfig(cfg), cfg.RolloutTemperature, modelOptions(cfg))
	if err := l.ShardData(4); err != nil {
		t.Fatal(err)
	}
	_, _, err = l.Step(dataParallelBatches(1)[0], StepOptions{PerTokenLoss: true, MicroBatch: 2, LR: cfg.LR})
	if err == nil || !strings.Contains(err.Error(), "a micro-batch of 2 rows does not split over num_devices 4; want micro_batch_size a multiple of 4") {
		t.Errorf("Step = %v, want the micro-batch error", err)
	}
}
