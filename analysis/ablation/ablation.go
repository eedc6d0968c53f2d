// Package ablation reads a training ablation, run folders named ARM-seedN
// (as scripts/ablation.sh and scripts/objectives.sh write them), and compares
// its arms: evaluation curves over the seeds, final values with bootstrap
// intervals, and from the final policies' many answers per problem the
// diversity of their solutions and their tool calls.
package ablation

import (
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"

	"github.com/mathrl/mathrl/analysis/metrics"
	"github.com/mathrl/mathrl/analysis/runs"
)

// Run is one run folder of an ablation.
type Run struct {
	Arm   string
	Seed  int
	Dir   string
	Evals []metrics.EvalPoint   // eval.jsonl, in step order
	Steps []metrics.StepMetrics // train.jsonl
	Final []metrics.Sample      // final_samples.jsonl: the last evaluation's samples
	// Diversity is diversity_samples.jsonl, the final policy's many answers
	// to each evaluation problem, when the run folder holds it (nil: not).
	Diversity []metrics.Sample
}

var runName = regexp.MustCompile(`^(.+)-seed(\d+)$`)

// Load reads every folder ARM-seedN under dir, in name order. A folder must
// hold eval.jsonl, train.jsonl and final_samples.jsonl, and may hold
// diversity_samples.jsonl; it is an error when none is found.
func Load(dir string) ([]Run, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("ablation: %w", err)
	}
	var found []Run
	for _, e := range entries {
		m := runName.FindStringSubmatch(e.Name())
		if !e.IsDir() || m == nil {
			continue
		}
		seed, _ := strconv.Atoi(m[2])
		r := Run{Arm: m[1], Seed: seed, Dir: filepath.Join(dir, e.Name())}
		if r.Evals, err = readFile(filepath.Join(r.Dir, runs.EvalsFile), metrics.ReadEvalPoints); err != nil {
			return nil, err
		}
		if r.Steps, err = readFile(filepath.Join(r.Dir, runs.StepsFile), metrics.ReadStepMetrics); err != nil {
			return nil, err
		}
		if r.Final, err = readFile(filepath.Join(r.Dir, runs.FinalSamplesFile), metrics.ReadSamples); err != nil {
			return nil, err
		}
		path := filepath.Join(r.Dir, runs.DiversitySamplesFile)
		if _, statErr := os.Stat(path); statErr == nil {
			if r.Diversity, err = readFile(path, metrics.ReadSamples); err != nil {
				return nil, err
			}
		}
		found = append(found, r)
	}
	if len(found) == 0 {
		return nil, fmt.Errorf("ablation: no run folder ARM-seedN in %s", dir)
	}
	return found, nil
}

func readFile[T any](path string, read func(r io.Reader, name string) ([]T, error)) ([]T, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("ablation: %w", err)
	}
	defer f.Close()
	return read(f, path)
}

// Arms returns the arms of runs in the order they first appear.
func Arms(runs []Run) []string {
	var arms []string
	for _, r := range runs {
		if !slices.Contains(arms, r.Arm) {
			arms = append(arms, r.Arm)
		}
	}
	return arms
}

// Result is one arm's final evaluation over its seeds.
type Result struct {
	Arm          string
	Seeds        []int
	K            int
	Start        float64          // avg@k before training, mean over seeds
	StartPerSeed []float64        // avg@k before training of each seed
	PerSeed      []float64        // final avg@k of each seed
	AvgAtK       float64          // final avg@k, mean over seeds
	AvgAtKCI     metrics.Interval // 95% bootstrap interval of AvgAtK over the (seed, problem) pairs
	PassAtK      float64          // final pass@k, mean over seeds
	PassAtKCI    metrics.Interval
	ProblemsSeed int // problems per seed in the final evaluation
}

// Summarize compares the arms: for each, the final evaluation's avg@k and
// pass@k, each the mean over its seeds, with a 95% percentile bootstrap
// interval that resamples the (seed, problem) pairs, resamples times from a
// generator seeded with seed. The interval covers the evaluation set's noise
// around these seeds, not what other seeds would give: PerSeed shows that
// spread. Every run must have the same k.
func Summarize(runs []Run, resamples int, seed uint64) ([]Result, error) {
	var out []Result
	rng := rand.New(rand.NewPCG(seed, 0))
	for _, arm := range Arms(runs) {
		res := Result{Arm: arm}
		var avg, pass []float64
		for _, r := range runs {
			if r.Arm != arm {
				continue
			}
			if len(r.Evals) == 0 {
				return nil, fmt.Errorf("ablation: %s has no evaluation", r.Dir)
			}
			k := r.Evals[len(r.Evals)-1].K
			sum, err := metrics.Summarize(r.Final, k)
			if err != nil {
				return nil, fmt.Errorf("ablation: %s: %w", r.Dir, err)
			}
			if res.K != 0 && res.K != k {
				return nil, fmt.Errorf("ablation: %s: k %d, other runs of %s %d", r.Dir, k, arm, res.K)
			}
			res.K, res.ProblemsSeed = k, len(sum.Problems)
			res.Seeds = append(res.Seeds, r.Seed)
			res.Start += r.Evals[0].AvgAtK
			res.StartPerSeed = append(res.StartPerSeed, r.Evals[0].AvgAtK)
			res.PerSeed = append(res.PerSeed, sum.AvgAtK)
			for _, p := range sum.Problems {
				avg = append(avg, p.AvgAtK)
				pass = append(pass, p.PassAtK)
			}
		}
		n := float64(len(res.Seeds))
		res.Start /= n
		res.AvgAtK, res.PassAtK = mean(avg), mean(pass)
		res.AvgAtKCI = metrics.BootstrapMean(avg, resamples, 0.95, rng)
		res.PassAtKCI = metrics.BootstrapMean(pass, resamples, 0.95, rng)
		out = append(out, res)
	}
	return out, nil
}

