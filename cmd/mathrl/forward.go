package main

import (
	"context"
	"io"

	"github.com/spf13/cobra"

	"github.com/mathrl/mathrl/gomlx_trainer/qwen3"
	"github.com/mathrl/mathrl/internal/jsonl"
)

// forwardOptions are the flags of `mathrl forward`.
type forwardOptions struct {
	modelFlags
	jsonl.Files // --in, --out and the command's standard streams
	Batch       int
	Log         io.Writer
}

func newForwardCmd(runF func(context.Context, *forwardOptions) error) *cobra.Command {
	var opts forwardOptions
	cmd := &cobra.Command{
		Use:   "forward",
		Short: "Add the logits after the last token to JSON lines holding input_ids",
		Long: `Forward reads JSON lines with "input_ids" (token ids) and writes each line back with
"logits_last" added: the float32 logits after its last token. Other fields are kept as they
were, in order. An output file is written atomically.`,
		Example: `  echo '{"input_ids": [1, 2, 3]}' | mathrl forward --model ./models/tiny
  mathrl forward --model ./models/tiny --in prompts.jsonl --out logits.jsonl --backend cpu`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts.Stdin, opts.Stdout, opts.Log = cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr()
			if runF == nil {
				runF = runForward
			}
			return runF(cmd.Context(), &opts)
		},
	}
	addModelFlags(cmd, &opts.modelFlags)
	cmd.Flags().StringVar(&opts.In, "in", "-", "input JSONL file, - for stdin")
	cmd.Flags().StringVar(&opts.Out, "out", "-", "output JSONL file, - for stdout")
	cmd.Flags().IntVar(&opts.Batch, "batch", 8, "lines per batch")
	cmd.MarkFlagRequired("model")
	return cmd
}

func runForward(_ context.Context, opts *forwardOptions) error {
	b, m, err := opts.open(opts.Log)
	if err != nil {
		return err
	}
	return opts.Run(func(r io.Reader, name string, w io.Writer) error {
		return qwen3.ForwardJSONL(b, m, r, name, w, opts.Batch)
	})
}
