package grpo

import (
	"github.com/mathrl/mathrl/analysis/rollouts"
)

// writeRecords writes the token-level records of b's samples, whose
// optimizer steps have been taken, to rollouts/step-NNNNNN.jsonl (N = begun:
// the optimizer steps before the rollout's own, those of the policy that
// sampled it but with async_rollouts, whose weights are rollout_staleness
// steps older, and whose first two rollouts share their sampling weights),
// every save_rollouts_every rollouts, the run's first and last included.
// kept, trained and trainSteps are what sequences, correct and optimize
// returned.
func (t *trainer) writeRecords(b batch, begun int, kept []int, trained []Sequence, trainSteps []int) error {
	every, k := t.cfg.SaveRolloutsEvery, t.st.Rollout // k: this rollout, from 0
	if every == 0 || k%every != 0 && k != t.cfg.NumRollout-1 {
		return nil
	}
	return rollouts.WriteFile(rollouts.Path(string(t.run), begun), t.records(b, begun, kept, trained, trainSteps))
}

// records returns the records of the first save_rollouts_groups prompt
// groups of b (0: all). Mask, old log-probs and advantage are those of the
// sequence the loss took (trained, the sequence of sample kept[j] being
// trained[j], taken by optimizer step trainSteps[j]); a sample left out of the
// loss gets an all-zero mask, advantage 0 and train step 0.
func (t *trainer) records(b batch, begun int, kept []int, trained []Sequence, trainSteps []int) []rollouts.Record {
	g, groups, proto := t.cfg.NSamplesPerPrompt, t.cfg.SaveRolloutsGroups, t.proto
	seqOf := map[int]int{} // sample -> index into trained
	for j, i := range kept[:len(trained)] {
		seqOf[i] = j
	}
	n := len(b.samples)
	if groups > 0 {
		n = min(n, groups*g)
	}
	recs := make([]rollouts.Record, n)
	for i := range recs {
		s, p, v := b.samples[i], b.problems[i/g], b.verdicts[i]
		rec := rollouts.Record{
			Step: begun, Rollout: t.st.Rollout + 1, ProblemID: p.ID, Problem: p.Text, Label: p.Answer,
			Group: i / g, SampleIndex: i % g, PromptIDs: b.prompts[i], Prompt: proto.Decode(b.prompts[i]),
			ResponseIDs: s.IDs, Tokens: make([]string, len(s.IDs)),
			Mask: make([]float32, len(s.IDs)), LogProbs: s.LogProbs,
			Reward: b.rewards[i], Correct: v.Correct, Pred: v.Pred,
			Finish: s.Finish, ToolCalls: s.ToolCalls, ToolErrors: s.ToolErrors,
		}
		for k, id := range s.IDs {
			rec.Tokens[k] = proto.Decode([]int{id})
		}
		if v.Err != nil {
			rec.ScorerError = v.Err.Error()
		}
		if j, ok := seqOf[i]; ok {
			q := trained[j]
			rec.Mask, rec.LogProbs, rec.Advantage, rec.TrainStep = q.Mask, q.LogProbs, q.Advantage, trainSteps[j]
		}
		recs[i] = rec
	}
	return recs
}
