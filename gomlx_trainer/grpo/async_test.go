package grpo

import (
	"context"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/gomlx/core/tensors"

	"github.com/mathrl/mathrl/analysis/metrics"
	"github.com/mathrl/mathrl/analysis/rollouts"
	"github.com/mathrl/mathrl/gomlx_trainer/engine"
	"github.com/mathrl/mathrl/gomlx_trainer/qwen3"
)

// TestAsyncEngineSamplesItsCopy builds the builtin engine of an
// async_rollouts recipe and changes the policy's weights under it (the final
// norm set to 0, so that every token is equally likely): until the next
// Sync it samples what it sampled from the weights it copied, the log-probs
// of the old weights; after Sync those of the new ones (-log vocabulary).
// Without the copy, the sampler would read weights the learner is changing.
func TestAsyncEngineSamplesItsCopy(t *testing.T) {
	cfg := asyncConfig(t, true)
	mc, err := qwen3.NamedConfig(cfg.TinyModel)
	if err != nil {
		t.Fatal(err)
	}
	model, err := qwen3.NewRandom(mc, dtypes.Float32, 1)
	if err != nil {
		t.Fatal(err)
	}
	eng, err := newEngine(cfg, testBackend(t), model, nil, newProgress(nil))
	if err != nil {
		t.Fatal(err)
	}
	sample := func() []float32 {
		ctx := context.Background()
		s, err := eng.Start(ctx, [][]int{{1, 2, 3}}, engine.Options{MaxNewTokens: 4, Temperature: 1, Seed: 7})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		turns, err := s.Generate(ctx, []int{0}, []int{4}, nil)
		if err != nil {
			t.Fatal(err)
		}
		return turns[0].LogProbs
	}
	if err := eng.Sync(context.Background(), 0); err != nil {
		t.Fatal(err)
	}
	before := sample()
	norm := model.Weight("model.norm.weight")
	if err := norm.SetValue(tensors.FromShape(norm.Shape())); err != nil {
		t.Fatal(err)
	}
	if got := sample(); !slices.Equal(got, before) {
		t.Errorf("after the policy changed, before Sync: log-probs %v, want the copy's %v", got, before)
	}
	if err := eng.Sync(context.Background(), 1); err != nil {
		t.Fatal(err)
	}
	uniform := float32(-math.Log(float64(mc.VocabSize)))
	for i, lp := range sample() {
		if math.Abs(float64(lp-uniform)) > 1e-5 {
			t.Errorf("after Sync: token %d log-prob %v, want %v (the zeroed norm's)", i, lp, uniform)
		}
	}
}

// asyncConfig is the smoke recipe without warm start and evaluations, 3
// rollouts of 2 optimizer steps each, with the mismatch metric and TIS on
// and an entropy bonus, so that every step changes the weights (the random
// policy's rewards, and so its advantages, are mostly 0).
func asyncConfig(t *testing.T, async bool) Config {
	cfg := smokeConfig(t)
	cfg.NumRollout, cfg.SFTSteps, cfg.EvalPromptData, cfg.SaveInterval = 3, 0, "", 0
	cfg.GetMismatchMetrics, cfg.UseTIS, cfg.AsyncRollouts = true, true, async
	cfg.EntropyCoef, cfg.SaveRolloutsEvery = 0.01, 1
	return cfg
}

// trainAsync runs cfg with the arithmetic tools and returns its train.jsonl
// lines and the problem ids of each rollout.
func trainAsync(t *testing.T, ctx context.Context, cfg Config, resume bool) ([]metrics.StepMetrics, [][]string, error) {
	t.Helper()
	return trainAsyncWith(t, ctx, cfg, TrainOptions{Resume: resume})
}

