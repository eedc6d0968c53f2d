package metrics

import (
	"fmt"
	"math/rand/v2"
)

// AtBudget returns the samples as they would have been generated with a
// response budget of b tokens: a sample longer than b is cut to b tokens, its
// finish becomes "length" and its score 0 (its text is kept uncut: the file has
// no token offsets, so only the metric fields of a cut sample are meaningful).
// A sample of at most b tokens is unchanged apart from its Budget.
//
// b may exceed a sample's own budget only when that sample did not run out of
// budget (finish stop or tool-limit): a sample cut at its budget says nothing
// about what it would have done with more tokens, and that is an error.
// See the package documentation for why this equals generating at b.
func AtBudget(samples []Sample, b int) ([]Sample, error) {
	if b < 1 {
		return nil, fmt.Errorf("metrics: budget must be positive, got %d", b)
	}
	out := make([]Sample, len(samples))
	for i, s := range samples {
		if b > s.Budget && s.Finish == FinishLength {
			return nil, fmt.Errorf("metrics: problem %q sample %d was cut at its budget %d: cannot derive budget %d",
				s.ProblemID, s.SampleIndex, s.Budget, b)
		}
		if s.ResponseTokens > b {
			s.ResponseTokens = b
			s.Finish = FinishLength
			s.Score = 0
			s.Error = ""
		}
		s.Budget = b
		out[i] = s
	}
	return out, nil
}

// BudgetTable re-derives the metrics of one run's samples at each budget
// (see AtBudget), at k, with bootstrap intervals of resamples draws from rng.
// It returns one Summary per budget, in the order given.
func BudgetTable(samples []Sample, budgets []int, k, resamples int, rng *rand.Rand) ([]Summary, error) {
	if len(budgets) == 0 {
		return nil, fmt.Errorf("metrics: no budgets")
	}
	var rows []Summary
	for _, b := range budgets {
		cut, err := AtBudget(samples, b)
		if err != nil {
			return nil, err
		}
		sum, err := Summarize(cut, k)
		if err != nil {
			return nil, fmt.Errorf("metrics: budget %d: %w", b, err)
		}
		sum.Bootstrap(resamples, rng)
		rows = append(rows, sum)
	}
	return rows, nil
}

// BudgetTables splits samples into runs (see SplitRuns) and returns the
// BudgetTable of each run, in SplitRuns' order. k 0 takes, for each run, the
// fewest samples any of its problems has (MinSamples). The runs draw their
// bootstrap resamples from rng one after the other.
func BudgetTables(samples []Sample, budgets []int, k, resamples int, rng *rand.Rand) ([][]Summary, error) {
	if len(samples) == 0 {
		return nil, fmt.Errorf("metrics: no samples")
	}
	keys, runs := SplitRuns(samples)
	tables := make([][]Summary, 0, len(keys))
	for _, key := range keys {
		runK := k
		if runK == 0 {
			runK = MinSamples(runs[key])
		}
		rows, err := BudgetTable(runs[key], budgets, runK, resamples, rng)
		if err != nil {
			return nil, fmt.Errorf("metrics: model %s, scorer %s, budget %d: %w", key.Model, key.Scorer, key.Budget, err)
		}
		tables = append(tables, rows)
	}
	return tables, nil
}

// BudgetTableFile reads one run's eval samples from path and derives its
// budget table (BudgetTable) at the fewest samples any problem has, with
// bootstrap intervals of resamples draws from a generator seeded with seed:
// the same file gives the same table every time.
func BudgetTableFile(path string, budgets []int, resamples int, seed uint64) ([]Summary, error) {
	samples, err := ReadSamplesFile(path)
	if err != nil {
		return nil, err
	}
	return BudgetTable(samples, budgets, MinSamples(samples), resamples, rand.New(rand.NewPCG(seed, 0)))
}
