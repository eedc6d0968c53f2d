package grpo

import (
	"fmt"
	"math"
)

// GroupAdvantages returns one advantage per sample for rewards laid out group
// after group (groupSize consecutive samples share a prompt):
//
//	A_i = (r_i − mean(g)) / (std(g) + eps)   with normalizeStd (GRPO)
//	A_i =  r_i − mean(g)                      without (Dr.GRPO)
//
// std is the sample standard deviation (n − 1 in the denominator, as torch.std in
// slime); a group of one has std 0. Worked example, one group of 4 with rewards
// 1, 0, 0, 0: mean 0.25, std sqrt(0.75/3) = 0.5, advantages 1.5, −0.5, −0.5, −0.5
// (eps aside). It panics if len(rewards) is not a multiple of groupSize.
func GroupAdvantages(rewards []float64, groupSize int, eps float64, normalizeStd bool) []float64 {
	if groupSize < 1 || len(rewards)%groupSize != 0 {
		panic(fmt.Sprintf("grpo: GroupAdvantages: %d rewards in groups of %d", len(rewards), groupSize))
	}
	adv := make([]float64, len(rewards))
	for start := 0; start < len(rewards); start += groupSize {
		g := rewards[start : start+groupSize]
		mean, std := meanStd(g)
		for i, r := range g {
			a := r - mean
			if normalizeStd {
				a /= std + eps
			}
			adv[start+i] = a
		}
	}
	return adv
}

// meanStd returns the mean and the sample (n − 1) standard deviation of x.
func meanStd(x []float64) (mean, std float64) {
	for _, v := range x {
		mean += v
	}
	mean /= float64(len(x))
	if len(x) < 2 {
		return mean, 0
	}
	var ss float64
	for _, v := range x {
		ss += (v - mean) * (v - mean)
	}
	return mean, math.Sqrt(ss / float64(len(x)-1))
}

// KeepGroups returns the indices of the groups whose rewards are not all equal:
// the dynamic-sampling filter of DAPO (such a group has zero advantage everywhere
// and only dilutes the batch).
func KeepGroups(rewards []float64, groupSize int) []int {
	if groupSize < 1 || len(rewards)%groupSize != 0 {
		panic(fmt.Sprintf("grpo: KeepGroups: %d rewards in groups of %d", len(rewards), groupSize))
	}
	var keep []int
	for gi := 0; gi*groupSize < len(rewards); gi++ {
		g := rewards[gi*groupSize : (gi+1)*groupSize]
		for _, r := range g[1:] {
			if r != g[0] {
				keep = append(keep, gi)
				break
			}
		}
	}
	return keep
}

// TokenWeights returns the per-token loss weights of a batch from its loss masks
// (1 where the policy sampled the token, 0 elsewhere):
//
//	perToken: w = mask / (total mask of the batch)            (token-level mean)
//	else:     w = mask / (mask of the sequence) / sequences   (mean of sequence means)
//
// The batch is the whole global batch, so micro-batches of it can be summed.
// A batch without any sampled token gets all-zero weights.
func TokenWeights(masks [][]float32, perToken bool) [][]float32 {
	w := make([][]float32, len(masks))
	var total float64
	for _, m := range masks {
		for _, v := range m {
			total += float64(v)
		}
	}
	for i, m := range masks {
		w[i] = make([]float32, len(m))
		var n float64
		for _, v := range m {
			n += float64(v)
		}
		denom := total
		if !perToken {
			denom = n * float64(len(masks))
		}
		if denom == 0 {
			continue
		}
		for j, v := range m {
			w[i][j] = float32(float64(v) / denom)
		}
	}
	return w
}

// Advantages returns one advantage per sample, as estimator says (see
// Config.AdvantageEstimator): "grpo", "gspo" and "flowrl" (whose loss takes
// the advantage as its normalised reward r̂) use GroupAdvantages; "rloo"
// leaves each sample out of its own baseline, A_i = r_i − mean of the other
// rewards of its group (0 in a group of one); "reinforce_plus_plus_baseline"
// takes r_i − the group mean and whitens it over the batch's tokens, each
// sample weighing as many tokens as it has (tokens[i]): (a − μ) / √(σ² + 1e-8)
// with the token-weighted mean μ and the unbiased token-weighted variance σ².
func Advantages(estimator string, rewards []float64, groupSize int, tokens []int, eps float64, normalizeStd bool) []float64 {
	switch estimator {
	case "rloo":
		return leaveOneOut(rewards, groupSize)
	case "reinforce_plus_plus_baseline":
		return whitenByTokens(GroupAdvantages(rewards, groupSize, 0, false), tokens)
	}
	return GroupAdvantages(rewards, groupSize, eps, normalizeStd)
}

// leaveOneOut is RLOO's advantage: each reward minus the mean of the other
// rewards of its group.
func leaveOneOut(rewards []float64, groupSize int) []float64 {
	adv := make([]float64, len(rewards))
	if groupSize < 2 {
		return adv
	}
	for start := 0; start < len(rewards); start += groupSize {
		g := rewards[start : start+groupSize]
		var sum float64
		for _, r := range g {
			sum += r
		}
		for i, r := range g {
			adv[start+i] = r - (sum-r)/float64(groupSize-1)
		}
	}
	return adv
}

// whitenByTokens whitens a over the tokens of the batch: a[i] stands for
// tokens[i] tokens of the same value.
func whitenByTokens(a []float64, tokens []int) []float64 {
	var n, mean float64
	for i, v := range a {
		n += float64(tokens[i])
		mean += float64(tokens[i]) * v
	}
	out := make([]float64, len(a))
	if n < 2 {
		return out
	}
	mean /= n
	var ss float64
	for i, v := range a {
		ss += float64(tokens[i]) * (v - mean) * (v - mean)
	}
	std := math.Sqrt(ss/(n-1) + 1e-8)
	for i, v := range a {
		out[i] = (v - mean) / std
	}
	return out
}

// OverlongPenalty is DAPO's soft overlong punishment of a response of length
// tokens: 0 up to maxLen − buffer, then falling linearly to −factor at maxLen
// (and below past it). buffer 0 turns it off.
func OverlongPenalty(length, maxLen, buffer int, factor float64) float64 {
	if buffer <= 0 {
		return 0
	}
	return -math.Max(float64(length-(maxLen-buffer)), 0) / float64(buffer) * factor
}
