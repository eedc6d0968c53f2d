package metrics

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
)

// ProblemStats are the metrics of one problem's samples.
type ProblemStats struct {
	ProblemID      string  `json:"problem_id"`
	Samples        int     `json:"samples"`         // n
	Correct        int     `json:"correct"`         // c
	Errors         int     `json:"errors"`          // samples the scorer could not score
	Truncated      int     `json:"truncated"`       // samples with finish "length"
	AvgAtK         float64 `json:"avg_at_k"`        // c/n: the unbiased estimate of avg@k for any k <= n
	PassAtK        float64 `json:"pass_at_k"`       // PassAtK(n, c, k)
	MeanLength     float64 `json:"mean_length"`     // mean response tokens
	TruncationRate float64 `json:"truncation_rate"` // Truncated/n
	ToolCallsMean  float64 `json:"tool_calls_mean"` // mean tool calls per sample
}

// Summary aggregates one run's samples (one model, scorer and budget).
// Every aggregate is the mean over problems of the per-problem value, so each
// problem weighs the same whatever its number of samples.
type Summary struct {
	Model    string         `json:"model"`
	Scorer   string         `json:"scorer"`
	Budget   int            `json:"budget"`
	K        int            `json:"k"`
	Problems []ProblemStats `json:"problems"` // sorted by problem id

	AvgAtK         float64 `json:"avg_at_k"`
	PassAtK        float64 `json:"pass_at_k"`
	MeanLength     float64 `json:"mean_length"`
	TruncationRate float64 `json:"truncation_rate"`
	ToolCallsMean  float64 `json:"tool_calls_mean"`
	Errors         int     `json:"errors"` // total unscorable samples

	// Finished counts the samples not cut at the budget, and FinishedAccuracy
	// is the fraction of them that are correct, pooled over problems (0 when
	// Finished is 0): how well the model solves when it gets to finish.
	Finished         int     `json:"finished"`
	FinishedAccuracy float64 `json:"finished_accuracy"`

	// 95% bootstrap intervals over problems (set by Bootstrap; zero until then).
	AvgAtKCI         Interval `json:"avg_at_k_ci"`
	PassAtKCI        Interval `json:"pass_at_k_ci"`
	MeanLengthCI     Interval `json:"mean_length_ci"`
	TruncationRateCI Interval `json:"truncation_rate_ci"`
}

