package grpo

import (
	"context"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/gomlx/compute"
	"github.com/gomlx/compute/dtypes"

	"github.com/mathrl/mathrl/gomlx_trainer/qwen3"
)

// TestDistillSFTImitatesTheTeacher trains the tiny student for two rollouts
// with distill_mode sft from a random 4-layer teacher, rewarding the first
// sample of each group: the rollouts must be the teacher's samples (their
// sampling log-probs are the teacher's log-probs of those tokens, recomputed
// by a teacher loaded apart, and not the student's), each step must train on
// exactly the rewarded samples (imitated_samples, the sequences passed on)
// with a positive negative log-likelihood, and the student's weights must
// move toward the teacher's samples: their mean log-likelihood under the
// trained student is higher than under the initial one.
func TestDistillSFTImitatesTheTeacher(t *testing.T) {
	if testing.Short() {
		t.Skip("trains a tiny model")
	}
	cfg := smokeConfig(t)
	mc, err := qwen3.NamedConfig(cfg.TinyModel)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Teacher, cfg.DistillMode = saveTeacher(t, "tiny-4l", mc.VocabSize, 5), "sft"
	cfg.SFTSteps, cfg.EvalPromptData, cfg.LR, cfg.SaveInterval = 0, "", 3e-3, 0
	cfg.GlobalBatchSize = cfg.Samples() // one step per rollout, as GRPO would take
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	g, calls := cfg.NSamplesPerPrompt, 0
	firstOfGroup := func(_, _ string, _ int) Reward {
		i := calls
		calls++
		return Reward{Value: float64(1 - min(i%g, 1)), Correct: i%g == 0}
	}
	var rollouts []RolloutLog
	var log testLog
	backend := testBackend(t)
	err = Train(context.Background(), cfg, TrainOptions{Backend: backend, Tools: arithTools{}, Progress: &log, Reward: firstOfGroup,
		OnRollout: func(r RolloutLog) { rollouts = append(rollouts, r) }})
	if err != nil {
		t.Fatalf("%v\n%s", err, log)
	}
	if len(rollouts) != cfg.NumRollout {
		t.Fatalf("%d rollouts, want %d", len(rollouts), cfg.NumRollout)
	}
	first := rollouts[0]
	var seqs []Sequence
	for i, s := range first.Samples {
		// each group's one imitated sequence carries the group's prompt
		seqs = append(seqs, Sequence{Prompt: first.Sequences[i/g].Prompt, Response: s.IDs, Mask: s.Mask, LogProbs: s.LogProbs, Weights: s.Mask})
	}
	toTeacher, toStudent, student := samplingGaps(t, backend, cfg, seqs)
	t.Logf("sampling log-probs: within %.3g of the teacher's, %.3g of the student's", toTeacher, toStudent)
	if toTeacher > 1e-4 || toStudent < 1e-2 {
		t.Errorf("the rollout's sampling log-probs are %.3g from the teacher's and %.3g from the student's: the teacher did not sample it", toTeacher, toStudent)
	}
	for _, r := range rollouts {
		want := len(r.Problems)
		if len(r.Sequences) != want || len(r.Steps) != 1 || r.Steps[0].Extra["imitated_samples"] != float64(want) {
			t.Fatalf("rollout %d: %d sequences, %d steps (imitated_samples %v), want %d rewarded samples in one step",
				r.Rollout, len(r.Sequences), len(r.Steps), r.Steps[0].Extra["imitated_samples"], want)
		}
		if l := r.Steps[0].Loss; !(l > 0) || math.IsInf(l, 0) {
			t.Errorf("rollout %d: loss %v, want a positive negative log-likelihood", r.Rollout, l)
		}
	}
	final, _, err := LoadCheckpoint(mustLatest(t, cfg), dtypes.Float32)
	if err != nil {
		t.Fatal(err)
	}
	trained := NewLearner(backend, final, LossConfig{}, AdamWConfig{}, cfg.RolloutTemperature)
	imitated := rollouts[0].Sequences
	before, after := meanLogLikelihood(t, student, imitated), meanLogLikelihood(t, trained, imitated)
	t.Logf("mean log-likelihood of the first rollout's imitated samples: %.4f before, %.4f after", before, after)
	if !(after > before) {
		t.Errorf("the student did not move toward the teacher's samples: %.4f before, %.4f after", before, after)
	}
}