// trainAsyncWith is trainAsync with the other options of opt (its Resume,
// Reward and OnRollout, called after the problems are recorded).
func trainAsyncWith(t *testing.T, ctx context.Context, cfg Config, opt TrainOptions) ([]metrics.StepMetrics, [][]string, error) {
	t.Helper()
	var log testLog
	var problems [][]string
	then := opt.OnRollout
	opt.OnRollout = func(r RolloutLog) {
		var ids []string
		for _, p := range r.Problems {
			ids = append(ids, p.ID)
		}
		problems = append(problems, ids)
		if then != nil {
			then(r)
		}
	}
	opt.Backend, opt.Tools, opt.Progress = testBackend(t), arithTools{}, &log
	err := Train(ctx, cfg, opt)
	if err != nil {
		return nil, problems, err
	}
	steps, err := RunFolder(cfg.Save).ReadSteps(1 << 30)
	if err != nil {
		t.Fatal(err)
	}
	if len(steps) != cfg.NumRollout*cfg.StepsPerRollout() {
		t.Fatalf("train.jsonl has %d lines, want %d\n%s", len(steps), cfg.NumRollout*cfg.StepsPerRollout(), log.String())
	}
	return steps, problems, nil
}

// TestAsyncRolloutsAreOneStepOffPolicy trains the same recipe with and
// without async_rollouts. Synchronously every rollout is sampled from the
// weights it trains from: staleness 0, and the mismatch between the
// sampler's and the training graph's log-probs is 0 (the same model code).
// With the overlap, the first rollout is sampled from the current weights
// and every later one from the weights one rollout's steps old: train.jsonl
// logs that version and staleness, the mismatch metric is above 0 and the
// truncated importance weights are not all 1 (their mean is not 1).
func TestAsyncRolloutsAreOneStepOffPolicy(t *testing.T) {
	if testing.Short() {
		t.Skip("trains a tiny model")
	}
	for _, async := range []bool{false, true} {
		cfg := asyncConfig(t, async)
		perRollout := cfg.StepsPerRollout()
		if perRollout < 2 {
			t.Fatalf("%d optimizer steps per rollout: the staleness would not tell steps from rollouts", perRollout)
		}
		steps, _, err := trainAsync(t, context.Background(), cfg, false)
		if err != nil {
			t.Fatal(err)
		}
		for r := range cfg.NumRollout { // one records file per rollout, named by the steps before its updates
			recs, err := rollouts.ReadFile(rollouts.Path(cfg.Save, r*perRollout))
			if err != nil || len(recs) == 0 || recs[0].Rollout != r+1 {
				t.Fatalf("async %v: rollout %d's records: %d, %v", async, r+1, len(recs), err)
			}
		}
		for i, m := range steps {
			r := i / perRollout // rollout, from 0
			version, staleness := r*perRollout, 0
			if async && r > 0 {
				version, staleness = (r-1)*perRollout, perRollout
			}
			if got := m.Extra["rollout_weight_version"]; got != float64(version) {
				t.Errorf("async %v, step %d: rollout_weight_version %v, want %d", async, m.Step, got, version)
			}
			if got, ok := m.Extra["rollout_staleness"]; !ok || got != float64(staleness) {
				t.Errorf("async %v, step %d: rollout_staleness %v (logged %v), want %d", async, m.Step, got, ok, staleness)
			}
			diff, tis := m.Extra["train_rollout_logprob_abs_diff"], m.Extra["tis_weight_mean"]
			t.Logf("async %v, step %d: staleness %d, logprob abs diff %.3g, tis weight mean %.6f", async, m.Step, staleness, diff, tis)
			// float32 rounding alone, between the sampler's graph and the training graph, stays under 1e-6
			if stale := staleness > 0; stale != (diff > 1e-4) || stale && tis == 1 {
				t.Errorf("async %v, step %d (staleness %d): logprob abs diff %g, tis weight mean %v", async, m.Step, staleness, diff, tis)
			}
		}
	}
}

