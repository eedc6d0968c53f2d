package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/mathrl/mathrl/analysis/rollouts"
	"github.com/mathrl/mathrl/internal/atomicfile"
)

// showRolloutOptions are the flags of `mathrl show rollout`.
type showRolloutOptions struct {
	Run    string // --run: the run folder
	Step   int    // --step
	Sample int    // --sample; -1: all
	Out    string // --out: the HTML file
	Stdout io.Writer
}

func newShowCmd(runF func(*showRolloutOptions) error) *cobra.Command {
	if runF == nil {
		runF = runShowRollout
	}
	cmd := &cobra.Command{
		Use:   "show",
		Short: "Render what a run recorded (training rollouts token by token) as HTML",
		Args:  cobra.NoArgs,
	}
	opts := showRolloutOptions{Sample: -1}
	rollout := &cobra.Command{
		Use:   "rollout --run DIR --step N --out FILE.html",
		Short: "A recorded training rollout token by token: loss mask, advantage and log-prob of every token",
		Long: `rollout renders the training rollout recorded at optimizer step N of a run
(DIR/rollouts/step-NNNNNN.jsonl, written every save_rollouts_every rollouts) as one
self-contained HTML page: per sample the problem, label, reward, the scorer's verdict
and finish reason, and the response token by token, each token coloured by its
sequence's advantage (or, with the page's toggle, by its log-prob), with tokens of
loss mask 0 (tool responses, template glue) hatched grey. Hover a token for its id,
mask, log-prob and advantage. A step that was not recorded is an error that lists
the recorded ones.`,
		Example: `  mathrl show rollout --run results/runs/demo --step 0 --out /tmp/step0.html
  mathrl show rollout --run results/runs/demo --step 29 --sample 3 --out /tmp/sample.html`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			opts.Stdout = c.OutOrStdout()
			return runF(&opts)
		},
	}
	rollout.Flags().StringVar(&opts.Run, "run", "", "run folder (required)")
	rollout.Flags().IntVar(&opts.Step, "step", 0, "optimizer steps of the policy that sampled the rollout: the N of rollouts/step-NNNNNN.jsonl (required)")
	rollout.Flags().IntVar(&opts.Sample, "sample", -1, "only this sample, by its place in the step's file from 0 (default: all)")
	rollout.Flags().StringVar(&opts.Out, "out", "", "HTML file to write (required)")
	for _, f := range []string{"run", "step", "out"} {
		rollout.MarkFlagRequired(f)
	}
	cmd.AddCommand(rollout)
	return cmd
}

// runShowRollout writes the page atomically.
func runShowRollout(o *showRolloutOptions) error {
	err := atomicfile.Write(o.Out, func(w io.Writer) error { return rollouts.WritePage(w, o.Run, o.Step, o.Sample) })
	if err != nil {
		return err
	}
	fmt.Fprintf(o.Stdout, "wrote %s\n", o.Out)
	return nil
}
