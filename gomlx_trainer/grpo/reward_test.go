package grpo

import (
	"math"
	"testing"
)

func TestRetoolReward(t *testing.T) {
	long := ""
	for range 120 {
		long += "x"
	}
	for _, tc := range []struct {
		name, resp, label string
		calls             int
		want              float64
		correct           bool
	}{
		{"right box", `so \boxed{42}`, "42", 0, 1, true},
		{"wrong box, no calls: -1 - 0.1", `\boxed{41}`, "42", 0, -1.1, false},
		{"wrong, 6 calls: -1 + 0.2 capped at -0.6", `\boxed{41}`, "42", 6, -0.8, false},
		{"wrong, 12 calls: capped at -0.6", `\boxed{41}`, "42", 12, -0.6, false},
		{"exact string match only", `\boxed{42.0}`, "42", 2, -1, false},
		{"box outside the last 100 characters", `\boxed{42}` + long, "42", 2, -1, false},
		{"no box", "42", "42", 2, -1, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := ScoreResponse(RetoolReward, tc.resp, tc.label, tc.calls)
			if math.Abs(r.Value-tc.want) > 1e-12 || r.Correct != tc.correct || r.Err != nil {
				t.Errorf("reward %+v, want %v correct=%v", r, tc.want, tc.correct)
			}
		})
	}
}

func TestScoreResponseScorers(t *testing.T) {
	if r := ScoreResponse("math", `\boxed{\frac{1}{2}}`, "0.5", 0); !r.Correct || r.Value != 1 {
		t.Errorf("math: %+v", r)
	}
	if r := ScoreResponse("dapo", "Answer: 7", "8", 0); r.Correct || r.Value != -1 {
		t.Errorf("dapo: %+v", r)
	}
	if r := ScoreResponse("dapo", "Answer: 7", `\frac{1}{2}`, 0); r.Err == nil || r.Value != 0 {
		t.Errorf("dapo on a symbolic label: %+v, want an error and reward 0", r)
	}
}
