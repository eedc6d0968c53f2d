package grpo

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/mathrl/mathrl/gomlx_trainer/layout"
)

// Sequence is one training example before padding: the prompt ids, the
// response ids that followed, and per response token its loss mask (1 where
// the policy sampled it), sampling log-prob and loss weight.
type Sequence struct {
	Prompt      []int
	Response    []int
	Mask        []float32 // 1 on sampled tokens; 0 on tool responses and glue
	LogProbs    []float32 // old log-prob of the PPO ratio: the sampler's, or the training graph's once recomputed (see use_rollout_logprobs); 0 where Mask is 0
	RefLogProbs []float32 // log-prob under the reference policy, once computed (FlowRL computes it for the whole rollout; nil: the learner computes it per micro-batch when the KL penalty is on)
	Weights     []float32 // loss weight per response token, from TokenWeights
	ISWeights   []float32 // importance weight per response token (truncated importance sampling); nil: 1
	Advantage   float64
	Reward      float64 // the sample's outcome reward (implicit process rewards learn from it)
	LogZ        float64 // FlowRL: the estimate of log Z of the sequence's prompt (VarGradLogZ)
	// TokenAdvantages, when not nil, is an advantage per response token added
	// to Advantage (on-policy distillation, see distillSequences); 0 where
	// Mask is 0.
	TokenAdvantages []float32
	TeacherLogProbs []float32 // the teacher's log-prob per response token (on-policy distillation), for its metrics; nil: none
}

// packBatch lays sequences out as a padded Batch (see Batch for the alignment:
// response token k, at index len(Prompt)+k of the row, is scored at the
// position before it). All rows get length padLength of the longest.
func packBatch(seqs []Sequence) (Batch, error) {
	longest := 0
	for i, s := range seqs {
		if len(s.Prompt) == 0 {
			return Batch{}, fmt.Errorf("grpo: sequence %d has an empty prompt", i)
		}
		if len(s.Mask) != len(s.Response) || len(s.LogProbs) != len(s.Response) || len(s.Weights) != len(s.Response) {
			return Batch{}, fmt.Errorf("grpo: sequence %d: %d response ids, %d mask, %d log-probs, %d weights",
				i, len(s.Response), len(s.Mask), len(s.LogProbs), len(s.Weights))
		}
		if s.TokenAdvantages != nil && len(s.TokenAdvantages) != len(s.Response) {
			return Batch{}, fmt.Errorf("grpo: sequence %d: %d response ids, %d token advantages", i, len(s.Response), len(s.TokenAdvantages))
		}
		longest = max(longest, len(s.Prompt)+len(s.Response))
	}
	t := layout.PadLength(longest)
	b := Batch{
		IDs: make([][]int32, len(seqs)), Targets: make([][]int32, len(seqs)),
		OldLogProbs: make([][]float32, len(seqs)), Weights: make([][]float32, len(seqs)),
		ISWeights: make([][]float32, len(seqs)), Advantages: make([]float32, len(seqs)), LogZ: make([]float32, len(seqs)),
		PromptLens: make([]float32, len(seqs)),
	}
	withRef := len(seqs) > 0 && seqs[0].RefLogProbs != nil
	if withRef {
		b.RefLogProbs = make([][]float32, len(seqs))
	}
	for i, s := range seqs {
		ids := make([]int32, t)
		for j, id := range s.Prompt {
			ids[j] = int32(id)
		}
		p := len(s.Prompt)
		for k, id := range s.Response {
			ids[p+k] = int32(id)
		}
		targets := make([]int32, t)
		copy(targets, ids[1:])
		old, w, isw := make([]float32, t), make([]float32, t), make([]float32, t)
		var ref []float32
		if withRef {
			ref = make([]float32, t)
		}
		for k := range s.Response {
			pos := p + k - 1
			w[pos] = s.Weights[k]
			if s.Mask[k] == 0 {
				w[pos] = 0
			}
			old[pos] = s.LogProbs[k]
			isw[pos] = 1
			if s.ISWeights != nil {
				isw[pos] = s.ISWeights[k]
			}
			if withRef {
				ref[pos] = s.RefLogProbs[k]
			}
		}
		b.IDs[i], b.Targets[i], b.OldLogProbs[i], b.Weights[i], b.ISWeights[i] = ids, targets, old, w, isw
		if withRef {
			b.RefLogProbs[i] = ref
		}
		b.Advantages[i] = float32(s.Advantage)
		b.LogZ[i] = float32(s.LogZ)
		b.PromptLens[i] = float32(len(s.Prompt))
	}
	b.TokenAdvantages = packTokenAdvantages(seqs, t)
	return b, nil
}

// packTokenAdvantages lays out the sequences' per-token advantages as
// packBatch does the old log-probs ([rows][t], response token k of a row at
// len(Prompt)+k−1), or returns nil when no sequence has any.
func packTokenAdvantages(seqs []Sequence, t int) [][]float32 {
	if !slices.ContainsFunc(seqs, func(s Sequence) bool { return s.TokenAdvantages != nil }) {
		return nil
	}
	out := make([][]float32, len(seqs))
	for i, s := range seqs {
		out[i] = make([]float32, t)
		for k, a := range s.TokenAdvantages {
			if s.Mask[k] != 0 {
				out[i][len(s.Prompt)+k-1] = a
			}
		}
	}
	return out
}

// tokenMicroBatches splits sequences of the given lengths (prompt + response
// tokens) into micro-batches of at most budget padded tokens each: a
// micro-batch of r rows costs r × padLength(its longest row). It sorts the
// sequences longest first (ties in input order) and fills each micro-batch
// greedily, so the first micro-batch holds the longest row. A sequence whose
// padded length alone is over budget gets a micro-batch of its own. It
// returns the indices into lengths of each micro-batch's rows; no micro-batch
// is empty, and there are none for no lengths. It panics if budget < 1.
//
// For example, with budget 128 the lengths 40, 10, 100, 20, 30 (padded to 64,
// 32, 128, 32, 32) give [[2] [0 4] [3 1]]: 100 fills 128 on its own, 40 sets
// 64 per row for itself and 30, and 20 and 10 take 2 × 32.
func tokenMicroBatches(lengths []int, budget int) [][]int {
	if budget < 1 {
		panic(fmt.Sprintf("grpo: token budget %d, want at least 1", budget))
	}
	order := make([]int, len(lengths))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(lengths[b], lengths[a]) })
	var out [][]int
	for len(order) > 0 {
		rows := max(budget/layout.PadLength(lengths[order[0]]), 1) // longest first: the first row sets the padded length
		rows = min(rows, len(order))
		out = append(out, order[:rows:rows])
		order = order[rows:]
	}
	return out
}
