package grpo

import (
	"testing"
)

// TestPackBatchAlignsTokenAdvantages checks that packBatch puts each sampled
// token's distillation advantage at the row position that scores that token:
// the position whose target is the token and whose old log-prob and weight
// are the token's (the loss adds them position by position), and nowhere
// else (masked tokens and the prompt get 0).
func TestPackBatchAlignsTokenAdvantages(t *testing.T) {
	seqs := []Sequence{
		{Prompt: []int{256, 10, 20}, Response: []int{40, 41, 42, 43, 257}, Mask: []float32{1, 1, 0, 1, 1}},
		{Prompt: []int{256, 11}, Response: []int{50, 51, 52}, Mask: []float32{1, 1, 1}},
		{Prompt: []int{256}, Response: []int{60}, Mask: []float32{1}},
	}
	for i := range seqs {
		s := &seqs[i]
		n := len(s.Response)
		s.LogProbs, s.Weights, s.TokenAdvantages = make([]float32, n), make([]float32, n), make([]float32, n)
		for k := range n {
			s.LogProbs[k] = -float32(10*i+k+1) / 64 // distinct, so a position names its token
			s.Weights[k] = s.Mask[k]
			s.TokenAdvantages[k] = float32(100*(i+1) + k + 1)
		}
	}
	b, err := packBatch(seqs)
	if err != nil {
		t.Fatal(err)
	}
	if len(b.TokenAdvantages) != len(seqs) {
		t.Fatalf("%d rows of token advantages, want %d", len(b.TokenAdvantages), len(seqs))
	}
	for i, s := range seqs {
		want := make(map[int]float32) // row position -> advantage, found from the targets and old log-probs
		for k, id := range s.Response {
			found := -1
			for pos := range b.Targets[i] {
				if int(b.Targets[i][pos]) == id && b.OldLogProbs[i][pos] == s.LogProbs[k] {
					found = pos
				}
			}
			if found < 0 {
				t.Fatalf("sequence %d: no row position has token %d's target and old log-prob", i, k)
			}
			if s.Mask[k] != 0 {
				want[found] = s.TokenAdvantages[k]
			}
		}
		for pos, a := range b.TokenAdvantages[i] {
			if a != want[pos] {
				t.Errorf("sequence %d, row position %d (target %d): token advantage %v, want %v", i, pos, b.Targets[i][pos], a, want[pos])
			}
			if a != 0 && b.Weights[i][pos] == 0 {
				t.Errorf("sequence %d, row position %d: token advantage %v where the loss weight is 0", i, pos, a)
			}
		}
	}
}
