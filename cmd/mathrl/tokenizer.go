package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/mathrl/mathrl/gomlx_trainer/tokenizer"
)

func newTokenizerCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:     "tokenizer",
		Short:   "Create tokenizer files",
		Example: `  mathrl tokenizer new --bytes --out models/tiny/tokenizer.json`,
		Args:    cobra.NoArgs,
	}
	cmd.AddCommand(newTokenizerNewCmd(nil))
	return cmd
}

// tokenizerNewOptions are the flags of `mathrl tokenizer new`.
type tokenizerNewOptions struct {
	Bytes bool
	Out   string
	Log   io.Writer
}

func newTokenizerNewCmd(runF func(context.Context, *tokenizerNewOptions) error) *cobra.Command {
	var opts tokenizerNewOptions
	cmd := &cobra.Command{
		Use:   "new",
		Short: "Write a new tokenizer.json",
		Long: `New writes a Hugging Face tokenizer.json. With --bytes it is the byte vocabulary for tiny
models trained on CPU: the 256 bytes (ids 0-255) and Qwen3's 26 added tokens (<|endoftext|> = 256,
<|im_start|> = 257, <|im_end|> = 258, <tool_call> = 270, </tool_call> = 271, ...), 282 ids in all,
with Qwen3's normalizer and pre-tokenizer, so the chat template and the tool protocol are unchanged.
The file is written atomically.`,
		Example: `  mathrl tokenizer new --bytes --out models/tiny/tokenizer.json`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if !opts.Bytes {
				return errors.New("tokenizer new: only --bytes is supported")
			}
			opts.Log = cmd.ErrOrStderr()
			if runF == nil {
				runF = runTokenizerNew
			}
			return runF(cmd.Context(), &opts)
		},
	}
	cmd.Flags().BoolVar(&opts.Bytes, "bytes", false, "the byte vocabulary (256 bytes + Qwen3's added tokens)")
	cmd.Flags().StringVar(&opts.Out, "out", "", "output tokenizer.json (required)")
	cmd.MarkFlagRequired("out")
	return cmd
}

func runTokenizerNew(_ context.Context, opts *tokenizerNewOptions) error {
	tok := tokenizer.NewBytes()
	if err := tok.Save(opts.Out); err != nil {
		return err
	}
	fmt.Fprintf(opts.Log, "wrote %s: %d token ids\n", opts.Out, tok.VocabSize())
	return nil
}
