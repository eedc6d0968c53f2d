package grpo

import "testing"

func TestScorerReward(t *testing.T) {
	if r := ScorerReward("math")(`\boxed{\frac{1}{2}}`, "0.5", 0); !r.Correct || r.Value != 1 {
		t.Errorf("math: %+v", r)
	}
	if r := ScorerReward("dapo")("Answer: 7", "8", 0); r.Correct || r.Value != -1 {
		t.Errorf("dapo: %+v", r)
	}
	if r := ScorerReward("dapo")("Answer: 7", `\frac{1}{2}`, 0); r.Err == nil || r.Value != 0 {
		t.Errorf("dapo on a symbolic label: %+v, want an error and reward 0", r)
	}
	// retool reads the sample's tool-call count, not the text's
	if r := ScorerReward("retool")(`\boxed{41}`, "42", 6); r.Correct || r.Value != -0.8 {
		t.Errorf("retool with 6 calls: %+v, want -0.8", r)
	}
}
