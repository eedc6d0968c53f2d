package grpo

import (
	"context"
	"errors"
	"maps"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/gomlx/compute"
	"github.com/gomlx/compute/dtypes"
	mlmodel "github.com/gomlx/gomlx/ml/model"

	"github.com/mathrl/mathrl/gomlx_trainer/backend"
	"github.com/mathrl/mathrl/gomlx_trainer/backend/backendtest"
	"github.com/mathrl/mathrl/gomlx_trainer/layout"
	"github.com/mathrl/mathrl/gomlx_trainer/sampler"
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
func xlaCPUDevices(t testing.TB, n int) compute.Backend {
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

// trainDataParallel runs the recipe's 3 optimizer steps on n devices as
// sharding says (plainly on one for n = 1) and returns the final weights.
func trainDataParallel(t *testing.T, cfg Config, n int, sharding string) map[string][]float32 {
	t.Helper()
	b := xlaCPUDevices(t, n)
	m, err := newPolicy(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.flowRLHead() {
		if err := InitFlowRLHead(m.Store, m.Config.Hidden, cfg.FlowRLHeadLayers, uint64(cfg.Seed)); err != nil {
			t.Fatal(err)
		}
	}
	l := NewLearnerWith(b, m, lossConfig(cfg), adamConfig(cfg), cfg.RolloutTemperature, modelOptions(cfg))
	if err := l.Shard(n, sharding); err != nil {
		t.Fatal(err)
	}
	for step, seqs := range dataParallelBatches(uint64(cfg.Seed)) {
		o := StepOptions{PerTokenLoss: cfg.CalculatePerTokenLoss, MicroBatch: cfg.MicroBatchSize, MaxTokens: cfg.MaxTokensPerMicroBatch, LR: cfg.LR}
		if _, _, err := l.Step(seqs, o); err != nil {
			t.Fatalf("%d devices, step %d: %v", n, step, err)
		}
	}
	if sharding == layout.FSDP && n > 1 {
		checkShardsFSDP(t, m.Store, n)
	}
	weights := weightsOf(t, m)
	maps.Copy(weights, headWeights(t, m.Store)) // FlowRL's log Z head, if any, by path
	return weights
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
func TestShardDataMatchesOneDevice(t *testing.T) { checkMatchesOneDevice(t, layout.Data) }

// TestShardFSDPMatchesOneDevice is the same test for sharding fsdp, which
// also checks that every weight, accumulator and moment is held in shards
// (checkShardsFSDP): a run left replicated would pass the equality alone.
func TestShardFSDPMatchesOneDevice(t *testing.T) { checkMatchesOneDevice(t, layout.FSDP) }

// TestShardDataFlowRLHeadMatchesOneDevice is TestShardDataMatchesOneDevice
// with FlowRL's learned log Z head (the sequences' old log-probs stand for
// the reference's): the policy's and the head's weights must end as on one
// device, and the head's must move.
func TestShardDataFlowRLHeadMatchesOneDevice(t *testing.T) {
	checkMatchesOneDevice(t, layout.Data, func(c *Config) { c.AdvantageEstimator, c.FlowRLLogZ = "flowrl", "head" })
}

func checkMatchesOneDevice(t *testing.T, sharding string, edits ...func(*Config)) {
	cfg := dataParallelRecipe()
	for _, edit := range edits {
		edit(&cfg)
	}
	start, err := newPolicy(cfg)
	if err != nil {
		t.Fatal(err)
	}
	initial := weightsOf(t, start)
	if cfg.flowRLHead() {
		if err := InitFlowRLHead(start.Store, start.Config.Hidden, cfg.FlowRLHeadLayers, uint64(cfg.Seed)); err != nil {
			t.Fatal(err)
		}
		maps.Copy(initial, headWeights(t, start.Store))
	}
	one := trainDataParallel(t, cfg, 1, sharding)
	for _, v := range flowHeadVars(start.Store) {
		if d := maxAbsDiff(t, map[string][]float32{v.Path(): one[v.Path()]}, map[string][]float32{v.Path(): initial[v.Path()]}); d == 0 {
			t.Errorf("1 device: head variable %s did not move", v.Path())
		}
	}
	t.Logf("1 device: the weights moved by up to %.3g", maxAbsDiff(t, one, initial))
	if moved := maxAbsDiff(t, one, initial); moved < 1e-4 {
		t.Fatalf("3 steps moved the weights by at most %.3g: the test cannot tell a wrong gradient", moved)
	}
	for _, n := range []int{2, 4} {
		got := trainDataParallel(t, cfg, n, sharding)
		d := maxAbsDiff(t, got, one)
		t.Logf("sharding %s, %d devices: max |w - w(1 device)| = %.3g after 3 steps", sharding, n, d)
		if d > 1e-5 {
			t.Errorf("sharding %s, %d devices: weights differ from the 1-device run by up to %.3g, want at most 1e-5", sharding, n, d)
		}
	}
}

// checkShardsFSDP checks that after training under fsdp on n devices every
// variable of rank ≥ 1 in store (weights, accumulators, moments) is held as
// n shards of 1/n of its largest axis, and the scalar step counter whole.
func checkShardsFSDP(t *testing.T, store *mlmodel.Store, n int) {
	t.Helper()
	count := 0
	for v := range store.IterVariables() {
		dt, err := v.DistributedValue()
		if err != nil {
			t.Fatalf("%s: %v", v.Path(), err)
		}
		dims := v.Shape().Dimensions
		want := slices.Clone(dims)
		if len(dims) > 0 {
			axis := slices.Index(dims, slices.Max(dims))
			want[axis] /= n
			count++
		}
		if got := dt.ShardShape().Dimensions; len(dt.Shards()) != n || !slices.Equal(got, want) {
			t.Errorf("%s %v: %d shards of %v, want %d of %v", v.Path(), dims, len(dt.Shards()), got, n, want)
		}
	}
	if count == 0 {
		t.Fatal("no variable to check")
	}
}

// TestShardPadsRows cuts each step's 8 sequences into micro-batches that 4
// devices cannot split: of 3, 3 and 2 rows, and packed by tokens (at most 64
// padded tokens each). The learner pads them with masked-out rows (padRows),
// and the weights end as on one device.
func TestShardPadsRows(t *testing.T) {
	for _, cut := range []struct {
		name             string
		micro, maxTokens int
		shardings        []string
	}{{"micro-batches of 3", 3, 0, []string{layout.Data, layout.FSDP}}, {"packed by tokens", 0, 64, []string{layout.FSDP}}} {
		cfg := dataParallelRecipe()
		cfg.MicroBatchSize, cfg.MaxTokensPerMicroBatch = cut.micro, cut.maxTokens
		one := trainDataParallel(t, cfg, 1, layout.Replicate)
		for _, sharding := range cut.shardings {
			d := maxAbsDiff(t, trainDataParallel(t, cfg, 4, sharding), one)
			t.Logf("sharding %s, 4 devices, %s: max |w - w(1 device)| = %.3g", sharding, cut.name, d)
			if d > 1e-5 {
				t.Errorf("sharding %s, %s: weights differ from the 1-device run by up to %.3g, want at most 1e-5", sharding, cut.name, d)
			}
		}
	}
}

// TestShardFSDPAxisMustSplit gives fsdp 8 devices for the tiny model, whose
// embedding's 300 rows do not split 8 ways: one error naming the variable,
// its shape and the device counts that would work.
func TestShardFSDPAxisMustSplit(t *testing.T) {
	cfg := dataParallelRecipe()
	b := xlaCPUDevices(t, 8)
	m, err := newPolicy(cfg)
	if err != nil {
		t.Fatal(err)
	}
	l := NewLearnerWith(b, m, lossConfig(cfg), adamConfig(cfg), cfg.RolloutTemperature, modelOptions(cfg))
	err = l.Shard(8, layout.FSDP)
	want := "grpo: sharding fsdp: /model/embed_tokens/weight [300 64] does not split over num_devices 8 along its largest axis; " +
		"num_devices must divide every variable's largest axis (here 1, 2 or 4), or use sharding data"
	if err == nil || err.Error() != want {
		t.Errorf("Shard = %v\nwant %s", err, want)
	}
}

// TestCheckpointMovesAcrossDeviceCounts runs the smoke recipe under fsdp on 4
// devices, stops it after its first rollout (as Ctrl-C does), and resumes the
// checkpoint it saved on 2 devices (fsdp) and on 1 (replicate): the HF
// safetensors and the optimizer state hold whole tensors, so each resumed run
// continues where the 4-device one stopped and ends with the weights of the
// 4-device run that never stopped (within float32 rounding of the devices'
// different reduction orders), its train.jsonl one line per step. An entropy
// bonus gives every step a gradient, so the steps after the stop move the
// weights by far more than the tolerance.
func TestCheckpointMovesAcrossDeviceCounts(t *testing.T) {
	if testing.Short() {
		t.Skip("trains a tiny model")
	}
	b := xlaCPUDevices(t, 4)
	cfg := smokeConfig(t)
	cfg.Backend, cfg.NumDevices, cfg.Sharding = backend.XLACPU, 4, layout.FSDP
	cfg.MicroBatchSize, cfg.SaveInterval = 4, 0
	cfg.EntropyCoef = 0.01 // a gradient in every step, though the random policy earns no reward
	var log testLog
	if err := Train(context.Background(), cfg, TrainOptions{Backend: b, Tools: arithTools{}, Progress: &log}); err != nil {
		t.Fatalf("%v\n%s", err, log)
	}
	final, _ := LatestCheckpoint(RunFolder(cfg.Save).CkptDir())
	want := checkpointWeights(t, final)

	stopped := cfg
	stopped.Save = filepath.Join(t.TempDir(), "stopped")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	err := Train(ctx, stopped, TrainOptions{Backend: b, Tools: arithTools{}, Progress: &log, OnRollout: func(RolloutLog) { cancel() }})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("interrupted run returned %v, want context.Canceled\n%s", err, log)
	}
	kept := filepath.Join(t.TempDir(), "kept") // the stopped run, resumed in its own folder (save may not change)
	if err := os.CopyFS(kept, os.DirFS(stopped.Save)); err != nil {
		t.Fatal(err)
	}
	stop, _ := LatestCheckpoint(RunFolder(kept).CkptDir())
	if moved := maxAbsDiff(t, want, checkpointWeights(t, stop)); moved < 1e-4 {
		t.Fatalf("the steps after the stop moved the weights by at most %.3g: the test cannot tell a resume that loses them", moved)
	}
	for _, on := range []struct {
		devices  int
		sharding string
	}{{2, layout.FSDP}, {1, layout.Replicate}} {
		resumed := stopped
		if err := os.RemoveAll(resumed.Save); err != nil {
			t.Fatal(err)
		}
		if err := os.CopyFS(resumed.Save, os.DirFS(kept)); err != nil {
			t.Fatal(err)
		}
		resumed.NumDevices, resumed.Sharding = on.devices, on.sharding
		if err := Train(context.Background(), resumed, TrainOptions{Backend: b, Tools: arithTools{}, Resume: true, Progress: &log}); err != nil {
			t.Fatalf("resume on %d devices: %v\n%s", on.devices, err, log)
		}
		steps, _ := RunFolder(resumed.Save).ReadSteps(1 << 30)
		if len(steps) != cfg.NumRollout*cfg.StepsPerRollout() {
			t.Errorf("resumed on %d devices: train.jsonl has %d steps, want %d", on.devices, len(steps), cfg.NumRollout*cfg.StepsPerRollout())
		}
		last, _ := LatestCheckpoint(RunFolder(resumed.Save).CkptDir())
		d := maxAbsDiff(t, checkpointWeights(t, last), want)
		t.Logf("resumed on %d devices (%s): max |w - w(4 devices, not stopped)| = %.3g", on.devices, on.sharding, d)
		if d > 1e-5 {
			t.Errorf("resumed on %d devices: final weights differ from the uninterrupted 4-device run by up to %.3g, want at most 1e-5", on.devices, d)
		}
	}
}

// checkpointWeights loads a checkpoint folder's weights (whole tensors, as
// any device count reads them).
func checkpointWeights(t *testing.T, dir string) map[string][]float32 {
	t.Helper()
	m, _, err := LoadCheckpoint(dir, dtypes.Float32)
	if err != nil {
		t.Fatal(err)
	}
	return weightsOf(t, m)
}

// BenchmarkShardedStep times optimizer steps of the "small" model (6 layers,
// hidden 256) on 16 sequences of up to 256 tokens in micro-batches of 8, on
// one XLA CPU device and on 4 under sharding data and fsdp, in turn in the
// same run, and reports each 4-device step time over the 1-device one. The 4
// CPU devices share the machine's cores, so this measures the cost of the
// partitioned program and its collectives, not a speed-up. Run it with
//
//	MATHRL_TEST_BACKEND=xla-cpu go test ./gomlx_trainer/grpo -run '^$' -bench ShardedStep -benchtime 5x
func BenchmarkShardedStep(b *testing.B) {
	bk := xlaCPUDevices(b, 4)
	cfg := dataParallelRecipe()
	cfg.TinyModel = "small"
	seqs := longTailSequences(16, 32, 3)
	o := StepOptions{PerTokenLoss: true, MicroBatch: 8, LR: 1e-5}
	ways := []struct {
		name     string
		devices  int
		sharding string
	}{{"1", 1, layout.Replicate}, {"data4", 4, layout.Data}, {"fsdp4", 4, layout.FSDP}}
	learners := make([]*Learner, len(ways))
	for i, w := range ways {
		m, err := newPolicy(cfg)
		if err != nil {
			b.Fatal(err)
		}
		learners[i] = NewLearnerWith(bk, m, lossConfig(cfg), adamConfig(cfg), 1, modelOptions(cfg))
		if err := learners[i].Shard(w.devices, w.sharding); err != nil {
			b.Fatal(err)
		}
		if _, _, err := learners[i].Step(seqs, o); err != nil { // compiles
			b.Fatal(err)
		}
	}
	spent := make([]time.Duration, len(ways))
	b.ResetTimer()
	for range b.N {
		for i, l := range learners {
			start := time.Now()
			if _, _, err := l.Step(seqs, o); err != nil {
				b.Fatal(err)
			}
			spent[i] += time.Since(start)
		}
	}
	b.StopTimer()
	for i := 1; i < len(ways); i++ {
		b.ReportMetric(spent[i].Seconds()/spent[0].Seconds(), "time-"+ways[i].name+"/1")
	}
	b.ReportMetric(spent[0].Seconds()/float64(b.N), "s/step-1")
}

// TestSamplerOnMeshMatchesOneDevice trains the tiny recipe one step on 4
// devices (so that under fsdp the weights are held in shards), then samples
// 6 prompts (3 distinct ones twice, padded to 8 rows) for 40 tokens on the
// learner's mesh, the batch split over the devices, each distinct prompt
// prefilled once and copied into its two rows on two devices, the cache
// growing on the way; and again with a sampler on one device reading the
// same weights whole, every prompt prefilled for itself. The tokens are the
// same and the log-probs agree within 1e-5.
func TestSamplerOnMeshMatchesOneDevice(t *testing.T) {
	for _, sharding := range []string{layout.Data, layout.FSDP} {
		t.Run(sharding, func(t *testing.T) {
			b := xlaCPUDevices(t, 4)
			cfg := dataParallelRecipe()
			m, err := newPolicy(cfg)
			if err != nil {
				t.Fatal(err)
			}
			l := NewLearnerWith(b, m, lossConfig(cfg), adamConfig(cfg), cfg.RolloutTemperature, modelOptions(cfg))
			if err := l.Shard(4, sharding); err != nil {
				t.Fatal(err)
			}
			if _, _, err := l.Step(dataParallelBatches(2)[0], StepOptions{PerTokenLoss: true, MicroBatch: 4, LR: cfg.LR}); err != nil {
				t.Fatal(err)
			}
			var prompts [][]int
			distinct := 0 // tokens prefilled once per distinct prompt
			for i := range 6 {
				p := make([]int, 3+5*(i%3))
				for k := range p {
					p[k] = (7*(i%3) + 3*k) % 256
				}
				prompts = append(prompts, p)
				if i < 3 {
					distinct += len(p) - 1
				}
			}
			opts := sampler.Options{MaxNewTokens: 40, Temperature: 1, Seed: 11, StopIDs: []int{}}
			onMesh := sampler.New(b, m)
			if err := onMesh.OnMesh(l.Mesh()); err != nil {
				t.Fatal(err)
			}
			sess, err := onMesh.Start(prompts, opts)
			if err != nil {
				t.Fatal(err)
			}
			if sess.Devices() != 4 || sess.RowsPerDevice() != 2 || sess.Prefilled() != distinct {
				t.Fatalf("the session runs on %d devices, %d rows each, %d prompt tokens prefilled; want 4, 2 and %d",
					sess.Devices(), sess.RowsPerDevice(), sess.Prefilled(), distinct)
			}
			if err := sess.Run(context.Background()); err != nil {
				t.Fatal(err)
			}
			got := sess.Results()
			sess.Close()
			opts.PrefillEach = true
			want, err := sampler.New(b, m).Generate(context.Background(), prompts, opts)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(prompts) {
				t.Fatalf("%d results for %d prompts", len(got), len(prompts))
			}
			worst := 0.0
			for i := range want {
				if !slices.Equal(got[i].IDs, want[i].IDs) {
					t.Fatalf("prompt %d: %v on the mesh, %v on one device", i, got[i].IDs, want[i].IDs)
				}
				for k := range want[i].LogProbs {
					worst = max(worst, math.Abs(float64(got[i].LogProbs[k]-want[i].LogProbs[k])))
				}
			}
			t.Logf("sharding %s: the same %d tokens; log-probs within %.3g", sharding, 6*40, worst)
			if worst > 1e-5 {
				t.Errorf("log-probs differ by up to %.3g, want at most 1e-5", worst)
			}
		})
	}
}
