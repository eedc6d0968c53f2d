package scorer

import "strings"

// Retool is the reward of slime's examples/retool (reward_func in
// generate_with_retool.py), which the tool-integrated seed recipe trains with.
const Retool = "retool"

// RetoolScore is slime's retool reward: dapo's compute_score with
// strict_box_verify (the last \boxed{...} within the final 100 characters must
// equal the label exactly: +1), else -1 plus a bonus for calling the tool,
// min(-0.6, -1 + (toolCalls-2)/2·0.1). toolCalls is the number of tool calls
// the response made.
func RetoolScore(response, label string, toolCalls int) Result {
	// compute_score keeps the last 300 characters, is_correct_strict_box the last 100 of those.
	pred, ok := ExtractBoxed(lastRunes(response, 100))
	if ok && pred == label {
		return Result{Reward: 1, Correct: true, Pred: pred}
	}
	return Result{Reward: min(-0.6, -1+float64(toolCalls-2)/2*0.1), Pred: pred}
}

// CountToolCalls is the number of tool calls a response text holds: its
// <tool_call> blocks, well-formed or not.
func CountToolCalls(response string) int { return strings.Count(response, "<tool_call>") }
