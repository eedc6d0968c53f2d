package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/mathrl/mathrl/gomlx_trainer/sampler"
	"github.com/mathrl/mathrl/gomlx_trainer/tokenizer"
	"github.com/mathrl/mathrl/internal/jsonl"
)

// generateOptions are the flags of `mathrl generate`.
type generateOptions struct {
	modelFlags
	jsonl.Files // --in, --out and the command's standard streams
	Tokenizer   string
	Batch       int
	Sampling    sampler.Options
	Stop        string
	Log         io.Writer
}

func newGenerateCmd(runF func(context.Context, *generateOptions) error) *cobra.Command {
	var opts generateOptions
	cmd := &cobra.Command{
		Use:   "generate",
		Short: "Continue prompts (JSON lines with input_ids or prompt text) with a Qwen3 model",
		Long: `Generate reads JSON lines with "input_ids" (token ids) or "prompt" (text, encoded
with the tokenizer) and writes each line back with "output_ids" (the new tokens only),
"output_logprobs" (log_softmax(logits/temperature) of each), "finish_reason" (stop or length)
and, when a tokenizer is known, "text", after the line's own fields (kept as they were, in
order). Temperature 0 is greedy. The tokenizer is --tokenizer, else tokenizer.json in the
model folder when there is one. Generation stops at the model's eos_token_id unless --stop
is given. An output file is written atomically.`,
		Example: `  echo '{"input_ids": [1, 2, 3]}' | mathrl generate --model ./models/tiny --max-new-tokens 16
  mathrl generate --model ./models/qwen3 --in prompts.jsonl --out samples.jsonl \
      --max-new-tokens 512 --temperature 1 --top-p 0.95 --seed 7 --backend cuda`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts.Stdin, opts.Stdout, opts.Log = cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr()
			if cmd.Flags().Changed("stop") {
				ids, err := parseIDList(opts.Stop)
				if err != nil {
					return fmt.Errorf("generate: --stop: %w", err)
				}
				opts.Sampling.StopIDs = ids
			}
			if runF == nil {
				runF = runGenerate
			}
			return runF(cmd.Context(), &opts)
		},
	}
	addModelFlags(cmd, &opts.modelFlags)
	f := cmd.Flags()
	f.StringVar(&opts.In, "in", "-", "input JSONL file, - for stdin")
	f.StringVar(&opts.Out, "out", "-", "output JSONL file, - for stdout")
	f.StringVar(&opts.Tokenizer, "tokenizer", "", "tokenizer.json (default: the model folder's, if any)")
	f.IntVar(&opts.Batch, "batch", 16, "prompts generated together")
	f.IntVar(&opts.Sampling.MaxNewTokens, "max-new-tokens", 256, "most new tokens per prompt")
	f.Float64Var(&opts.Sampling.Temperature, "temperature", 0, "sampling temperature; 0 is greedy")
	f.Float64Var(&opts.Sampling.TopP, "top-p", 1, "nucleus sampling: keep the most likely tokens holding this probability")
	f.IntVar(&opts.Sampling.TopK, "top-k", 0, "keep only the K most likely tokens; 0 keeps all")
	f.Uint64Var(&opts.Sampling.Seed, "seed", 0, "random seed")
	f.StringVar(&opts.Stop, "stop", "", "comma-separated stop token ids (default: the model's eos_token_id); --stop= for none")
	cmd.MarkFlagRequired("model")
	return cmd
}

func runGenerate(ctx context.Context, opts *generateOptions) error {
	var tok sampler.Tokenizer
	path := opts.Tokenizer
	if path == "" {
		if p := filepath.Join(opts.Model, "tokenizer.json"); fileExists(p) {
			path = p
		}
	}
	if path != "" {
		t, err := tokenizer.Load(path)
		if err != nil {
			return err
		}
		tok = t
		fmt.Fprintf(opts.Log, "tokenizer: %s\n", path)
	}
	b, m, err := opts.open(opts.Log)
	if err != nil {
		return err
	}
	s := sampler.New(b, m)
	return opts.Run(func(r io.Reader, name string, w io.Writer) error {
		return s.GenerateJSONL(ctx, r, name, w, opts.Sampling, opts.Batch, tok)
	})
}

// parseIDList reads "3,4" as [3 4] and "" as an empty (not nil) list.
func parseIDList(s string) ([]int, error) {
	ids := []int{}
	for _, part := range strings.Split(s, ",") {
		if part = strings.TrimSpace(part); part == "" {
			continue
		}
		id, err := strconv.Atoi(part)
		if err != nil || id < 0 {
			return nil, fmt.Errorf("%q is not a token id", part)
		}
		ids = append(ids, id)
	}
	return ids, nil
}

func fileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir()
}
