package rollouts

import (
	"fmt"
	"math"
	"strings"
)

// Summary sums up the records of one step: what the loss trained on and with
// what advantages.
type Summary struct {
	Step        int
	Samples     int
	Trained     int     // samples the loss took (train_step > 0)
	Correct     int     // samples the scorer accepted
	RewardMean  float64 // over the samples
	Tokens      int     // response tokens
	Mask1       int     // response tokens with mask 1 (trained on)
	Mask0       int     // response tokens with mask 0 (injected, or left out)
	ToolCalls   int     // tool calls run
	AdvMin      float64 // over the samples the loss took
	AdvMax      float64
	ZeroAdvSeqs int // samples the loss took with advantage 0 (a group whose rewards were all equal)
}

// Summarize returns the Summary of one step's records (Step is that of the
// first record).
func Summarize(recs []Record) Summary {
	s := Summary{AdvMin: math.Inf(1), AdvMax: math.Inf(-1)}
	if len(recs) > 0 {
		s.Step = recs[0].Step
	}
	for _, r := range recs {
		s.Samples++
		s.RewardMean += r.Reward / float64(len(recs))
		s.ToolCalls += r.ToolCalls
		s.Tokens += len(r.ResponseIDs)
		for _, m := range r.Mask {
			if m != 0 {
				s.Mask1++
			}
		}
		if r.Correct {
			s.Correct++
		}
		if r.TrainStep > 0 {
			s.Trained++
			s.AdvMin, s.AdvMax = math.Min(s.AdvMin, r.Advantage), math.Max(s.AdvMax, r.Advantage)
			if r.Advantage == 0 {
				s.ZeroAdvSeqs++
			}
		}
	}
	s.Mask0 = s.Tokens - s.Mask1
	if s.Trained == 0 {
		s.AdvMin, s.AdvMax = 0, 0
	}
	return s
}

// Markdown renders summaries as a Markdown table, one row per step.
func Markdown(sums []Summary) string {
	var b strings.Builder
	b.WriteString("| step | samples | trained | correct | reward mean | response tokens | mask 1 | mask 0 | tool calls | advantage min | advantage max | trained with advantage 0 |\n")
	b.WriteString("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, s := range sums {
		fmt.Fprintf(&b, "| %d | %d | %d | %d | %.3f | %d | %d (%.0f%%) | %d (%.0f%%) | %d | %+.3f | %+.3f | %d |\n",
			s.Step, s.Samples, s.Trained, s.Correct, s.RewardMean, s.Tokens,
			s.Mask1, percent(s.Mask1, s.Tokens), s.Mask0, percent(s.Mask0, s.Tokens), s.ToolCalls, s.AdvMin, s.AdvMax, s.ZeroAdvSeqs)
	}
	return b.String()
}

func percent(a, b int) float64 { return 100 * float64(a) / float64(max(b, 1)) }
