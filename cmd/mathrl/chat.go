package main

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/mathrl/mathrl/gomlx_trainer/tokenizer"
	"github.com/mathrl/mathrl/internal/jsonl"
)

func newChatCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:     "chat",
		Short:   "Work with the Qwen3 chat template",
		Example: `  mathrl chat render --tokenizer tokenizer.json --in conversations.jsonl`,
		Args:    cobra.NoArgs,
	}
	cmd.AddCommand(newChatRenderCmd(nil))
	return cmd
}

func newChatRenderCmd(runF func(context.Context, *tokenizer.ChatRenderOptions) error) *cobra.Command {
	opts := tokenizer.ChatRenderOptions{Files: jsonl.Files{In: "-", Out: "-"}}
	cmd := &cobra.Command{
		Use:   "render",
		Short: "Render JSONL conversations with the Qwen3-4B-Instruct-2507 chat template",
		Long: `Render reads JSON Lines, one object per line with "messages" (a list of {"role", "content",
"tool_calls"} objects), optional "tools" (a list of tool specifications) and optional
"add_generation_prompt" (true or false), and writes every object back with all its fields plus
"rendered": the text Hugging Face's apply_chat_template gives with the Qwen3-4B-Instruct-2507
template, byte for byte. With --tokenizer it also adds "ids", the token ids of that text.

An output file is written atomically; a malformed line stops the run with an error naming the
file, line and field.`,
		Example: `  echo '{"messages": [{"role": "user", "content": "What is 2+2?"}], "add_generation_prompt": true}' | mathrl chat render
  mathrl chat render --tokenizer tokenizer.json --in conversations.jsonl --out rendered.jsonl`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts.Stdin, opts.Stdout = cmd.InOrStdin(), cmd.OutOrStdout()
			if runF == nil {
				runF = func(_ context.Context, o *tokenizer.ChatRenderOptions) error { return tokenizer.RenderChatJSONL(*o) }
			}
			return runF(cmd.Context(), &opts)
		},
	}
	cmd.Flags().StringVar(&opts.Tokenizer, "tokenizer", "", `tokenizer.json file, or "bytes", to add "ids" (optional)`)
	cmd.Flags().StringVar(&opts.In, "in", opts.In, "input JSONL file, - for standard input")
	cmd.Flags().StringVar(&opts.Out, "out", opts.Out, "output JSONL file, - for standard output")
	return cmd
}
