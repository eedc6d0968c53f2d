package main

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/mathrl/mathrl/gomlx_trainer/tokenizer"
	"github.com/mathrl/mathrl/internal/jsonl"
)

func newTokenizeCmd(runF func(context.Context, *tokenizer.TokenizeOptions) error) *cobra.Command {
	opts := tokenizer.TokenizeOptions{Files: jsonl.Files{In: "-", Out: "-"}}
	cmd := &cobra.Command{
		Use:   "tokenize",
		Short: "Encode JSONL text into token ids, or decode ids into text",
		Long: `Tokenize reads JSON Lines, one object per line, and writes every object back with all its
fields plus "ids": the token ids of its string "text", exactly as Hugging Face's tokenizers encodes it
(added tokens such as <|im_end|> written in the text become their ids; no BOS/EOS is added). With
--decode it reads "ids" and adds "text" instead (--skip-special drops <|im_start|>, <|im_end|> and
the other special tokens, keeping the tool and think tags).

--tokenizer is a Hugging Face tokenizer.json of the byte-level BPE kind (Qwen2, Qwen3), or "bytes"
for the built-in byte vocabulary. An output file is written atomically; a malformed line stops the
run with an error naming the file, line and field.`,
		Example: `  mathrl tokenize --tokenizer models/Qwen3-4B-Instruct-2507/tokenizer.json --in texts.jsonl --out ids.jsonl
  echo '{"text": "<|im_start|>user\nHi<|im_end|>"}' | mathrl tokenize --tokenizer tokenizer.json
  mathrl tokenize --tokenizer tokenizer.json --decode --skip-special --in ids.jsonl`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts.Stdin, opts.Stdout = cmd.InOrStdin(), cmd.OutOrStdout()
			if runF == nil {
				runF = func(_ context.Context, o *tokenizer.TokenizeOptions) error { return tokenizer.TokenizeJSONL(*o) }
			}
			return runF(cmd.Context(), &opts)
		},
	}
	cmd.Flags().StringVar(&opts.Tokenizer, "tokenizer", "", `tokenizer.json file, or "bytes" (required)`)
	cmd.Flags().StringVar(&opts.In, "in", opts.In, "input JSONL file, - for standard input")
	cmd.Flags().StringVar(&opts.Out, "out", opts.Out, "output JSONL file, - for standard output")
	cmd.Flags().BoolVar(&opts.Decode, "decode", false, `read "ids" and add "text"`)
	cmd.Flags().BoolVar(&opts.SkipSpecial, "skip-special", false, "with --decode: drop special tokens")
	cmd.MarkFlagRequired("tokenizer")
	return cmd
}