// samplingGaps returns the largest gaps, over the sampled tokens (Mask
// non-zero) of seqs, between their sampling log-probs (LogProbs) and the
// log-probs of the same tokens recomputed by cfg's teacher and by cfg's
// initial policy, each loaded apart, and a learner of that initial policy.
func samplingGaps(t *testing.T, backend compute.Backend, cfg Config, seqs []Sequence) (toTeacher, toStudent float64, student *Learner) {
	t.Helper()
	teacherModel, err := qwen3.Load(cfg.Teacher, dtypes.Float32)
	if err != nil {
		t.Fatal(err)
	}
	teacher := NewLearner(backend, teacherModel, LossConfig{}, AdamWConfig{}, cfg.RolloutTemperature)
	initial, err := newPolicy(cfg)
	if err != nil {
		t.Fatal(err)
	}
	student = NewLearner(backend, initial, LossConfig{}, AdamWConfig{}, cfg.RolloutTemperature)
	tLogp, err := teacher.SequenceLogProbs(seqs, StepOptions{})
	if err != nil {
		t.Fatal(err)
	}
	sLogp, err := student.SequenceLogProbs(seqs, StepOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range seqs {
		for k, m := range s.Mask {
			if m != 0 {
				toTeacher = math.Max(toTeacher, math.Abs(float64(s.LogProbs[k]-tLogp[i][k])))
				toStudent = math.Max(toStudent, math.Abs(float64(s.LogProbs[k]-sLogp[i][k])))
			}
		}
	}
	return toTeacher, toStudent, student
}

// TestOnPolicyDistillSamplesTheStudent is TestDistillSFTImitatesTheTeacher's
// counterpart for distill_mode on_policy with the teacher in process: the
// teacher only scores, so the first rollout's sampling log-probs are the
// initial student's log-probs of those tokens, recomputed apart, and not the
// teacher's (the teacher's sampler is made for distill_mode sft alone).
func TestOnPolicyDistillSamplesTheStudent(t *testing.T) {
	if testing.Short() {
		t.Skip("trains a tiny model")
	}
	cfg := smokeConfig(t)
	mc, err := qwen3.NamedConfig(cfg.TinyModel)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Teacher, cfg.DistillMode, cfg.TeacherEngine = saveTeacher(t, "tiny-4l", mc.VocabSize, 5), "on_policy", "builtin"
	cfg.SFTSteps, cfg.EvalPromptData, cfg.SaveInterval, cfg.NumRollout = 0, "", 0, 1
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	var rollouts []RolloutLog
	var log testLog
	backend := testBackend(t)
	err = Train(context.Background(), cfg, TrainOptions{Backend: backend, Tools: arithTools{}, Progress: &log,
		OnRollout: func(r RolloutLog) { rollouts = append(rollouts, r) }})
	if err != nil {
		t.Fatalf("%v\n%s", err, log)
	}
	if len(rollouts) != 1 || len(rollouts[0].Sequences) != len(rollouts[0].Samples) {
		t.Fatalf("%d rollouts, want 1 with every sample trained on", len(rollouts))
	}
	r := rollouts[0]
	var seqs []Sequence
	for i, s := range r.Samples {
		seqs = append(seqs, Sequence{Prompt: r.Sequences[i].Prompt, Response: s.IDs, Mask: s.Mask, LogProbs: s.LogProbs, Weights: s.Mask})
	}
	toTeacher, toStudent, _ := samplingGaps(t, backend, cfg, seqs)
	t.Logf("sampling log-probs: within %.3g of the teacher's, %.3g of the student's", toTeacher, toStudent)
	if toStudent > 1e-4 || toTeacher < 1e-2 {
		t.Errorf("the rollout's sampling log-probs are %.3g from the student's and %.3g from the teacher's: the student did not sample it", toStudent, toTeacher)
	}
}

// TestDistillSFTStepsOnTheCorrectSamples runs distill_mode sft with
// global_batch_size 1 for two rollouts: in the first the reward is 0 for
// every teacher sample, so the student takes no step and the log says that
// the teacher answered no prompt correctly; in the second it rewards the
// first sample of each group, so the student takes one step per problem,
// each on one sample, and each step's imitated_samples is that step's 1, not
// the rollout's count.
func TestDistillSFTStepsOnTheCorrectSamples(t *testing.T) {
	if testing.Short() {
		t.Skip("trains a tiny model")
	}
	cfg := smokeConfig(t)
	mc, err := qwen3.NamedConfig(cfg.TinyModel)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Teacher, cfg.DistillMode = saveTeacher(t, "tiny-4l", mc.VocabSize, 5), "sft"
	cfg.SFTSteps, cfg.EvalPromptData, cfg.SaveInterval = 0, "", 0
	cfg.GlobalBatchSize, cfg.MicroBatchSize = 1, 1
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	g, n, calls := cfg.NSamplesPerPrompt, cfg.Samples(), 0
	secondRolloutFirstOfGroup := func(_, _ string, _ int) Reward {
		i := calls
		calls++
		if i < n { // the first rollout: nothing correct
			return Reward{}
		}
		return Reward{Value: float64(1 - min(i%g, 1)), Correct: i%g == 0}
	}
	var rollouts []RolloutLog
	var log testLog
	err = Train(context.Background(), cfg, TrainOptions{Backend: testBackend(t), Tools: arithTools{}, Progress: &log, Reward: secondRolloutFirstOfGroup,
		OnRollout: func(r RolloutLog) { rollouts = append(rollouts, r) }})
	if err != nil {
		t.Fatalf("%v\n%s", err, log)
	}
	if len(rollouts) != 2 {
		t.Fatalf("%d rollouts, want 2", len(rollouts))
	}
	if r := rollouts[0]; len(r.Sequences) != 0 || len(r.Steps) != 0 {
		t.Errorf("rollout 1, nothing correct: %d sequences, %d steps, want none", len(r.Sequences), len(r.Steps))
	}
	if want := "rollout 1: the teacher answered no prompt correctly; no update"; !strings.Contains(log.String(), want) {
		t.Errorf("the log does not say %q:\n%s", want, log)
	}
	r := rollouts[1]
	if want := len(r.Problems); len(r.Sequences) != want || len(r.Steps) != want {
		t.Fatalf("rollout 2: %d sequences in %d steps, want %d rewarded samples, one a step", len(r.Sequences), len(r.Steps), want)
	}
	for _, s := range r.Steps {
		if got := s.Extra["imitated_samples"]; got != 1 {
			t.Errorf("step %d: imitated_samples %v, want 1 (the step's one sample)", s.Step, got)
		}
	}
}

// TestImitationSequencesKeepTheCorrect checks imitationSequences on six
// sequences at batch indices 4 to 7, 12 and 13: it keeps those whose reward
// is above 0 (the second, fourth and sixth: rewards 1, 0.25 and 1; not 0 nor
// -0.5), returns their batch indices 5, 7 and 13, zeroes their advantages
// and leaves the rest of them (tokens, masks, rewards) as they were.
func TestImitationSequencesKeepTheCorrect(t *testing.T) {
	rewards := []float64{0, 1, -0.5, 0.25, 0, 1}
	var seqs []Sequence
	for i, r := range rewards {
		seqs = append(seqs, Sequence{Prompt: []int{i}, Response: []int{10 + i, 20 + i}, Mask: []float32{1, float32(i % 2)},
			Reward: r, Advantage: float64(i) - 2.5})
	}
	kept, out := imitationSequences([]int{4, 5, 6, 7, 12, 13}, seqs)
	if want := []int{5, 7, 13}; !slices.Equal(kept, want) {
		t.Errorf("kept %v, want %v", kept, want)
	}
	if len(out) != 3 {
		t.Fatalf("%d sequences, want 3", len(out))
	}
	for j, i := range []int{1, 3, 5} {
		s, in := out[j], seqs[i]
		if s.Advantage != 0 || s.Reward != in.Reward || !slices.Equal(s.Prompt, in.Prompt) || !slices.Equal(s.Response, in.Response) || !slices.Equal(s.Mask, in.Mask) {
			t.Errorf("sequence %d: %+v, want input %d (%+v) with advantage 0", j, s, i, in)
		}
	}
}

// mustLatest is the newest checkpoint of cfg's run.
func mustLatest(t *testing.T, cfg Config) string {
	t.Helper()
	dir, err := LatestCheckpoint(RunFolder(cfg.Save).CkptDir())
	if err != nil || dir == "" {
		t.Fatalf("no checkpoint in %s: %v", cfg.Save, err)
	}
	return dir
}

// meanLogLikelihood is the mean log-prob under l of the sampled tokens
// (Mask non-zero) of seqs.
func meanLogLikelihood(t *testing.T, l *Learner, seqs []Sequence) float64 {
	t.Helper()
	logp, err := l.SequenceLogProbs(seqs, StepOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var sum, n float64
	for i, s := range seqs {
		for k, m := range s.Mask {
			if m != 0 {
				sum += float64(logp[i][k])
				n++
			}
		}
	}
	return sum / n
}
