package grpo

import (
	"github.com/mathrl/mathrl/analysis/scorer"
)

// RetoolReward is the rm_type of slime's examples/retool reward_func: dapo's
// compute_score with strict_box_verify (the last \boxed{...} within the final
// 100 characters must equal the label exactly: +1, else -1), plus a bonus for
// calling the tool on wrong answers, min(-0.6, -1 + (calls-2)/2·0.1).
const RetoolReward = "retool"

// Reward is a response's score: the reward used for advantages, whether it is
// right, and the scorer error (the sample then gets reward 0 and counts in the
// error column, not as a wrong answer).
type Reward struct {
	Value   float64
	Correct bool
	Pred    string
	Err     error
}

// ScoreResponse scores response against label with rm_type name ("math",
// "dapo", "deepscaler" from analysis/scorer, or RetoolReward); toolCalls is
// the number of tool calls the response made.
func ScoreResponse(name, response, label string, toolCalls int) Reward {
	if name == RetoolReward {
		return retoolReward(response, label, toolCalls)
	}
	res, err := scorer.Score(name, response, label)
	if err != nil {
		return Reward{Err: err, Pred: res.Pred}
	}
	return Reward{Value: res.Reward, Correct: res.Correct, Pred: res.Pred}
}

func retoolReward(response, label string, toolCalls int) Reward {
	// compute_score keeps the last 300 characters, is_correct_strict_box the last 100 of those.
	tail := lastRunes(response, 100)
	pred, ok := scorer.ExtractBoxed(tail)
	r := Reward{Value: -1, Pred: pred}
	if ok && pred == label {
		r.Value, r.Correct = 1, true
		return r
	}
	r.Value = min(-0.6, r.Value+float64(toolCalls-2)/2*0.1)
	return r
}

func lastRunes(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[len(r)-n:])
}
