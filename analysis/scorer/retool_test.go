package scorer

import (
	"errors"
	"math"
	"strings"
	"testing"
)

// The rewards follow slime's examples/retool reward_func: +1 for an exact box
// in the last 100 characters, else min(-0.6, -1 + (calls-2)/2*0.1).
func TestRetoolScore(t *testing.T) {
	long := strings.Repeat("x", 120)
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
		// An odd number of calls: Python's (calls-2)/2 is a true division, 0.5 per call.
		{"wrong, 1 call: -1 - 0.05", `\boxed{41}`, "42", 1, -1.05, false},
		{"wrong, 3 calls: -1 + 0.05", `\boxed{41}`, "42", 3, -0.95, false},
		{"wrong, 7 calls: -1 + 0.25", `\boxed{41}`, "42", 7, -0.75, false},
		{"exact string match only", `\boxed{42.0}`, "42", 2, -1, false},
		{"box outside the last 100 characters", `\boxed{42}` + long, "42", 2, -1, false},
		{"no box", "42", "42", 2, -1, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := ScoreSample(Retool, tc.resp, TextLabel(tc.label), tc.calls)
			if err != nil || math.Abs(r.Reward-tc.want) > 1e-12 || r.Correct != tc.correct {
				t.Errorf("ScoreSample(retool, %q, %q, %d) = %+v, %v; want %v correct=%v", tc.resp, tc.label, tc.calls, r, err, tc.want, tc.correct)
			}
		})
	}
}

// Score (as `mathrl score` calls it) counts the response's <tool_call> blocks.
func TestRetoolCountsToolCallsInText(t *testing.T) {
	call := "<tool_call>\n{\"name\": \"code_interpreter\", \"arguments\": {\"code\": \"print(1)\"}}\n</tool_call>"
	resp := strings.Repeat(call+"\n<tool_response>\n1\n</tool_response>\n", 6) + `\boxed{41}`
	r, err := Score(Retool, resp, "42")
	if err != nil || math.Abs(r.Reward-(-0.8)) > 1e-12 {
		t.Errorf("six calls in the text: %+v, %v; want -0.8", r, err)
	}
}

func TestCheckListsEveryScorer(t *testing.T) {
	for _, name := range append(Rewards(), "boxed_math") {
		if err := Check(name); err != nil {
			t.Errorf("Check(%q) = %v", name, err)
		}
	}
	err := Check("maths")
	if !errors.Is(err, ErrUnknownScorer) || !strings.Contains(err.Error(), "retool") {
		t.Errorf("Check(maths) = %v, want ErrUnknownScorer listing retool", err)
	}
}
