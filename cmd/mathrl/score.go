package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/mathrl/mathrl/analysis/scorer"
	"github.com/mathrl/mathrl/internal/jsonl"
)

// scoreOptions are the flags of `mathrl score`.
type scoreOptions struct {
	Scorer      string
	jsonl.Files // --in, --out and the command's standard streams
	Workers     int
	Stderr      io.Writer
}

func newScoreCmd(runF func(context.Context, *scoreOptions) error) *cobra.Command {
	opts := scoreOptions{Files: jsonl.Files{In: "-", Out: "-"}}
	cmd := &cobra.Command{
		Use:   "score",
		Short: "Score JSONL responses against labels with slime's math scorers, mathrl's verify or the retool reward",
		Long: `Score reads JSON Lines, one object per line with a string "response" and a "label"
(a string, or a number), and writes every object back in the same order with all its fields
plus "score": 0 or 1 for math, deepscaler and verify (mathrl's own verifier, see
analysis/verify), 1 or -1 for dapo; retool (slime's examples/retool
reward) gives 1 or at most -0.6, with a bonus for tool calls read from an integer "tool_calls" field
(as eval-samples files have it), else counted as the response's <tool_call> blocks. Where the
scorer cannot score a line (dapo on a label that is not a number, verify past its per-call
deadline) the line gets an "error" string
instead of "score".

Lines are scored on every core; an output file is written atomically, so a failed run leaves no
half-written file. A malformed line stops the run with an error naming the file, line and field.

Scorers: ` + strings.Join(scorer.Rewards(), ", ") + ` (each may be prefixed by boxed_ to score only the
content of the response's last \boxed{...}).`,
		Example: `  mathrl score --scorer math --in samples.jsonl --out scored.jsonl
  echo '{"response":"<think>..</think> so \\boxed{42}","label":"42"}' | mathrl score --scorer deepscaler`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := scorer.Check(opts.Scorer); err != nil {
				return err
			}
			opts.Stdin, opts.Stdout, opts.Stderr = cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr()
			if runF == nil {
				runF = runScore
			}
			return runF(cmd.Context(), &opts)
		},
	}
	cmd.Flags().StringVar(&opts.Scorer, "scorer", "", "scorer: "+strings.Join(scorer.Rewards(), ", ")+" (required)")
	cmd.Flags().StringVar(&opts.In, "in", opts.In, "input JSONL file, - for standard input")
	cmd.Flags().StringVar(&opts.Out, "out", opts.Out, "output JSONL file, - for standard output")
	cmd.Flags().IntVar(&opts.Workers, "workers", 0, "scoring goroutines (default: one per core)")
	cmd.MarkFlagRequired("scorer")
	return cmd
}

func runScore(ctx context.Context, opts *scoreOptions) error {
	stats, err := scorer.ScoreFiles(ctx, opts.Files, scorer.StreamOptions{Scorer: opts.Scorer, Workers: opts.Workers})
	if err != nil {
		return err
	}
	fmt.Fprintf(opts.Stderr, "scored %d lines with %s: %d positive, %d errors\n", stats.Lines, opts.Scorer, stats.Positive, stats.Errors)
	return nil
}
