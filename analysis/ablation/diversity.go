package ablation

import (
	"fmt"
	"slices"

	"github.com/mathrl/mathrl/analysis/metrics"
	"github.com/mathrl/mathrl/analysis/scorer"
)

// DiversityResult is one arm's diversity of solutions, from its runs'
// diversity samples (many answers per problem), pooled over its seeds.
type DiversityResult struct {
	Arm     string
	Seeds   int
	K       int     // answers per problem
	Correct float64 // the share of correct answers
	// Solved is the share of (seed, problem) pairs with a correct answer
	// among the K (pass@K).
	Solved float64
	// DistinctCorrect is the mean, over solved (seed, problem) pairs, of the
	// number of distinct correct responses (exact text, tool turns included):
	// how many different solutions the policy keeps for a problem it solves.
	DistinctCorrect float64
	// DistinctAnswers is the mean, over (seed, problem) pairs, of the number
	// of distinct final answers (the last \boxed{} content; none counts as
	// one answer), right or wrong.
	DistinctAnswers float64
}

// Diversity compares the arms' diversity samples. Every run must hold them,
// with the same number of answers for every problem.
func Diversity(runs []Run) ([]DiversityResult, error) {
	var out []DiversityResult
	for _, arm := range Arms(runs) {
		res := DiversityResult{Arm: arm}
		var answers, correct, pairs, solved, distinctCorrect, distinctAnswers float64
		for _, r := range runs {
			if r.Arm != arm {
				continue
			}
			if len(r.Diversity) == 0 {
				return nil, fmt.Errorf("ablation: %s has no diversity samples", r.Dir)
			}
			byProblem, k, err := groupByProblem(r)
			if err != nil {
				return nil, err
			}
			if res.K != 0 && res.K != k {
				return nil, fmt.Errorf("ablation: %s: %d answers per problem, other runs of %s %d", r.Dir, k, arm, res.K)
			}
			res.K = k
			res.Seeds++
			for _, group := range byProblem {
				texts, finals := map[string]bool{}, map[string]bool{}
				for _, s := range group {
					answers++
					final, _ := scorer.ExtractBoxed(s.Response)
					finals[final] = true
					if s.Correct() {
						correct++
						texts[s.Response] = true
					}
				}
				pairs++
				distinctAnswers += float64(len(finals))
				if len(texts) > 0 {
					solved++
					distinctCorrect += float64(len(texts))
				}
			}
		}
		res.Correct, res.Solved, res.DistinctAnswers = correct/answers, solved/pairs, distinctAnswers/pairs
		if solved > 0 {
			res.DistinctCorrect = distinctCorrect / solved
		}
		out = append(out, res)
	}
	return out, nil
}

// groupByProblem returns a run's diversity samples by problem, in order of
// first appearance, and the number of answers per problem, which must be
// the same for all.
func groupByProblem(r Run) ([][]metrics.Sample, int, error) {
	index := map[string]int{}
	var groups [][]metrics.Sample
	for _, s := range r.Diversity {
		i, ok := index[s.ProblemID]
		if !ok {
			i = len(groups)
			index[s.ProblemID] = i
			groups = append(groups, nil)
		}
		groups[i] = append(groups[i], s)
	}
	k := len(groups[0])
	for _, g := range groups {
		if len(g) != k {
			return nil, 0, fmt.Errorf("ablation: %s: problem %s has %d diversity samples, problem %s %d",
				r.Dir, g[0].ProblemID, len(g), groups[0][0].ProblemID, k)
		}
	}
	return groups, k, nil
}

// DiversityMarkdown writes the diversity results as a table.
func DiversityMarkdown(results []DiversityResult) string {
	if len(results) == 0 {
		return ""
	}
	k := results[0].K
	s := fmt.Sprintf("| arm | seeds | correct answers | problems solved (pass@%d) | distinct correct responses per solved problem | distinct final answers per problem |\n|---|---|---|---|---|---|\n", k)
	for _, r := range results {
		s += fmt.Sprintf("| %s | %d | %.3f | %.3f | %.2f of %d | %.2f of %d |\n", r.Arm, r.Seeds, r.Correct, r.Solved, r.DistinctCorrect, r.K, r.DistinctAnswers, r.K)
	}
	return s
}

// ToolResult is one arm's tool-call behaviour in its diversity samples,
// pooled over its seeds.
type ToolResult struct {
	Arm            string
	CallsPerAnswer float64 // code_interpreter calls per answer
	WithCall       float64 // the share of answers that made at least one call
	// CorrectWithCall and CorrectWithout are the shares of correct answers
	// among those that made a call and those that made none (NaN: no such
	// answer).
	CorrectWithCall, CorrectWithout float64
}