// TestAsyncRolloutsAreDeterministic trains the async recipe twice: the
// sampling goroutine and the trainer share nothing that changes, so the runs
// have the same train.jsonl (but for timings) and the same weights.
func TestAsyncRolloutsAreDeterministic(t *testing.T) {
	if testing.Short() {
		t.Skip("trains a tiny model")
	}
	a, b := asyncConfig(t, true), asyncConfig(t, true)
	b.Save = filepath.Join(t.TempDir(), "again")
	for _, cfg := range []Config{a, b} {
		if _, _, err := trainAsync(t, context.Background(), cfg, false); err != nil {
			t.Fatal(err)
		}
	}
	sameStepLines(t, a.Save, b.Save)
	sameFinalCheckpoint(t, a.Save, b.Save)
}

// TestAsyncRolloutsResume interrupts an async run (as by Ctrl-C) after its
// first rollout, while the second rollout's batch is being drawn, and
// resumes it. The checkpoint records the data position and RNG before that
// draw, so the resumed run draws the same prompts with the same seeds, now
// from the checkpoint's weights (staleness 0), then goes on overlapping; it
// ends with every rollout's problems those of the uninterrupted run and the
// first rollout's lines equal to its.
func TestAsyncRolloutsResume(t *testing.T) {
	if testing.Short() {
		t.Skip("trains a tiny model")
	}
	straight := asyncConfig(t, true)
	want, wantProblems, err := trainAsync(t, context.Background(), straight, false)
	if err != nil {
		t.Fatal(err)
	}

	broken := straight
	broken.Save = filepath.Join(t.TempDir(), "broken")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var log testLog
	err = Train(ctx, broken, TrainOptions{Backend: testBackend(t), Tools: arithTools{}, Progress: &log, OnRollout: func(RolloutLog) { cancel() }})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("interrupted run returned %v, want context.Canceled\n%s", err, log.String())
	}
	got, problems, err := trainAsync(t, context.Background(), broken, true)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.EqualFunc(problems, wantProblems[1:], slices.Equal) {
		t.Errorf("resumed run's problems %v, uninterrupted run's %v", problems, wantProblems[1:])
	}
	perRollout := straight.StepsPerRollout()
	for i, m := range got {
		r, staleness := i/perRollout, 0.0
		if r > 1 {
			staleness = float64(perRollout)
		}
		if m.Extra["rollout_staleness"] != staleness {
			t.Errorf("resumed run, step %d: rollout_staleness %v, want %v", m.Step, m.Extra["rollout_staleness"], staleness)
		}
		if r == 0 {
			if a, b := withoutTimes(want[i]), withoutTimes(m); !reflect.DeepEqual(a, b) {
				t.Errorf("step %d: uninterrupted %+v, resumed %+v", m.Step, a, b)
			}
		}
	}
}

// TestAsyncRolloutsDrawNothingPastTheLast trains the async recipe for 2
// rollouts, its phase marks answered at once: the batches drawn are rollout
// 1's, then rollout 2's (drawn ahead during rollout 1's steps), and none for
// a rollout past the last. Train waits for a draw that is out before it
// returns, and a draw marks its phase before it samples, so one started
// during the last rollout's steps would be in the marks.
func TestAsyncRolloutsDrawNothingPastTheLast(t *testing.T) {
	if testing.Short() {
		t.Skip("trains a tiny model")
	}
	cfg := asyncConfig(t, true)
	cfg.NumRollout = 2
	var log, marks testLog
	err := Train(context.Background(), cfg, TrainOptions{Backend: testBackend(t), Tools: arithTools{}, Progress: &log,
		PhaseMarks: NewPhaseMarks(&marks, strings.NewReader(""))})
	if err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	var drawn []int
	for _, line := range strings.Split(marks.String(), "\n") {
		var r int
		if _, err := fmt.Sscanf(line, "mathrl-phase: sample rollout %d,", &r); err == nil && !slices.Contains(drawn, r) {
			drawn = append(drawn, r)
		}
	}
	if !slices.Equal(drawn, []int{1, 2}) {
		t.Errorf("batches drawn for rollouts %v, want 1 and 2 only\n%s", drawn, marks.String())
	}
}

