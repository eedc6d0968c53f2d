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
