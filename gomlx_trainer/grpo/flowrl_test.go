package grpo

import (
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
