package grpo

import (
	"testing"

	"github.com/gomlx/compute/dtypes"

	"github.com/mathrl/mathrl/gomlx_trainer/memplan"
	"github.com/mathrl/mathrl/gomlx_trainer/qwen3"
)

// TestMemoryPlanCountsTheTeacher: the plan of a recipe with an in-process
// distillation teacher (teacher_engine builtin) counts the teacher's weights,
// T·d bytes for the T parameters of the teacher's own config.json (a model
// of another size than the policy's), in the training step and in sampling;
// a served teacher (teacher_engine sglang) and no teacher count nothing.
func TestMemoryPlanCountsTheTeacher(t *testing.T) {
	shape, err := qwen3.NamedConfig("tiny")
	if err != nil {
		t.Fatal(err)
	}
	teacherShape, err := qwen3.NamedConfig("tiny-4l")
	if err != nil {
		t.Fatal(err)
	}
	teacherShape.VocabSize = shape.VocabSize
	dir := saveTeacher(t, "tiny-4l", shape.VocabSize, 3)
	teacherBytes := teacherShape.Params() * int64(dtypes.Float32.Size())
	if teacherShape.Params() == shape.Params() {
		t.Fatalf("the teacher has the policy's %d parameters: the test would not tell whose are counted", shape.Params())
	}
	for _, tc := range []struct {
		name string
		edit func(*Config)
		want int64
	}{
		{"no teacher", func(c *Config) {}, 0},
		{"in process", func(c *Config) { c.Teacher, c.DistillCoef = dir, 1 }, teacherBytes},
		{"served", func(c *Config) {
			c.Teacher, c.DistillCoef, c.TeacherEngine, c.TeacherURLs = dir, 1, "sglang", []string{"http://127.0.0.1:1"}
		}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := Default()
			cfg.TinyModel, cfg.DType, cfg.PromptData = "tiny", "float32", "arith"
			tc.edit(&cfg)
			if err := cfg.Validate(); err != nil {
				t.Fatal(err)
			}
			rc, err := cfg.MemoryRecipe()
			if err != nil {
				t.Fatal(err)
			}
			rep := memplan.Plan(shape, rc, 1<<40, memplan.CPU)
			if got := rep.Train.Term(memplan.TermTeacher); got != tc.want {
				t.Errorf("the training step's teacher term is %d bytes, want %d (recipe %+v)", got, tc.want, rc)
			}
			if got := rep.Rollout.Term(memplan.TermTeacher); got != tc.want {
				t.Errorf("the rollout's teacher term is %d bytes, want %d", got, tc.want)
			}
		})
	}
}

// TestMemoryPlanTeacherSamplesUnderSFT: under distill_mode sft the teacher
// samples the rollouts, so the plan's rollout cache is the teacher's (the
// policy's, that of on-policy distillation, scaled by the ratio of layers ×
// KV heads × head size: 4 for tiny-4l over tiny) while the evaluation's,
// sampled by the policy, stays the policy's, and the resident weights are the
// policy's and the teacher's in both modes.
func TestMemoryPlanTeacherSamplesUnderSFT(t *testing.T) {
	shape, err := qwen3.NamedConfig("tiny")
	if err != nil {
		t.Fatal(err)
	}
	teacherShape, err := qwen3.NamedConfig("tiny-4l")
	if err != nil {
		t.Fatal(err)
	}
	perSlot := func(c qwen3.Config) int64 { return int64(c.Layers * c.KVHeads * c.HeadDim) }
	if perSlot(teacherShape) == perSlot(shape) {
		t.Fatal("the teacher's cache per token is the policy's: the test would not tell whose is counted")
	}
	dir := saveTeacher(t, "tiny-4l", shape.VocabSize, 3)
	plan := func(mode string) memplan.Report {
		cfg := Default()
		cfg.TinyModel, cfg.DType, cfg.PromptData, cfg.EvalPromptData = "tiny", "float32", "arith", "arith"
		cfg.Teacher, cfg.DistillMode = dir, mode
		if err := cfg.Validate(); err != nil {
			t.Fatal(err)
		}
		rc, err := cfg.MemoryRecipe()
		if err != nil {
			t.Fatal(err)
		}
		return memplan.Plan(shape, rc, 1<<40, memplan.CPU)
	}
	opd, sft := plan("on_policy"), plan("sft")
	if got, policy := sft.Rollout.Term(memplan.TermCache), opd.Rollout.Term(memplan.TermCache); got*perSlot(shape) != policy*perSlot(teacherShape) || policy == 0 {
		t.Errorf("sft's rollout cache is %d bytes, want on-policy's %d × %d/%d", got, policy, perSlot(teacherShape), perSlot(shape))
	}
	if got, want := sft.Eval.Term(memplan.TermCache), opd.Eval.Term(memplan.TermCache); got != want {
		t.Errorf("sft's evaluation cache is %d bytes, want the policy's %d", got, want)
	}
	for _, term := range []string{memplan.TermWeights, memplan.TermTeacher} {
		if got, want := sft.Rollout.Term(term), opd.Rollout.Term(term); got != want || want == 0 {
			t.Errorf("sft's rollout %s term is %d bytes, on-policy's %d", term, got, want)
		}
	}
}
