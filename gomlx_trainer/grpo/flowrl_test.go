package grpo

import (
	"math"
	"slices"
	"strings"
	"testing"
)

// TestFlowRLVarGradLogZRefusesBrokenGroups: VarGradLogZ returns an error,
// never panics, when the sequences are not whole groups of one prompt each
// or lack the log-probs of their loss tokens; a group of one prompt gets the
// mean of −(mean logp_old − β·A − mean logp_ref) over its sequences.
func TestFlowRLVarGradLogZRefusesBrokenGroups(t *testing.T) {
	seq := func(prompt int, old, ref float32, adv float64) Sequence {
		return Sequence{Prompt: []int{256, prompt}, Response: []int{1, 2}, Mask: []float32{1, 1},
			LogProbs: []float32{old, old}, RefLogProbs: []float32{ref, ref}, Advantage: adv}
	}
	whole := []Sequence{seq(7, -1, -2, 1), seq(7, -3, -2, -1), seq(8, -1, -1, 0), seq(8, -2, -1, 0)}
	logZ, err := VarGradLogZ(whole, 2, 0.5)
	if err != nil {
		t.Fatal(err)
	}
	// group 7: −[(−1 − 0.5 + 2) + (−3 + 0.5 + 2)]/2 = 0; group 8: −[0 + (−1)]/2 = 0.5
	if want := []float64{0, 0, 0.5, 0.5}; !near(logZ[0], want[0], 1e-12) || !near(logZ[1], want[1], 1e-12) ||
		!near(logZ[2], want[2], 1e-12) || !near(logZ[3], want[3], 1e-12) {
		t.Errorf("log Z %v, want %v", logZ, want)
	}
	noRef := seq(7, -1, -2, 1)
	noRef.RefLogProbs = nil
	short := seq(7, -1, -2, 1)
	short.LogProbs = short.LogProbs[:1]
	for _, tc := range []struct {
		name      string
		seqs      []Sequence
		groupSize int
		err       string
	}{
		{"one sequence dropped", whole[1:], 2, "grpo: VarGradLogZ: 3 sequences do not make whole groups of 2"},
		{"groups of 0", whole, 0, "grpo: VarGradLogZ: 4 sequences do not make whole groups of 0"},
		{"groups shifted by one", []Sequence{whole[1], whole[2], whole[3], whole[0]}, 2,
			"grpo: VarGradLogZ: sequence 1 has another prompt than sequence 0, the first of its group of 2"},
		{"no reference log-probs", []Sequence{whole[0], noRef}, 2, "grpo: VarGradLogZ: sequence 1: no reference log-probs"},
		{"old log-probs short of the mask", []Sequence{short, whole[0]}, 2,
			"grpo: VarGradLogZ: sequence 0: 1 old and 2 reference log-probs for 2 mask entries"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := VarGradLogZ(tc.seqs, tc.groupSize, 0.5)
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("error %v, want one containing %q", err, tc.err)
			}
		})
	}
}

// TestFlowRLFirstStepResidualsSumToZero takes a rollout's first FlowRL step
// as the trainer does with the default use_rollout_logprobs false: the old
// log-probs recomputed by the training graph (as correct does), the
// reference's, VarGradLogZ over two groups of two, then the on-policy step,
// whose ratios are its own forward's. It measures each group's Σ δ_i inside
// the loss graph, from the loss with that group's log Z shifted by ±c (at
// learning rate 0, so the weights stay): L(+c) − L(−c) = (4c/N)·Σ_group δ_i
// when every w is 1. The sums are 0 to float32 rounding, and nothing is
// clipped. With log Z taken from log-probs 0.3 nat above the loss's (a
// sampler that disagrees with the trainer by that much, as with
// use_rollout_logprobs), each sequence's δ is off by −0.3 and the group's
// sum is −0.6.
func TestFlowRLFirstStepResidualsSumToZero(t *testing.T) {
	const beta, c = 2.0, 0.25
	l := NewLearner(testBackend(t), tinyModel(t, 5), LossConfig{EpsLow: 0.2, EpsHigh: 0.28, FlowRL: true, FlowBeta: beta},
		AdamWConfig{Beta1: 0.9, Beta2: 0.98, Eps: 1e-8, ClipNorm: 1}, 1).WithReference(tinyModel(t, 4), 1)
	seqs := []Sequence{
		{Prompt: []int{256, 10, 20}, Response: []int{40, 41, 42, 257}, Mask: []float32{1, 1, 1, 1}, Advantage: 0.7},
		{Prompt: []int{256, 10, 20}, Response: []int{43, 44, 99, 45}, Mask: []float32{1, 1, 0, 1}, Advantage: -0.7},
		{Prompt: []int{256, 11}, Response: []int{50, 51}, Mask: []float32{1, 1}, Advantage: 1.1},
		{Prompt: []int{256, 11}, Response: []int{52, 53, 54}, Mask: []float32{1, 1, 1}, Advantage: -1.1},
	}
	for i := range seqs {
		seqs[i].LogProbs = make([]float32, len(seqs[i].Response)) // packed, not read: recomputed next
	}
	o := StepOptions{MicroBatch: 2, OnPolicy: true} // LR 0: every step sees the same weights
	old, err := l.SequenceLogProbs(seqs, o)
	if err != nil {
		t.Fatal(err)
	}
	ref, err := l.ref.SequenceLogProbs(seqs, o)
	if err != nil {
		t.Fatal(err)
	}
	for i := range seqs {
		seqs[i].LogProbs, seqs[i].RefLogProbs = old[i], ref[i]
	}
	// groupSums returns each group's Σ δ_i as the loss graph sees it, for old
	// log-probs shifted by shift before VarGradLogZ.
	groupSums := func(shift float32) [2]float64 {
		t.Helper()
		shifted := slices.Clone(seqs)
		for i := range shifted {
			shifted[i].LogProbs = slices.Clone(old[i])
			for k := range shifted[i].LogProbs {
				shifted[i].LogProbs[k] += shift * shifted[i].Mask[k]
			}
		}
		logZ, err := VarGradLogZ(shifted, 2, beta)
		if err != nil {
			t.Fatal(err)
		}
		loss := func(group int, dz float64) float64 {
			t.Helper()
			for i := range shifted {
				shifted[i].LogZ = logZ[i]
				if i/2 == group {
					shifted[i].LogZ += dz
				}
			}
			ss, _, err := l.Step(shifted, o)
			if err != nil {
				t.Fatal(err)
			}
			if ss.ClipTokens != 0 {
				t.Errorf("%v tokens clipped on policy", ss.ClipTokens)
			}
			return ss.Loss
		}
		var sums [2]float64
		for g := range sums {
			sums[g] = float64(len(seqs)) * (loss(g, c) - loss(g, -c)) / (4 * c)
		}
		return sums
	}
	on, off := groupSums(0), groupSums(0.3)
	t.Logf("groups' Σ δ on the first step %v; with log Z 0.3 nat off %v", on, off)
	if sums := on; math.Abs(sums[0]) > 1e-4 || math.Abs(sums[1]) > 1e-4 {
		t.Errorf("on the first step the groups' residuals sum to %v, want 0", sums)
	}
	if sums := off; !near(sums[0], -0.6, 1e-3) || !near(sums[1], -0.6, 1e-3) {
		t.Errorf("with log Z from log-probs 0.3 nat off the groups' residuals sum to %v, want -0.6 each", sums)
	}
}
