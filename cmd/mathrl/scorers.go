package main

import (
	"context"
	"io"

	"github.com/mathrl/mathrl/analysis/scorer/validation"
	"github.com/mathrl/mathrl/data"
	"github.com/spf13/cobra"
)

// newScorersCmd groups the commands about the scorers themselves.
func newScorersCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:     "scorers",
		Short:   "Check slime's math scorers on real dataset labels",
		Example: `  mathrl scorers validate`,
		Args:    cobra.NoArgs,
	}
	cmd.AddCommand(newScorersValidateCmd(nil))
	return cmd
}

// scorersValidateOptions are the flags of `mathrl scorers validate`.
type scorersValidateOptions struct {
	Data    string
	Out     string
	JSON    bool
	NoPull  bool
	Workers int
	Stdout  io.Writer
	Stderr  io.Writer
}

func newScorersValidateCmd(runF func(context.Context, *scorersValidateOptions) error) *cobra.Command {
	opts := scorersValidateOptions{Data: data.DefaultDir(), Out: "results/scorer_validation"}
	cmd := &cobra.Command{
		Use:   "validate",
		Short: "Score correct-by-definition and wrong-by-definition responses for every label",
		Long: `Validate builds, for every label of every data set in the data folder, responses that state
exactly that label (TP constructions) and responses that state the next non-equivalent label of
the same set (FP constructions), in five templates (boxed, answer_line, boxed+answer_line,
think+boxed, think+boxed+answer_line), and counts how math, dapo, deepscaler and verify score them.

It prints a table (or, with --json, one JSON array of {"set","scorer","variant","labels","tp",
"fp","errors"}) and writes validation.csv and validation.md into --out. Missing data sets are
pulled first (see mathrl data pull) unless --no-pull is given.`,
		Example: `  mathrl scorers validate
  mathrl scorers validate --data ./data-cache --json > counts.json
  mathrl scorers validate --no-pull --out /tmp/validation`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts.Stdout, opts.Stderr = cmd.OutOrStdout(), cmd.ErrOrStderr()
			if runF == nil {
				runF = runScorersValidate
			}
			return runF(cmd.Context(), &opts)
		},
	}
	cmd.Flags().StringVar(&opts.Data, "data", opts.Data, "data folder (default $MATHRL_DATA_DIR, else the user cache folder)")
	cmd.Flags().StringVar(&opts.Out, "out", opts.Out, "folder for validation.csv and validation.md")
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print the counts as one JSON array instead of a table")
	cmd.Flags().BoolVar(&opts.NoPull, "no-pull", false, "validate only the sets already in --data; never fetch")
	cmd.Flags().IntVar(&opts.Workers, "workers", 0, "scoring goroutines (default: one per core)")
	return cmd
}

func runScorersValidate(ctx context.Context, opts *scorersValidateOptions) error {
	counts, err := validation.Run(ctx, validation.Options{Dir: opts.Data, Pull: !opts.NoPull, Workers: opts.Workers, Log: opts.Stderr})
	if err != nil {
		return err
	}
	if err := validation.WriteResults(opts.Out, counts); err != nil {
		return err
	}
	if opts.JSON {
		return validation.WriteJSON(opts.Stdout, counts)
	}
	return validation.WriteTable(opts.Stdout, counts)
}