// Summarize computes per-problem and aggregated metrics at k from one run's
// samples. It is an error when the samples mix models, scorers or budgets
// (see SplitRuns), when there are none, or when a problem has fewer than k
// samples.
func Summarize(samples []Sample, k int) (Summary, error) {
	if len(samples) == 0 {
		return Summary{}, fmt.Errorf("metrics: no samples")
	}
	if k < 1 {
		return Summary{}, fmt.Errorf("metrics: k must be at least 1, got %d", k)
	}
	first := samples[0]
	byProblem := map[string][]Sample{}
	for _, s := range samples {
		if s.Model != first.Model || s.Scorer != first.Scorer || s.Budget != first.Budget {
			return Summary{}, fmt.Errorf("metrics: samples mix runs (model %q scorer %q budget %d, and model %q scorer %q budget %d): split them first",
				first.Model, first.Scorer, first.Budget, s.Model, s.Scorer, s.Budget)
		}
		byProblem[s.ProblemID] = append(byProblem[s.ProblemID], s)
	}
	ids := make([]string, 0, len(byProblem))
	for id := range byProblem {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	sum := Summary{Model: first.Model, Scorer: first.Scorer, Budget: first.Budget, K: k}
	finishedCorrect := 0
	for _, id := range ids {
		ps := byProblem[id]
		if len(ps) < k {
			return Summary{}, fmt.Errorf("metrics: problem %q has %d samples, fewer than k=%d", id, len(ps), k)
		}
		p := ProblemStats{ProblemID: id, Samples: len(ps)}
		tokens, tools := 0, 0
		for _, s := range ps {
			if s.Correct() {
				p.Correct++
			}
			if s.Error != "" {
				p.Errors++
			}
			if s.Finish == FinishLength {
				p.Truncated++
			} else {
				sum.Finished++
				if s.Correct() {
					finishedCorrect++
				}
			}
			tokens += s.ResponseTokens
			tools += s.ToolCalls
		}
		n := float64(p.Samples)
		p.AvgAtK = float64(p.Correct) / n
		p.PassAtK = PassAtK(p.Samples, p.Correct, k)
		p.MeanLength = float64(tokens) / n
		p.TruncationRate = float64(p.Truncated) / n
		p.ToolCallsMean = float64(tools) / n
		sum.Problems = append(sum.Problems, p)
		sum.Errors += p.Errors
	}
	if sum.Finished > 0 {
		sum.FinishedAccuracy = float64(finishedCorrect) / float64(sum.Finished)
	}
	sum.AvgAtK = mean(sum.Problems, func(p ProblemStats) float64 { return p.AvgAtK })
	sum.PassAtK = mean(sum.Problems, func(p ProblemStats) float64 { return p.PassAtK })
	sum.MeanLength = mean(sum.Problems, func(p ProblemStats) float64 { return p.MeanLength })
	sum.TruncationRate = mean(sum.Problems, func(p ProblemStats) float64 { return p.TruncationRate })
	sum.ToolCallsMean = mean(sum.Problems, func(p ProblemStats) float64 { return p.ToolCallsMean })
	return sum, nil
}

// Bootstrap sets the summary's 95% confidence intervals by resampling its
// problems with replacement resamples times (percentile method), drawing from rng.
func (s *Summary) Bootstrap(resamples int, rng *rand.Rand) {
	field := func(f func(ProblemStats) float64) []float64 {
		v := make([]float64, len(s.Problems))
		for i, p := range s.Problems {
			v[i] = f(p)
		}
		return v
	}
	s.AvgAtKCI = BootstrapMean(field(func(p ProblemStats) float64 { return p.AvgAtK }), resamples, 0.95, rng)
	s.PassAtKCI = BootstrapMean(field(func(p ProblemStats) float64 { return p.PassAtK }), resamples, 0.95, rng)
	s.MeanLengthCI = BootstrapMean(field(func(p ProblemStats) float64 { return p.MeanLength }), resamples, 0.95, rng)
	s.TruncationRateCI = BootstrapMean(field(func(p ProblemStats) float64 { return p.TruncationRate }), resamples, 0.95, rng)
}

// PassAtKCurve returns the mean over problems of PassAtK(n, c, k) for
// k = 1..kmax, where kmax is the smallest number of samples of any problem.
func (s Summary) PassAtKCurve() (ks []int, pass []float64) {
	kmax := 0
	for i, p := range s.Problems {
		if i == 0 || p.Samples < kmax {
			kmax = p.Samples
		}
	}
	for k := 1; k <= kmax; k++ {
		ks = append(ks, k)
		pass = append(pass, mean(s.Problems, func(p ProblemStats) float64 { return PassAtK(p.Samples, p.Correct, k) }))
	}
	return ks, pass
}

// RunKey names one run within a samples file.
type RunKey struct {
	Model  string `json:"model"`
	Scorer string `json:"scorer"`
	Budget int    `json:"budget"`
}

// SplitRuns groups samples by model, scorer and budget, keeping file order
// within each group; keys come back sorted.
func SplitRuns(samples []Sample) ([]RunKey, map[RunKey][]Sample) {
	runs := map[RunKey][]Sample{}
	var keys []RunKey
	for _, s := range samples {
		k := RunKey{s.Model, s.Scorer, s.Budget}
		if _, ok := runs[k]; !ok {
			keys = append(keys, k)
		}
		runs[k] = append(runs[k], s)
	}
	slices.SortFunc(keys, func(a, b RunKey) int {
		switch {
		case a.Model != b.Model:
			return compareStrings(a.Model, b.Model)
		case a.Scorer != b.Scorer:
			return compareStrings(a.Scorer, b.Scorer)
		}
		return a.Budget - b.Budget
	})
	return keys, runs
}

// MinSamples returns the smallest number of samples any problem has (0 for none).
func MinSamples(samples []Sample) int {
	count := map[string]int{}
	for _, s := range samples {
		count[s.ProblemID]++
	}
	m := 0
	for _, c := range count {
		if m == 0 || c < m {
			m = c
		}
	}
	return m
}

func compareStrings(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func mean[T any](xs []T, f func(T) float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := 0.0
	for _, x := range xs {
		s += f(x)
	}
	return s / float64(len(xs))
}
