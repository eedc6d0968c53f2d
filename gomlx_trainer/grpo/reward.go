package grpo

import (
	"github.com/mathrl/mathrl/analysis/scorer"
)

// Reward is a response's score: the reward used for advantages, whether it is
// right, the extracted answer, and the scorer error (the sample then gets
// reward 0 and counts in the error column, not as a wrong answer).
type Reward struct {
	Value   float64
	Correct bool
	Pred    string
	Err     error
}

// RewardFunc scores one response against its label; toolCalls is the number
// of tool calls the response made.
type RewardFunc func(response, label string, toolCalls int) Reward

// ScorerReward is the RewardFunc of a scorer of package scorer (an rm_type:
// math, dapo, deepscaler, verify, retool, optionally boxed_-prefixed).
func ScorerReward(name string) RewardFunc {
	return func(response, label string, toolCalls int) Reward {
		res, err := scorer.ScoreSample(name, response, scorer.TextLabel(label), toolCalls)
		if err != nil {
			return Reward{Err: err, Pred: res.Pred}
		}
		return Reward{Value: res.Reward, Correct: res.Correct, Pred: res.Pred}
	}
}
