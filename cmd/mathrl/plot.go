package main

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/mathrl/mathrl/analysis/plots"
	"github.com/spf13/cobra"
)

// plotOptions are the flags of the `mathrl plot` subcommands.
type plotOptions struct {
	plots.Inputs
	Stdout io.Writer
}

func newPlotCmd(runF func(what string, opts *plotOptions) error) *cobra.Command {
	if runF == nil {
		runF = runPlot
	}
	cmd := &cobra.Command{
		Use:   "plot",
		Short: "Draw figures (PNG and SVG) into results/figures",
		Example: `  mathrl plot cards
  mathrl plot budgets --samples results/budgets/simulated-aime-16k.jsonl
  mathrl plot scorers
  mathrl plot passk --samples results/budgets/simulated-aime-16k.jsonl
  mathrl plot train --metrics results/runs/demo/train.jsonl`,
		Args: cobra.NoArgs,
	}
	sub := func(use, short, example string, flags func(*cobra.Command, *plotOptions)) {
		opts := plotOptions{Inputs: plots.Inputs{Out: filepath.Join("results", "figures"),
			Cards: filepath.Join("results", "model_cards"), Budgets: []int{4096, 8192, 16384}}}
		c := &cobra.Command{Use: use, Short: short, Example: example, Args: cobra.NoArgs,
			RunE: func(c *cobra.Command, _ []string) error {
				opts.Stdout = c.OutOrStdout()
				return runF(strings.Fields(use)[0], &opts)
			}}
		c.Flags().StringVar(&opts.Out, "out", opts.Out, "folder for the figures")
		flags(c, &opts)
		cmd.AddCommand(c)
	}
	cardsFlag := func(c *cobra.Command, o *plotOptions) {
		c.Flags().StringVar(&o.Cards, "cards", o.Cards, "folder of the model-card CSV files")
	}
	sub("cards", "Benchmark scores of the model cards as bars (card_benchmarks)",
		"  mathrl plot cards --out /tmp/figures", cardsFlag)
	sub("budgets --samples FILE", "avg@k and truncation versus budget, measured next to the card (budgets_accuracy, budgets_truncation)",
		"  mathrl plot budgets --samples results/budgets/simulated-aime-16k.jsonl --budgets 4096,8192,16384",
		func(c *cobra.Command, o *plotOptions) {
			cardsFlag(c, o)
			c.Flags().StringVar(&o.Card, "card", "math-grpo-qwen3-8b", "card whose budget table is drawn too (empty: none)")
			c.Flags().StringSliceVar(&o.Samples, "samples", nil, "eval-samples JSONL generated at the largest budget (required)")
			c.Flags().IntSliceVar(&o.Budgets, "budgets", o.Budgets, "budgets in tokens")
			c.Flags().IntVar(&o.K, "k", 0, "k of avg@k (default: the fewest samples any problem has)")
			c.MarkFlagRequired("samples")
		})
	sub("scorers", "Scorer TP/FP bars from `mathrl scorers validate`, next to the card (scorers_SET, scorers_templates_SET)",
		"  mathrl plot scorers --set math500",
		func(c *cobra.Command, o *plotOptions) {
			cardsFlag(c, o)
			c.Flags().StringVar(&o.Card, "card", "math-grpo-qwen3-8b", "card whose scorer table is drawn too (empty: none)")
			c.Flags().StringVar(&o.Validation, "validation", filepath.Join("results", "scorer_validation", "validation.csv"), "CSV written by `mathrl scorers validate`")
			c.Flags().StringVar(&o.Set, "set", "sample300", "label set")
			c.Flags().StringVar(&o.Variant, "variant", "boxed+answer_line", "response template of the TP/FP figure")
		})
	sub("passk --samples FILE...", "pass@k curves, one per run in the samples files, or per run and budget (passk)",
		"  mathrl plot passk --samples a.jsonl,b.jsonl\n  mathrl plot passk --samples s.jsonl --budgets 4096,16384 --name passk_budgets",
		func(c *cobra.Command, o *plotOptions) {
			c.Flags().StringSliceVar(&o.Samples, "samples", nil, "eval-samples JSONL files (required)")
			o.Budgets = nil
			c.Flags().IntSliceVar(&o.Budgets, "budgets", nil, "also derive each run at these budgets in tokens (default: as generated)")
			c.Flags().StringVar(&o.Name, "name", "passk", "figure file name, without extension")
			c.MarkFlagRequired("samples")
		})
	sub("train --metrics FILE", "Training curves from a run's metrics log (training_NAME)",
		"  mathrl plot train --metrics results/runs/demo/train.jsonl --name demo",
		func(c *cobra.Command, o *plotOptions) {
			c.Flags().StringVar(&o.Metrics, "metrics", "", "trainer metrics JSONL, e.g. runs/NAME/train.jsonl (required)")
			c.Flags().StringVar(&o.Name, "name", "", "run name (default: the metrics file's folder name)")
			c.MarkFlagRequired("metrics")
		})
	return cmd
}

func runPlot(what string, o *plotOptions) error {
	saved, err := plots.WriteFigures(what, o.Inputs)
	if err != nil {
		return err
	}
	for _, base := range saved {
		fmt.Fprintf(o.Stdout, "wrote %s.png, %s.svg\n", base, base)
	}
	return nil
}