func mean(x []float64) float64 {
	if len(x) == 0 {
		return math.NaN()
	}
	var s float64
	for _, v := range x {
		s += v
	}
	return s / float64(len(x))
}

// Curve is one arm's evaluation avg@k against the optimizer step: the mean
// over its seeds and the lowest and highest seed.
type Curve struct {
	Arm          string
	Steps        []int
	Mean, Lo, Hi []float64
	Seeds        int
	K            int
}

// Curves returns each arm's evaluation curve. The runs of an arm must have
// evaluated at the same steps.
func Curves(runs []Run) ([]Curve, error) {
	var out []Curve
	for _, arm := range Arms(runs) {
		c := Curve{Arm: arm}
		for _, r := range runs {
			if r.Arm != arm {
				continue
			}
			if c.Seeds == 0 {
				for _, e := range r.Evals {
					c.Steps = append(c.Steps, e.Step)
					c.Mean = append(c.Mean, 0)
					c.Lo = append(c.Lo, math.Inf(1))
					c.Hi = append(c.Hi, math.Inf(-1))
				}
				c.K = r.Evals[len(r.Evals)-1].K
			}
			if len(r.Evals) != len(c.Steps) {
				return nil, fmt.Errorf("ablation: %s evaluated %d times, other runs of %s %d", r.Dir, len(r.Evals), arm, len(c.Steps))
			}
			for i, e := range r.Evals {
				if e.Step != c.Steps[i] {
					return nil, fmt.Errorf("ablation: %s evaluated at step %d, other runs of %s at %d", r.Dir, e.Step, arm, c.Steps[i])
				}
				c.Mean[i] += e.AvgAtK
				c.Lo[i], c.Hi[i] = math.Min(c.Lo[i], e.AvgAtK), math.Max(c.Hi[i], e.AvgAtK)
			}
			c.Seeds++
		}
		for i := range c.Mean {
			c.Mean[i] /= float64(c.Seeds)
		}
		out = append(out, c)
	}
	return out, nil
}

// Markdown writes the results as a table: arm, seeds, avg@k before and after
// training with its interval, each seed's final avg@k, pass@k with its
// interval.
func Markdown(results []Result) string {
	if len(results) == 0 {
		return ""
	}
	k := results[0].K
	s := fmt.Sprintf("| arm | seeds | avg@%d before | avg@%d after (95%% CI) | per seed | pass@%d after (95%% CI) |\n|---|---|---|---|---|---|\n", k, k, k)
	for _, r := range results {
		per := ""
		for i, v := range r.PerSeed {
			if i > 0 {
				per += ", "
			}
			per += fmt.Sprintf("%.3f", v)
		}
		s += fmt.Sprintf("| %s | %d | %.3f | %.3f (%.3f–%.3f) | %s | %.3f (%.3f–%.3f) |\n", r.Arm, len(r.Seeds), r.Start,
			r.AvgAtK, r.AvgAtKCI.Lo, r.AvgAtKCI.Hi, per, r.PassAtK, r.PassAtKCI.Lo, r.PassAtKCI.Hi)
	}
	return s
}

// DrawsMarkdown tables, for each arm that logged dynamic sampling's draws,
// the prompt groups drawn and kept per rollout, averaged over its rollouts
// and seeds: what filling the batch cost.
func DrawsMarkdown(runs []Run) string {
	s := ""
	for _, arm := range Arms(runs) {
		var drawn, kept, n float64
		for _, r := range runs {
			if r.Arm != arm {
				continue
			}
			for _, m := range r.Steps {
				if d, ok := m.Extra["groups_drawn"]; ok {
					drawn, kept, n = drawn+d, kept+m.Extra["groups_kept"], n+1
				}
			}
		}
		if n > 0 {
			s += fmt.Sprintf("| %s | %.2f | %.2f |\n", arm, drawn/n, kept/n)
		}
	}
	if s == "" {
		return ""
	}
	return "| arm | prompt groups drawn per rollout | groups kept |\n|---|---|---|\n" + s
}