// ToolUse compares the arms' tool calls in their diversity samples.
func ToolUse(runs []Run) ([]ToolResult, error) {
	var out []ToolResult
	for _, arm := range Arms(runs) {
		var n, calls, with, rightWith, rightWithout float64
		for _, r := range runs {
			if r.Arm != arm {
				continue
			}
			if len(r.Diversity) == 0 {
				return nil, fmt.Errorf("ablation: %s has no diversity samples", r.Dir)
			}
			for _, s := range r.Diversity {
				n++
				calls += float64(s.ToolCalls)
				right := 0.0
				if s.Correct() {
					right = 1
				}
				if s.ToolCalls > 0 {
					with++
					rightWith += right
				} else {
					rightWithout += right
				}
			}
		}
		out = append(out, ToolResult{Arm: arm, CallsPerAnswer: calls / n, WithCall: with / n,
			CorrectWithCall: rightWith / with, CorrectWithout: rightWithout / (n - with)})
	}
	return out, nil
}

// ToolMarkdown writes the tool-use results as a table.
func ToolMarkdown(results []ToolResult) string {
	if len(results) == 0 {
		return ""
	}
	s := "| arm | tool calls per answer | answers with a call | correct, with a call | correct, without |\n|---|---|---|---|---|\n"
	for _, r := range results {
		s += fmt.Sprintf("| %s | %.2f | %.3f | %.3f | %.3f |\n", r.Arm, r.CallsPerAnswer, r.WithCall, r.CorrectWithCall, r.CorrectWithout)
	}
	return s
}

// Trend is how one train.jsonl extra metric of an arm moved: its mean over
// the first and over the last window optimizer steps, pooled over the seeds.
type Trend struct {
	Arm, Key    string
	First, Last float64
}

// Trends returns, for each arm that logged key on every step, the key's
// Trend over window steps at each end.
func Trends(runs []Run, key string, window int) []Trend {
	var out []Trend
	for _, arm := range Arms(runs) {
		var first, last []float64
		logged := true
		for _, r := range runs {
			if r.Arm != arm {
				continue
			}
			for i, m := range r.Steps {
				v, ok := m.Extra[key]
				logged = logged && ok
				if i < window {
					first = append(first, v)
				}
				if i >= len(r.Steps)-window {
					last = append(last, v)
				}
			}
		}
		if logged && len(first) > 0 {
			out = append(out, Trend{Arm: arm, Key: key, First: mean(first), Last: mean(last)})
		}
	}
	return out
}

// TrendsMarkdown writes trends as a table, window the steps averaged.
func TrendsMarkdown(trends []Trend, window int) string {
	if len(trends) == 0 {
		return ""
	}
	s := fmt.Sprintf("| arm | metric | first %d steps | last %d steps |\n|---|---|---|---|\n", window, window)
	for _, t := range trends {
		s += fmt.Sprintf("| %s | `%s` | %.4f | %.4f |\n", t.Arm, t.Key, t.First, t.Last)
	}
	return s
}

// GainShare is how much of a teacher's gain in training a student arm got:
// the gains are final avg@k minus avg@k before training.
type GainShare struct {
	Arm          string
	Gain         float64   // the arm's gain, mean over its seeds
	TeacherGain  float64   // the teacher arm's gain
	Share        float64   // Gain / TeacherGain
	PerSeedShare []float64 // each seed's gain over the teacher's
}

// GainShares returns, for every arm of results but teacher, its share of the
// teacher arm's gain. It is an error when results hold no arm teacher or
// when the teacher gained nothing.
func GainShares(results []Result, teacher string) ([]GainShare, error) {
	i := slices.IndexFunc(results, func(r Result) bool { return r.Arm == teacher })
	if i < 0 {
		return nil, fmt.Errorf("ablation: no arm %q among the results", teacher)
	}
	tg := results[i].AvgAtK - results[i].Start
	if tg <= 0 {
		return nil, fmt.Errorf("ablation: the teacher %q gained %.4f in training; no share of it to compare", teacher, tg)
	}
	var out []GainShare
	for _, r := range results {
		if r.Arm == teacher {
			continue
		}
		g := GainShare{Arm: r.Arm, Gain: r.AvgAtK - r.Start, TeacherGain: tg}
		g.Share = g.Gain / tg
		for s, final := range r.PerSeed {
			g.PerSeedShare = append(g.PerSeedShare, (final-r.StartPerSeed[s])/tg)
		}
		out = append(out, g)
	}
	return out, nil
}

// GainSharesMarkdown writes the shares as a table.
func GainSharesMarkdown(shares []GainShare) string {
	if len(shares) == 0 {
		return ""
	}
	s := fmt.Sprintf("| student | gain in avg@k | share of the teacher's gain (%.3f) | per seed |\n|---|---|---|---|\n", shares[0].TeacherGain)
	for _, g := range shares {
		per := ""
		for i, v := range g.PerSeedShare {
			if i > 0 {
				per += ", "
			}
			per += fmt.Sprintf("%.2f", v)
		}
		s += fmt.Sprintf("| %s | %+.3f | %.2f | %s |\n", g.Arm, g.Gain, g.Share, per)
	}
	return s
}
