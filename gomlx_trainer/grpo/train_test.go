package grpo

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"math/big"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/gomlx/compute/dtypes"

	"github.com/mathrl/mathrl/analysis/metrics"
	"github.com/mathrl/mathrl/gomlx_trainer/qwen3"
	"github.com/mathrl/mathrl/gomlx_trainer/toolloop"
)

// arithTools answers the warm-start traces' calls, print(A*B) and print(A+B),
// exactly (with math/big) and fails on anything else, as Python would.
type arithTools struct{}

var printCall = regexp.MustCompile(`^print\((\d+)([*+])(\d+)\)$`)

func (arithTools) Run(_ context.Context, code string) (toolloop.ToolOutput, error) {
	m := printCall.FindStringSubmatch(code)
	if m == nil {
		return toolloop.ToolOutput{Text: "Traceback (most recent call last):\nSyntaxError: invalid syntax\n[exit status 1]", Failed: true}, nil
	}
	a, _ := new(big.Int).SetString(m[1], 10)
	b, _ := new(big.Int).SetString(m[3], 10)
	if m[2] == "*" {
		a.Mul(a, b)
	} else {
		a.Add(a, b)
	}
	return toolloop.ToolOutput{Text: a.String() + "\n"}, nil
}

// smokeConfig is the demo recipe cut down to a few seconds, on a random tiny
// model with a short warm start whose traces call the tool as the demo's base
// was taught to (configs/demo-base.yaml).
func smokeConfig(t *testing.T) Config {
	t.Helper()
	cfg := demoRecipe(t)
	cfg.TinyModel = "tiny"
	base, err := LoadRecipe(filepath.Join("..", "..", "configs", "demo-base.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	cfg.SFTToolFraction, cfg.SFTUnprintedFraction, cfg.SFTLR = base.SFTToolFraction, base.SFTUnprintedFraction, base.SFTLR
	cfg.Save = filepath.Join(t.TempDir(), "run")
	cfg.NumRollout, cfg.RolloutBatchSize, cfg.NSamplesPerPrompt = 2, 2, 4
	cfg.GlobalBatchSize, cfg.MicroBatchSize = 4, 2
	cfg.RolloutMaxResponseLen, cfg.EvalMaxResponseLen = 48, 48
	cfg.SFTSteps, cfg.SFTBatchSize = 2, 4
	cfg.EvalMaxPrompts, cfg.EvalInterval, cfg.SaveInterval = 4, 1, 1
	return cfg
}

func TestTrainSmoke(t *testing.T) {
	if testing.Short() {
		t.Skip("trains a tiny model")
	}
	cfg := smokeConfig(t)
	// Neither `mathrl eval`'s default seed nor its default batch: the final
	// evaluation's 8 samples come in batches of 3, at seeds 7, 8 and 9.
	cfg.Seed, cfg.SamplingBatchSize = 7, 3
	var log testLog
	err := Train(context.Background(), cfg, TrainOptions{Backend: testBackend(t), Tools: arithTools{}, Progress: &log})
	if err != nil {
		t.Fatalf("%v\n%s", err, log)
	}
	if want := "mathrl: run folder " + cfg.Save + "\n"; !strings.Contains(log.String(), want) {
		t.Errorf("the log does not say where the run is (%q):\n%s", want, log)
	}
	run := RunFolder(cfg.Save)
	steps, err := run.ReadSteps(1 << 30)
	if err != nil {
		t.Fatal(err)
	}
	if len(steps) != cfg.NumRollout*cfg.StepsPerRollout() {
		t.Errorf("%d metric lines, want %d", len(steps), cfg.NumRollout*cfg.StepsPerRollout())
	}
	for _, f := range []string{"config.json", "provenance.json", "eval.jsonl", "samples/step-000000.jsonl", "figures/training_run.png"} {
		if _, err := os.Stat(filepath.Join(cfg.Save, f)); err != nil {
			t.Errorf("run folder: %v", err)
		}
	}
	dir, _ := LatestCheckpoint(run.CkptDir())
	if filepath.Base(dir) != CheckpointName(len(steps)) {
		t.Fatalf("latest checkpoint %q", dir)
	}

	// `mathrl eval` on the final checkpoint, its seed and batch left to their
	// defaults, gives the trainer's final evaluation, sample for sample.
	req, err := EvalDefaults(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "eval.jsonl")
	req.Model, req.Data, req.MaxPrompts, req.K = dir, cfg.EvalPromptData, cfg.EvalMaxPrompts, cfg.NSamplesPerEvalPrompt
	req.Budget, req.Scorer, req.UseTools, req.MaxTurns = cfg.EvalMaxResponseLen, cfg.RMType, cfg.UseTools, cfg.MaxTurns
	req.Temperature, req.TopP, req.DType, req.Out, req.Tools = cfg.EvalTemperature, cfg.EvalTopP, cfg.DType, out, arithTools{}
	sum, err := RunEval(context.Background(), testBackend(t), req)
	if err != nil {
		t.Fatal(err)
	}
	if sum.K != cfg.NSamplesPerEvalPrompt || len(sum.Problems) != cfg.EvalMaxPrompts {
		t.Errorf("summary %+v", sum)
	}
	got := readSamples(t, out)
	want := readSamples(t, filepath.Join(cfg.Save, "samples", CheckpointName(len(steps))+".jsonl"))
	if len(got) != len(want) || len(got) == 0 {
		t.Fatalf("eval wrote %d samples, the trainer %d", len(got), len(want))
	}
	for i := range got {
		g, w := got[i], want[i]
		g.Model, w.Model = "", ""
		if g != w {
			t.Errorf("sample %d: mathrl eval %+v, trainer %+v", i, g, w)
		}
	}
	t.Logf("%s", log)
}

func readSamples(t *testing.T, path string) []metrics.Sample {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s, err := metrics.ReadSamples(f, path)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

type testLog struct{ b []byte }

func (l *testLog) Write(p []byte) (int, error) { l.b = append(l.b, p...); return len(p), nil }
func (l *testLog) String() string              { return string(l.b) }

// TestInterruptAndResumeIsExact runs 3 rollouts straight, and the same run
// interrupted (as by Ctrl-C) after its first rollout then resumed, and
// requires the same weights bit for bit and the same losses in train.jsonl.
func TestInterruptAndResumeIsExact(t *testing.T) {
	if testing.Short() {
		t.Skip("trains a tiny model")
	}
	backend := testBackend(t)
	straight := smokeConfig(t)
	straight.NumRollout, straight.SaveInterval = 3, 0
	var log testLog
	if err := Train(context.Background(), straight, TrainOptions{Backend: backend, Tools: arithTools{}, Progress: &log}); err != nil {
		t.Fatalf("%v\n%s", err, log)
	}

	broken := straight
	broken.Save = filepath.Join(t.TempDir(), "broken")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cancelAfterFirst := func(RolloutLog) { cancel() } // a Ctrl-C once the first rollout is done
	err := Train(ctx, broken, TrainOptions{Backend: backend, Tools: arithTools{}, Progress: &log, OnRollout: cancelAfterFirst})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("interrupted run returned %v, want context.Canceled\n%s", err, log)
	}
	dir, _ := LatestCheckpoint(RunFolder(broken.Save).CkptDir())
	if filepath.Base(dir) != CheckpointName(straight.StepsPerRollout()) {
		t.Fatalf("after Ctrl-C the newest checkpoint is %q, want the one after rollout 1", dir)
	}
	if err := Train(context.Background(), broken, TrainOptions{Backend: backend, Tools: arithTools{}, Resume: true, Progress: &log}); err != nil {
		t.Fatalf("resume: %v\n%s", err, log)
	}

	a, _ := LatestCheckpoint(RunFolder(straight.Save).CkptDir())
	b, _ := LatestCheckpoint(RunFolder(broken.Save).CkptDir())
	ma, _, err := LoadCheckpoint(a, dtypes.Float32)
	if err != nil {
		t.Fatal(err)
	}
	mb, _, err := LoadCheckpoint(b, dtypes.Float32)
	if err != nil {
		t.Fatal(err)
	}
	wa, wb := weightsOf(t, ma), weightsOf(t, mb)
	for name, w := range wa {
		for i := range w {
			if wb[name][i] != w[i] {
				t.Fatalf("%s[%d]: resumed %v, uninterrupted %v", name, i, wb[name][i], w[i])
			}
		}
	}
	sa, _ := RunFolder(straight.Save).ReadSteps(1 << 30)
	sb, _ := RunFolder(broken.Save).ReadSteps(1 << 30)
	if len(sa) != len(sb) || len(sa) != 3*straight.StepsPerRollout() {
		t.Fatalf("train.jsonl: %d and %d lines", len(sa), len(sb))
	}
	for i := range sa {
		// everything but the timings, so that a resume that loses the sampling RNG shows in the lengths
		a, b := withoutTimes(sa[i]), withoutTimes(sb[i])
		if !reflect.DeepEqual(a, b) {
			t.Errorf("step %d: straight %+v, resumed %+v", i+1, a, b)
		}
	}
}

// TestInterruptedEvaluationResumes interrupts a run (as by Ctrl-C) inside an
// evaluation between rollouts, resumes it, interrupts it inside its final
// evaluation, and resumes it again: each stop must leave a checkpoint of the
// step it reached (with save_interval 0 there is no other), and the twice
// resumed run must end with the weights, train.jsonl, eval.jsonl and final
// samples of a run that never stopped.
func TestInterruptedEvaluationResumes(t *testing.T) {
	if testing.Short() {
		t.Skip("trains a tiny model")
	}
	backend := testBackend(t)
	straight := smokeConfig(t)
	straight.SaveInterval = 0
	var log testLog
	if err := Train(context.Background(), straight, TrainOptions{Backend: backend, Tools: arithTools{}, Progress: &log}); err != nil {
		t.Fatalf("%v\n%s", err, log)
	}

	broken := straight
	broken.Save = filepath.Join(t.TempDir(), "broken")
	run := RunFolder(broken.Save)
	mid, final := straight.StepsPerRollout(), straight.NumRollout*straight.StepsPerRollout()
	for i, step := range []int{mid, final} {
		ctx, cancel := context.WithCancel(context.Background())
		w := &cancelOn{log: &log, line: fmt.Sprintf("mathrl: eval at step %d: sampling", step), cancel: cancel}
		err := Train(ctx, broken, TrainOptions{Backend: backend, Tools: arithTools{}, Resume: i > 0, Progress: w})
		cancel()
		if !errors.Is(err, context.Canceled) || !w.seen {
			t.Fatalf("run interrupted in the evaluation at step %d returned %v, want context.Canceled\n%s", step, err, log)
		}
		if dir, _ := LatestCheckpoint(run.CkptDir()); filepath.Base(dir) != CheckpointName(step) {
			t.Fatalf("after Ctrl-C in the evaluation at step %d the newest checkpoint is %q", step, dir)
		}
	}
	if err := Train(context.Background(), broken, TrainOptions{Backend: backend, Tools: arithTools{}, Resume: true, Progress: &log}); err != nil {
		t.Fatalf("resume: %v\n%s", err, log)
	}
	sameFinalCheckpoint(t, straight.Save, broken.Save)
	sameStepLines(t, straight.Save, broken.Save)
	a, b := readFile(t, RunFolder(straight.Save).EvalsFile()), readFile(t, run.EvalsFile())
	if !bytes.Equal(a, b) {
		t.Errorf("eval.jsonl: resumed run's\n%s\nuninterrupted run's\n%s", b, a)
	}
	samples := filepath.Join("samples", CheckpointName(final)+".jsonl")
	sa, sb := readSamples(t, filepath.Join(straight.Save, samples)), readSamples(t, filepath.Join(broken.Save, samples))
	if len(sa) != len(sb) || len(sa) == 0 {
		t.Fatalf("%s: %d and %d samples", samples, len(sa), len(sb))
	}
	for i := range sa {
		sa[i].Model, sb[i].Model = "", "" // the run folders' names
		if sa[i] != sb[i] {
			t.Errorf("%s sample %d: resumed %+v, uninterrupted %+v", samples, i, sb[i], sa[i])
		}
	}
}

// cancelOn passes a run's progress output to log and calls cancel when a
// line begins with line, as a Ctrl-C at that point would.
type cancelOn struct {
	log    *testLog
	line   string
	cancel func()
	seen   bool
}

func (c *cancelOn) Write(p []byte) (int, error) {
	if strings.HasPrefix(string(p), c.line) {
		c.seen = true
		c.cancel()
	}
	return c.log.Write(p)
}

// withoutTimes is m without its wall-clock fields and its compiles (a
// resumed run compiles its graphs again).
func withoutTimes(m metrics.StepMetrics) metrics.StepMetrics {
	m.RolloutSeconds, m.ToolSeconds, m.ScoreSeconds, m.TrainSeconds, m.TokensPerSecond = 0, 0, 0, 0, 0
	m.RolloutCompileSeconds, m.RolloutCompiles, m.TrainCompileSeconds, m.TrainCompiles = nil, nil, nil, nil
	return m
}

// TestNonFiniteLossStops drives the weights to overflow with an absurd
// learning rate: the run must stop with ErrNonFinite and leave the newest good
// checkpoint as it was.
func TestNonFiniteLossStops(t *testing.T) {
	if testing.Short() {
		t.Skip("trains a tiny model")
	}
	cfg := smokeConfig(t)
	cfg.SFTSteps, cfg.NumRollout, cfg.SaveInterval, cfg.EvalPromptData = 0, 4, 1, ""
	// AdamW moves a weight by about the learning rate a step, in the direction of
	// its first gradient, even once the gradients vanish (as they do on XLA, whose
	// norms turn overflowing activations into zeros): 3e38 a step overflows float32
	// (3.4e38) at the second, and the next loss is NaN on any backend.
	cfg.LR, cfg.ClipGrad, cfg.GlobalBatchSize = 3e38, 0, 8
	cfg.EntropyCoef = 0.01 // a gradient even when every advantage is 0
	var log testLog
	err := Train(context.Background(), cfg, TrainOptions{Backend: testBackend(t), Tools: arithTools{}, Progress: &log})
	if !errors.Is(err, ErrNonFinite) {
		t.Fatalf("Train returned %v, want ErrNonFinite\n%s", err, log)
	}
	steps, _ := RunFolder(cfg.Save).ReadSteps(1 << 30)
	dir, _ := LatestCheckpoint(RunFolder(cfg.Save).CkptDir())
	if len(steps) == 0 || filepath.Base(dir) != CheckpointName(len(steps)) {
		t.Errorf("after %d good steps the newest checkpoint is %q", len(steps), dir)
	}
	t.Logf("stopped with: %v", err)
}

// TestSeedRecipesRunOnTinyModel loads both seed recipes, swaps in a random
// tiny model and small sizes (the rest of each recipe, loss, optimizer,
// scorer and tools, stays as it is) and runs one rollout with its optimizer
// steps: 4 for the retool recipe (samples / global batch = 4 as in the card),
// 1 for the math recipe.
func TestSeedRecipesRunOnTinyModel(t *testing.T) {
	if testing.Short() {
		t.Skip("trains a tiny model")
	}
	problems := filepath.Join("testdata", "problems.jsonl")
	for _, tc := range []struct {
		recipe                string
		prompts, group, batch int
		wantSteps             int
	}{
		{"retool-grpo-qwen3-4b.yaml", 2, 8, 4, 4},
		{"math-grpo-qwen3-8b.yaml", 2, 8, 16, 1},
	} {
		t.Run(tc.recipe, func(t *testing.T) {
			cfg, err := LoadRecipe(filepath.Join("..", "..", "configs", tc.recipe))
			if err != nil {
				t.Fatal(err)
			}
			cfg.TinyModel, cfg.Backend, cfg.DType = "tiny", "cpu", "float32"
			cfg.PromptData, cfg.EvalPromptData, cfg.EvalMaxPrompts = problems, problems, 2
			cfg.NumRollout, cfg.RolloutBatchSize, cfg.NSamplesPerPrompt = 1, tc.prompts, tc.group
			cfg.GlobalBatchSize, cfg.MicroBatchSize = tc.batch, 4
			cfg.RolloutMaxResponseLen, cfg.EvalMaxResponseLen, cfg.NSamplesPerEvalPrompt = 24, 24, 2
			cfg.Save = filepath.Join(t.TempDir(), "run")
			// The tool spec makes a 1,000-token prompt; on a CPU the test leaves it out
			// (its rendering is the tokenizer's to test).
			cfg.OfferToolSpec = false
			var log testLog
			if err := Train(context.Background(), cfg, TrainOptions{Backend: testBackend(t), Tools: arithTools{}, Progress: &log}); err != nil {
				t.Fatalf("%v\n%s", err, log)
			}
			steps, err := RunFolder(cfg.Save).ReadSteps(1 << 30)
			if err != nil {
				t.Fatal(err)
			}
			if len(steps) != tc.wantSteps {
				t.Errorf("%d optimizer steps, want %d", len(steps), tc.wantSteps)
			}
			for _, s := range steps {
				if s.LR != cfg.LR || s.Samples != tc.prompts*tc.group {
					t.Errorf("step %+v", s)
				}
			}
		})
	}
}

// TestResumeWithoutCheckpointStarts resumes a run folder that a crash left
// before the first checkpoint (config.json, half a train.jsonl line, an empty
// ckpt folder and a checkpoint being filled): the run must start, and end as
// the same run started afresh does, line for line.
func TestResumeWithoutCheckpointStarts(t *testing.T) {
	if testing.Short() {
		t.Skip("trains a tiny model")
	}
	backend := testBackend(t)
	fresh := smokeConfig(t)
	fresh.NumRollout, fresh.SFTSteps, fresh.EvalPromptData = 1, 0, ""
	var log testLog
	if err := Train(context.Background(), fresh, TrainOptions{Backend: backend, Tools: arithTools{}, Progress: &log}); err != nil {
		t.Fatalf("%v\n%s", err, log)
	}

	crashed := fresh
	crashed.Save = filepath.Join(t.TempDir(), "crashed")
	run := RunFolder(crashed.Save)
	leftover := filepath.Join(run.CkptDir(), "."+CheckpointName(0)+tmpInfix+"1")
	for path, data := range map[string]string{
		filepath.Join(crashed.Save, "config.json"): "{\n",
		run.StepsFile(): `{"step": 1, "loss"`,
		filepath.Join(leftover, "model.safetensors"): "",
	} {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	log = testLog{}
	if err := Train(context.Background(), crashed, TrainOptions{Backend: backend, Tools: arithTools{}, Resume: true, Progress: &log}); err != nil {
		t.Fatalf("resume without a checkpoint: %v\n%s", err, log)
	}
	if !strings.Contains(log.String(), "no checkpoint in "+run.CkptDir()+" yet; starting the run") {
		t.Errorf("log does not say the run starts:\n%s", log)
	}
	if _, err := os.Stat(leftover); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the partial checkpoint is still there: %v", err)
	}
	want, _ := RunFolder(fresh.Save).ReadSteps(1 << 30)
	got, _ := run.ReadSteps(1 << 30)
	if len(want) != fresh.StepsPerRollout() || len(got) != len(want) {
		t.Fatalf("train.jsonl: %d lines resumed, %d fresh", len(got), len(want))
	}
	for i := range want {
		if a, b := withoutTimes(want[i]), withoutTimes(got[i]); !reflect.DeepEqual(a, b) {
			t.Errorf("step %d: fresh %+v, resumed %+v", i+1, a, b)
		}
	}
}

// sameFinalCheckpoint requires the newest checkpoints of two run folders to
// hold the same weights and optimizer state, byte for byte.
func sameFinalCheckpoint(t *testing.T, runA, runB string) {
	t.Helper()
	a, _ := LatestCheckpoint(RunFolder(runA).CkptDir())
	b, _ := LatestCheckpoint(RunFolder(runB).CkptDir())
	if a == "" || filepath.Base(a) != filepath.Base(b) {
		t.Fatalf("newest checkpoints %q and %q", a, b)
	}
	for _, name := range []string{"model.safetensors", optimizerFile} {
		da, errA := os.ReadFile(filepath.Join(a, name))
		db, errB := os.ReadFile(filepath.Join(b, name))
		if errA != nil || errB != nil || !bytes.Equal(da, db) {
			t.Errorf("%s/%s differs (%v, %v)", filepath.Base(a), name, errA, errB)
		}
	}
}

// sameStepLines requires the train.jsonl lines of two run folders to be
// equal but for their wall-clock fields.
func sameStepLines(t *testing.T, runA, runB string) {
	t.Helper()
	sa, errA := RunFolder(runA).ReadSteps(1 << 30)
	sb, errB := RunFolder(runB).ReadSteps(1 << 30)
	if errA != nil || errB != nil || len(sa) != len(sb) || len(sa) == 0 {
		t.Fatalf("train.jsonl: %d and %d lines (%v, %v)", len(sa), len(sb), errA, errB)
	}
	for i := range sa {
		if a, b := withoutTimes(sa[i]), withoutTimes(sb[i]); !reflect.DeepEqual(a, b) {
			t.Errorf("step %d: %+v and %+v", i+1, a, b)
		}
	}
}

// TestStudyRecipesRunOnTinyModel is TestSeedRecipesRunOnTinyModel for the
// seed-scale recipes of the objectives and distillation studies (FlowRL and
// implicit process rewards beside card A; GRPO, on-policy distillation and
// imitation for card B's smaller student, the teacher a random 4-layer tiny
// model): each runs one rollout with its recipe's optimizer steps, under a
// reward for the first sample of each group (so that the imitation arm has
// correct samples to learn from), and logs its method's metric.
func TestStudyRecipesRunOnTinyModel(t *testing.T) {
	if testing.Short() {
		t.Skip("trains a tiny model")
	}
	problems := filepath.Join("testdata", "problems.jsonl")
	for _, tc := range []struct {
		recipe             string
		batch, wantSteps   int
		teacher            bool
		metric             string // a train.jsonl extra key every step must log ("": none)
		estimator, process string
	}{
		{"retool-flowrl-qwen3-4b.yaml", 4, 4, false, "flowrl_log_z_mean", "flowrl", "none"},
		{"retool-prime-qwen3-4b.yaml", 4, 4, false, "prm_loss", "grpo", "implicit"},
		{"math-grpo-qwen3-1.7b.yaml", 16, 1, false, "", "grpo", "none"},
		{"math-opd-qwen3-1.7b.yaml", 16, 1, true, "distill_reverse_kl", "grpo", "none"},
		{"math-sft-qwen3-1.7b.yaml", 16, 1, true, "imitated_samples", "grpo", "none"},
	} {
		t.Run(tc.recipe, func(t *testing.T) {
			cfg, err := LoadRecipe(filepath.Join("..", "..", "configs", tc.recipe))
			if err != nil {
				t.Fatal(err)
			}
			if cfg.AdvantageEstimator != tc.estimator || cfg.ProcessReward != tc.process || (cfg.Teacher != "") != tc.teacher {
				t.Fatalf("the recipe has advantage_estimator %s, process_reward %s, teacher %q", cfg.AdvantageEstimator, cfg.ProcessReward, cfg.Teacher)
			}
			cfg.TinyModel, cfg.Backend, cfg.DType = "tiny", "cpu", "float32"
			if tc.teacher {
				mc, err := qwen3.NamedConfig(cfg.TinyModel)
				if err != nil {
					t.Fatal(err)
				}
				cfg.Teacher = saveTeacher(t, "tiny-4l", mc.VocabSize, 5)
			}
			cfg.PromptData, cfg.EvalPromptData, cfg.EvalMaxPrompts = problems, problems, 2
			cfg.NumRollout, cfg.RolloutBatchSize, cfg.NSamplesPerPrompt = 1, 2, 8
			cfg.GlobalBatchSize, cfg.MicroBatchSize = tc.batch, 4
			cfg.RolloutMaxResponseLen, cfg.EvalMaxResponseLen, cfg.NSamplesPerEvalPrompt = 24, 24, 2
			cfg.SamplingBatchSize, cfg.LogProbChunk = 0, 0
			cfg.Save = filepath.Join(t.TempDir(), "run")
			cfg.OfferToolSpec = false
			steps := trainFirstOfGroup(t, cfg)
			if len(steps) != tc.wantSteps {
				t.Errorf("%d optimizer steps, want %d", len(steps), tc.wantSteps)
			}
			for _, s := range steps {
				if _, ok := s.Extra[tc.metric]; tc.metric != "" && !ok {
					t.Errorf("step %d does not log %s", s.Step, tc.metric)
				}
				if math.IsNaN(s.Loss) || math.IsInf(s.Loss, 0) {
					t.Errorf("step %d: loss %v", s.Step, s.Loss)
				}
			}
		})
	}
}
