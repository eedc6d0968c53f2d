package grpo

import (
	"github.com/mathrl/mathrl/analysis/rollouts"
	"github.com/mathrl/mathrl/gomlx_trainer/tokenizer"
)

// recordRollout writes the token-level record of r, whose optimizer steps
// have been taken, to rollouts/step-NNNNNN.jsonl (N: the steps of the policy
// that sampled it), every save_rollouts_every rollouts, the run's first and
// last included.
func (t *trainer) recordRollout(r *rolloutBatch) error {
	every, k := t.cfg.SaveRolloutsEvery, t.st.Rollout // k: this rollout, from 0
	if every == 0 || k%every != 0 && k != t.cfg.NumRollout-1 {
		return nil
	}
	return rollouts.WriteFile(rollouts.Path(string(t.run), r.step), rolloutRecords(r, t.proto, t.cfg.NSamplesPerPrompt, t.cfg.SaveRolloutsGroups, k+1))
}

// rolloutRecords returns the records of the first groups prompt groups of r
// (0: all), g samples each. Mask, old log-probs and advantage are those of
// the sequence the loss took (r.trained); a sample left out of the loss gets
// an all-zero mask, advantage 0 and train step 0.
func rolloutRecords(r *rolloutBatch, proto *tokenizer.Protocol, g, groups, rollout int) []rollouts.Record {
	seqOf := map[int]int{} // sample -> index into r.trained
	for j, i := range r.kept[:len(r.trained)] {
		seqOf[i] = j
	}
	n := len(r.samples)
	if groups > 0 {
		n = min(n, groups*g)
	}
	recs := make([]rollouts.Record, n)
	for i := range recs {
		s, p, v := r.samples[i], r.problems[i/g], r.verdicts[i]
		rec := rollouts.Record{
			Step: r.step, Rollout: rollout, ProblemID: p.ID, Problem: p.Text, Label: p.Answer,
			Group: i / g, SampleIndex: i % g, PromptIDs: r.prompts[i], Prompt: proto.Decode(r.prompts[i]),
			ResponseIDs: s.IDs, Tokens: make([]string, len(s.IDs)),
			Mask: make([]float32, len(s.IDs)), LogProbs: s.LogProbs,
			Reward: r.rewards[i], Correct: v.Correct, Pred: v.Pred,
			Finish: s.Finish, ToolCalls: s.ToolCalls, ToolErrors: s.ToolErrors,
		}
		for k, id := range s.IDs {
			rec.Tokens[k] = proto.Decode([]int{id})
		}
		if v.Err != nil {
			rec.ScorerError = v.Err.Error()
		}
		if j, ok := seqOf[i]; ok {
			q := r.trained[j]
			rec.Mask, rec.LogProbs, rec.Advantage, rec.TrainStep = q.Mask, q.LogProbs, q.Advantage, r.trainSteps[j]
		}
		recs[i] = rec
	}
	return recs
}