// stopWhileWaiting is the context of a run that Ctrl-C stops while the
// trainer waits for the draw ahead: once armed, the next check of Err (the
// trainer's, at the top of its loop, just before it waits) answers nil and
// cancels the run, so that the trainer goes on to wait for a draw that the
// cancellation then ends with an error.
type stopWhileWaiting struct {
	context.Context
	cancel context.CancelFunc
	armed  atomic.Bool
	fired  atomic.Bool
}

func (c *stopWhileWaiting) Err() error {
	if c.armed.CompareAndSwap(true, false) {
		c.fired.Store(true)
		c.cancel()
		return nil
	}
	return c.Context.Err()
}

// TestAsyncRolloutsStopWhileWaiting stops an async run with dynamic sampling
// (alternatingGroups: 4 groups drawn per rollout, 16 scored samples) while
// the trainer waits for rollout 2's batch: its draw is held at its first
// score until the stop, after which its further draw fails. The trainer
// saves a checkpoint after rollout 1 that records the data position and RNG
// before that draw, and the resumed run draws rollout 2's prompts again (from
// the checkpoint's weights, staleness 0), then rollout 3's: every rollout's
// problems those of the uninterrupted run.
func TestAsyncRolloutsStopWhileWaiting(t *testing.T) {
	if testing.Short() {
		t.Skip("trains a tiny model")
	}
	straight := asyncConfig(t, true)
	straight.DynamicSampling, straight.DynamicSamplingMaxDraws, straight.OverSamplingBatchSize = true, 5, 1
	_, wantProblems, err := trainAsyncWith(t, context.Background(), straight, TrainOptions{Reward: alternatingGroups(straight.NSamplesPerPrompt)})
	if err != nil {
		t.Fatal(err)
	}
	perDraw := 4 * straight.NSamplesPerPrompt // the samples one rollout scores

	broken := straight
	broken.Save = filepath.Join(t.TempDir(), "broken")
	inner, cancel := context.WithCancel(context.Background())
	defer cancel()
	ctx := &stopWhileWaiting{Context: inner, cancel: cancel}
	scored, reward := 0, alternatingGroups(broken.NSamplesPerPrompt)
	held := func(response, label string, toolCalls int) Reward {
		if scored++; scored == perDraw+1 { // rollout 2's first sample, drawn ahead
			<-inner.Done()
		}
		return reward(response, label, toolCalls)
	}
	_, _, err = trainAsyncWith(t, ctx, broken, TrainOptions{Reward: held, OnRollout: func(RolloutLog) { ctx.armed.Store(true) }})
	if !errors.Is(err, context.Canceled) || !ctx.fired.Load() {
		t.Fatalf("interrupted run returned %v (stopped by the check before the wait: %v), want context.Canceled", err, ctx.fired.Load())
	}
	if dir, _ := LatestCheckpoint(RunFolder(broken.Save).CkptDir()); filepath.Base(dir) != CheckpointName(straight.StepsPerRollout()) {
		t.Fatalf("interrupted run's checkpoint %q, want the one after rollout 1", dir)
	}
	got, problems, err := trainAsyncWith(t, context.Background(), broken, TrainOptions{Resume: true, Reward: alternatingGroups(broken.NSamplesPerPrompt)})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.EqualFunc(problems, wantProblems[1:], slices.Equal) {
		t.Errorf("resumed run's problems %v, uninterrupted run's %v", problems, wantProblems[1:])
	}
	perRollout := straight.StepsPerRollout()
	for _, m := range got[perRollout : 2*perRollout] {
		if m.Extra["rollout_staleness"] != 0 {
			t.Errorf("resumed run, step %d: rollout_staleness %v, want 0 (rollout 2 drawn again from the checkpoint's weights)", m.Step, m.Extra["rollout_staleness"])
		}
	}
}
