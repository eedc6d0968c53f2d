package grpo

import (
	"context"
	"math"
	"testing"

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
	teacherModel, err := qwen3.Load(cfg.Teacher, dtypes.Float32)
	if err != nil {
		t.Fatal(err)
	}
	teacher := NewLearner(backend, teacherModel, LossConfig{}, AdamWConfig{}, cfg.RolloutTemperature)
	initial, err := newPolicy(cfg)
	if err != nil {
		t.Fatal(err)
	}
	student := NewLearner(backend, initial, LossConfig{}, AdamWConfig{}, cfg.RolloutTemperature)
	first := rollouts[0]
	var seqs []Sequence
	for i, s := range first.Samples {
		// each group's one imitated sequence carries the group's prompt
		seqs = append(seqs, Sequence{Prompt: first.Sequences[i/g].Prompt, Response: s.IDs, Mask: s.Mask, LogProbs: s.LogProbs, Weights: s.Mask})
	}
	tLogp, err := teacher.SequenceLogProbs(seqs, StepOptions{})
	if err != nil {
		t.Fatal(err)
	}
	sLogp, err := student.SequenceLogProbs(seqs, StepOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var toTeacher, toStudent float64
	for i, s := range seqs {
		for k, m := range s.Mask {
			if m != 0 {
				toTeacher = math.Max(toTeacher, math.Abs(float64(s.LogProbs[k]-tLogp[i][k])))
				toStudent = math.Max(toStudent, math.Abs(float64(s.LogProbs[k]-sLogp[i][k])))
			}
		}
	}
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
