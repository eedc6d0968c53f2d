package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"

	"github.com/mathrl/mathrl/analysis/metrics"
	"github.com/mathrl/mathrl/internal/atomicfile"
	"github.com/spf13/cobra"
)

// budgetsOptions are the flags of `mathrl budgets`.
type budgetsOptions struct {
	Samples   string // eval-samples JSONL
	Budgets   []int  // budgets to derive, in tokens
	K         int    // k of avg@k and pass@k; 0 = the fewest samples any problem has
	JSON      bool   // print JSON instead of a table
	Resamples int    // bootstrap resamples
	Seed      uint64 // bootstrap seed
	Out       io.Writer
}

func newBudgetsCmd(runF func(*budgetsOptions) error) *cobra.Command {
	opts := budgetsOptions{Budgets: []int{4096, 8192, 16384}, Resamples: 2000, Seed: 1}
	cmd := &cobra.Command{
		Use:   "budgets --samples FILE",
		Short: "Derive avg@k, pass@k, length and truncation at smaller token budgets from one eval",
		Long: `budgets reads eval samples generated once at a large response budget and derives every
metric at each smaller budget: a response longer than the budget is cut there and scores 0.
With the same sampling seeds this equals generating at the smaller budget, except around tool
calls (see the analysis/metrics package documentation). Intervals are 95% bootstrap intervals
over problems. A file holding several runs (model, scorer, generation budget) gives one table each.`,
		Example: `  mathrl budgets --samples results/runs/eval-aime24/samples.jsonl
  mathrl budgets --samples samples.jsonl --budgets 4096,8192,16384 --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts.Out = cmd.OutOrStdout()
			if runF == nil {
				runF = runBudgets
			}
			return runF(&opts)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.Samples, "samples", "", "eval-samples JSONL file (required)")
	f.IntSliceVar(&opts.Budgets, "budgets", opts.Budgets, "response budgets in tokens, comma-separated")
	f.IntVar(&opts.K, "k", 0, "k of avg@k and pass@k (default: the fewest samples any problem has)")
	f.BoolVar(&opts.JSON, "json", false, "print a JSON array of summaries instead of a table")
	f.IntVar(&opts.Resamples, "resamples", opts.Resamples, "bootstrap resamples for the 95% intervals")
	f.Uint64Var(&opts.Seed, "seed", opts.Seed, "seed of the bootstrap")
	cmd.MarkFlagRequired("samples")
	cmd.AddCommand(newBudgetsSimulateCmd(nil), newBudgetsCheckCmd(nil))
	return cmd
}

func runBudgets(opts *budgetsOptions) error {
	samples, err := metrics.ReadSamplesFile(opts.Samples)
	if err != nil {
		return err
	}
	if len(samples) == 0 {
		return fmt.Errorf("budgets: %s holds no samples", opts.Samples)
	}
	tables, err := metrics.BudgetTables(samples, opts.Budgets, opts.K, opts.Resamples, rand.New(rand.NewPCG(opts.Seed, 0)))
	if err != nil {
		return fmt.Errorf("budgets: %w", err)
	}
	if !opts.JSON {
		return metrics.WriteBudgetTables(opts.Out, tables)
	}
	enc := json.NewEncoder(opts.Out)
	enc.SetIndent("", "  ")
	return enc.Encode(slices.Concat(tables...))
}

// simulateOptions are the flags of `mathrl budgets simulate`.
type simulateOptions struct {
	Out    string
	Seed   uint64
	Config metrics.SimConfig
}

func newBudgetsSimulateCmd(runF func(*simulateOptions) error) *cobra.Command {
	opts := simulateOptions{Seed: 1, Config: metrics.DefaultSimConfig()}
	cmd := &cobra.Command{
		Use:   "simulate --out FILE",
		Short: "Write SIMULATED eval samples (model \"simulated\") to try the budget analysis without a model",
		Long: `simulate draws eval samples from the random model documented in analysis/metrics
(metrics.SimConfig): per-problem solve probabilities and log-normal response lengths, wrong
answers running longer. Every sample names its model "simulated". The defaults were chosen so
that the budget table resembles the Qwen3-8B card's; the numbers say nothing about any model.`,
		Example: `  mathrl budgets simulate --out results/samples/simulated-aime-16k.jsonl
  mathrl budgets --samples results/samples/simulated-aime-16k.jsonl`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if runF == nil {
				runF = runBudgetsSimulate
			}
			return runF(&opts)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.Out, "out", "", "samples JSONL to write (required)")
	f.Uint64Var(&opts.Seed, "seed", opts.Seed, "random seed")
	f.IntVar(&opts.Config.Problems, "problems", opts.Config.Problems, "number of problems")
	f.IntVar(&opts.Config.Samples, "k", opts.Config.Samples, "samples per problem")
	f.IntVar(&opts.Config.Budget, "budget", opts.Config.Budget, "generation budget in tokens")
	cmd.MarkFlagRequired("out")
	return cmd
}

func runBudgetsSimulate(opts *simulateOptions) error {
	opts.Config.Seed = int64(opts.Seed)
	samples, err := metrics.Simulate(opts.Config, rand.New(rand.NewPCG(opts.Seed, 0)))
	if err != nil {
		return err
	}
	return atomicfile.Write(opts.Out, func(w io.Writer) error { return metrics.WriteSamples(w, samples...) })
}

// checkOptions are the flags of `mathrl budgets check`.
type checkOptions struct {
	Samples string   // eval samples generated at the large budget
	At      []string // eval samples generated again at smaller budgets, same seeds
	Out     io.Writer
}

func newBudgetsCheckCmd(runF func(*checkOptions) error) *cobra.Command {
	var opts checkOptions
	cmd := &cobra.Command{
		Use:   "check --samples LARGE --at FILE [--at FILE ...]",
		Short: "Compare budgets derived from one generation with generations at those budgets, sample by sample",
		Long: `check tests the budget derivation of ` + "`mathrl budgets`" + `. LARGE holds eval samples generated at a
large budget; each --at file holds the same problems generated again at one smaller budget with
the same seeds (mathrl eval --max-tokens b --seed ...). For each budget, check derives LARGE at
that budget and compares it with the generation, sample by sample: identical, the same finish
and score with another text, or another finish or score. It counts the pairs whose texts first
differ after a tool response, and the finish reasons derived -> generated.`,
		Example: `  mathrl budgets check --samples large.jsonl --at b64.jsonl --at b128.jsonl`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts.Out = cmd.OutOrStdout()
			if runF == nil {
				runF = runBudgetsCheck
			}
			return runF(&opts)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.Samples, "samples", "", "eval samples generated at the large budget (required)")
	f.StringArrayVar(&opts.At, "at", nil, "eval samples generated at one smaller budget with the same seeds (repeatable, required)")
	cmd.MarkFlagRequired("samples")
	cmd.MarkFlagRequired("at")
	return cmd
}

func runBudgetsCheck(opts *checkOptions) error {
	checks, err := metrics.CheckBudgetFiles(opts.Samples, opts.At)
	if err != nil {
		return err
	}
	_, err = io.WriteString(opts.Out, metrics.BudgetCheckMarkdown(checks))
	return err
}
