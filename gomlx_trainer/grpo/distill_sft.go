package grpo

// Distillation by imitation (distill_mode sft): the teacher, loaded in
// process, samples every training rollout with the student's rollout knobs;
// the rewards score its answers; the student takes its optimizer steps on
// the negative log-likelihood of the correct ones (rejection-sampled
// fine-tuning on teacher samples), one step per global_batch_size of them
// (at least one when any is correct): with global_batch_size the whole
// rollout, one step per rollout, as GRPO takes. Evaluations sample the
// student.

import (
	"fmt"

	"github.com/gomlx/compute"

	"github.com/mathrl/mathrl/gomlx_trainer/engine"
	"github.com/mathrl/mathrl/gomlx_trainer/engine/inprocess"
)

// newTeacherEngine returns an in-process engine sampling from the teacher
// (distill_mode sft; Validate has checked that it runs in process).
func newTeacherEngine(cfg Config, b compute.Backend, teacher Teacher) (engine.Engine, error) {
	l, ok := teacher.(*Learner)
	if !ok {
		return nil, fmt.Errorf("grpo: distill_mode sft: the teacher must run in process (teacher_engine %s)", inprocess.Name)
	}
	ec := engine.Config{Name: inprocess.Name}
	eng, err := engine.New(ec, engine.Policy{
		Vocab: l.Model.Config.VocabSize,
		Local: inprocess.Local{Backend: b, Model: l.Model},
	})
	if err != nil {
		return nil, fmt.Errorf("grpo: distill_mode sft: the teacher's sampler: %w", err)
	}
	return eng, nil
}

// rolloutEngine is the engine that samples the training rollouts: the
// teacher's under distill_mode sft, else the policy's.
func (t *trainer) rolloutEngine() engine.Engine {
	if t.teacherEngine != nil {
		return t.teacherEngine
	}
	return t.engine
}

// imitationSequences keeps, of a rollout's sequences sampled by the
// teacher, the correct ones (reward > 0), for the student's likelihood
// steps, with their batch indices (kept[j] is seqs[j]'s): their advantages
// are unused (Learner.Step with StepOptions.SFT weighs every sampled token
// alike), their masks keep tool responses out.
func imitationSequences(kept []int, seqs []Sequence) ([]int, []Sequence) {
	var keptOut []int
	var out []Sequence
	for j, s := range seqs {
		if s.Reward > 0 {
			s.Advantage = 0
			keptOut, out = append(keptOut, kept[j]), append(out, s)
		}
	}
	return keptOut, out
}
