package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/mathrl/mathrl/analysis/scorer"
	"github.com/mathrl/mathrl/gomlx_trainer/grpo"
)

// evalOptions are the parsed flags of `mathrl eval`.
type evalOptions struct {
	Request    grpo.EvalRequest
	Backend    string
	PJRTPlugin string
	Out        io.Writer
}

func newEvalCmd(runF func(context.Context, *evalOptions) error) *cobra.Command {
	opts := evalOptions{Request: grpo.DefaultEvalRequest()}
	cmd := &cobra.Command{
		Use:   "eval",
		Short: "Sample K answers per problem from a model, score them, write eval samples",
		Long: `eval samples --samples answers per problem with the same sampler, tool loop and scorer
the trainer uses, writes one eval-samples JSONL line per answer (--out) and prints
avg@k, pass@k and the truncation rate. --model is a Hugging Face folder; a run's
checkpoint (runs/NAME/ckpt/step-NNNNNN) is one, and its prompts are then
rendered as that run rendered them (system prompt, tool spec), and --seed and --batch
default to that run's, so that with the run's evaluation knobs it gives the run's
evaluation samples again.

--rollout-engine sglang (or openai) samples on inference servers instead: mathrl
serve workers, SGLang or vLLM servers, or a router in front of them
(--rollout-engine-urls). Each worker is first told to load --model
(POST /update_weights_from_disk, weight version "checkpoint:" and the folder's
absolute path), so the servers must see that folder at the same path; the
records are those of the in-process engine, and with mathrl serve workers and
--rollout-engine-batch at least --batch, the same samples bit for bit.`,
		Example: `  mathrl eval --model runs/demo/ckpt/step-000030 --data arith --samples 4 --max-tokens 160 --scorer math --tools --tokenizer bytes
  mathrl eval --model ~/models/Qwen3-4B-Instruct-2507 --data aime24 --samples 16 --max-tokens 16384 --scorer dapo --tools --backend cuda --dtype bfloat16
  mathrl eval --model runs/retool/ckpt/step-000100 --data aime24 --samples 16 --max-tokens 16384 --scorer dapo --tools --rollout-engine sglang --rollout-engine-urls http://router:30000`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkpointDefaults(cmd, &opts.Request); err != nil {
				return err
			}
			if err := opts.Request.Validate(); err != nil {
				return err
			}
			opts.Out = cmd.OutOrStdout()
			if runF == nil {
				runF = runEval
			}
			return runF(cmd.Context(), &opts)
		},
	}
	f := cmd.Flags()
	r := &opts.Request
	f.StringVar(&r.Model, "model", "", "Hugging Face model folder (config.json, model.safetensors, tokenizer.json)")
	f.StringVar(&r.Data, "data", "", "dataset name (math500, aime24, ...), a JSONL file, or arith")
	f.IntVar(&r.MaxPrompts, "max-prompts", 0, "use the first N problems (0: all; arith: 64)")
	f.IntVar(&r.K, "samples", r.K, "answers per problem (k)")
	f.IntVar(&r.Budget, "max-tokens", r.Budget, "response budget in tokens, tool responses included")
	f.StringVar(&r.Scorer, "scorer", r.Scorer, strings.Join(scorer.Rewards(), ", ")+" (optionally prefixed by boxed_)")
	f.BoolVar(&r.UseTools, "tools", false, "run code_interpreter calls in the sandbox")
	f.IntVar(&r.MaxTurns, "max-turns", r.MaxTurns, "tool calls per answer")
	f.Float64Var(&r.Temperature, "temperature", r.Temperature, "sampling temperature (0: greedy)")
	f.Float64Var(&r.TopP, "top-p", r.TopP, "nucleus sampling threshold")
	f.Uint64Var(&r.Seed, "seed", r.Seed, "sampling seed, batch b at seed+b; on a run's checkpoint the run's seed unless given")
	f.StringVar(&r.DType, "dtype", r.DType, "compute dtype: float32 (f32) or bfloat16 (bf16)")
	f.StringVar(&r.Tokenizer, "tokenizer", "", `tokenizer.json path, or "bytes" (default: the model folder's)`)
	f.StringVar(&r.Out, "out", r.Out, "eval-samples JSONL to write")
	f.IntVar(&r.BatchSize, "batch", r.BatchSize, "sequences generated at once; on a run's checkpoint the run's evaluation batch (its sampling_batch_size when set) unless given")
	f.IntVar(&r.ArithDigits, "arith-max-digits", 0, "--data arith: largest operand length (default: the checkpoint run's, else 4)")
	f.StringVar(&r.ArithOps, "arith-ops", "", `--data arith: operations, "*+", "*" or "+" (default: the checkpoint run's, else "*+")`)
	f.StringVar(&r.Engine, "rollout-engine", r.Engine, knobHelp("rollout_engine"))
	f.StringSliceVar(&r.EngineURLs, "rollout-engine-urls", nil, knobHelp("rollout_engine_urls"))
	f.IntVar(&r.EngineBatch, "rollout-engine-batch", 0, knobHelp("rollout_engine_batch"))
	defineBackendFlags(f, &opts.Backend, &opts.PJRTPlugin)
	cmd.MarkFlagRequired("model")
	cmd.MarkFlagRequired("data")
	return cmd
}

// checkpointDefaults sets the --seed and --batch that were not given to
// those of the run whose checkpoint --model is (see grpo.EvalDefaults).
func checkpointDefaults(cmd *cobra.Command, r *grpo.EvalRequest) error {
	d, err := grpo.EvalDefaults(r.Model)
	if err != nil {
		return err
	}
	if !cmd.Flags().Changed("seed") {
		r.Seed = d.Seed
	}
	if !cmd.Flags().Changed("batch") {
		r.BatchSize = d.BatchSize
	}
	return nil
}

func runEval(ctx context.Context, opts *evalOptions) error {
	b, _, err := openBackend(opts.Backend, opts.PJRTPlugin, opts.Out)
	if err != nil {
		return err
	}
	opts.Request.Progress = opts.Out
	sum, err := grpo.RunEval(ctx, b, opts.Request)
	if err != nil {
		return err
	}
	fmt.Fprintf(opts.Out, "%s on %s: %d problems x %d samples, budget %d, scorer %s\n",
		opts.Request.Model, opts.Request.Data, len(sum.Problems), sum.K, sum.Budget, sum.Scorer)
	fmt.Fprintf(opts.Out, "avg@%d %.4f  pass@%d %.4f  truncation %.4f  tool calls %.2f  scorer errors %d\n",
		sum.K, sum.AvgAtK, sum.K, sum.PassAtK, sum.TruncationRate, sum.ToolCallsMean, sum.Errors)
	fmt.Fprintf(opts.Out, "samples: %s\n", opts.Request.Out)
	return nil
}
