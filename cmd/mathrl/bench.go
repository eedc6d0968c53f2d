package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/mathrl/mathrl/gomlx_trainer/backend"
	"github.com/mathrl/mathrl/gomlx_trainer/bench"
	"github.com/mathrl/mathrl/gomlx_trainer/qwen3"
)

// benchOptions are the flags of `mathrl bench`.
type benchOptions struct {
	modelFlags
	Config string
	Bench  bench.Options
	JSON   bool
	What   string
	Out    io.Writer
	Log    io.Writer
}

func newBenchCmd(runF func(context.Context, *benchOptions) error) *cobra.Command {
	var opts benchOptions
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Measure training-step and decoding throughput of a Qwen3 model",
		Long: `Bench times a training step (forward, backward and an SGD update of every weight on
batch x len tokens) and sampler decoding (batch prompts of len tokens, new-tokens sampled with
the KV cache, then again with the whole cache allocated from the start, as a baseline) on a randomly initialised model of a named config, or on --model. Compilation is
timed apart. With --peak-tflops (default 989, an H200's dense bf16 peak, on CUDA) it reports MFU.`,
		Example: `  mathrl bench --config tiny --backend cpu --batch 8 --len 64 --new-tokens 32
  mathrl bench --config qwen3-0.6b --dtype bf16 --backend cuda --batch 64 --len 320 --new-tokens 256 --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts.Out, opts.Log = cmd.OutOrStdout(), cmd.ErrOrStderr()
			if runF == nil {
				runF = runBench
			}
			return runF(cmd.Context(), &opts)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.Config, "config", "tiny", "named config for a random model (ignored with --model)")
	f.StringVar(&opts.Model, "model", "", "checkpoint folder instead of a random model")
	f.StringVar(&opts.DType, "dtype", "f32", "compute dtype: f32 or bf16")
	addBackendFlags(cmd, &opts.modelFlags)
	f.IntVar(&opts.Bench.Batch, "batch", 8, "sequences per step")
	f.IntVar(&opts.Bench.SeqLen, "len", 64, "tokens per training sequence and per prompt")
	f.IntVar(&opts.Bench.NewTokens, "new-tokens", 32, "tokens generated per prompt")
	f.IntVar(&opts.Bench.TrainSteps, "steps", 3, "timed training steps")
	f.Float64Var(&opts.Bench.PeakTFLOPS, "peak-tflops", 0, "device peak TFLOP/s for MFU (default 989 on cuda, none on cpu)")
	f.StringVar(&opts.What, "what", "both", "train, decode or both")
	f.Uint64Var(&opts.Bench.Seed, "seed", 0, "seed of the random model and tokens")
	f.BoolVar(&opts.JSON, "json", false, "print the result as one JSON object")
	f.BoolVar(&opts.Bench.Model.DecomposedAttention, "decomposed-attention", false,
		"train with attention built from matmuls and a softmax even where the backend has fused (flash) attention")
	return cmd
}

func runBench(_ context.Context, opts *benchOptions) error {
	switch opts.What {
	case "train", "decode", "both":
	default:
		return fmt.Errorf("bench: --what %q (train, decode or both)", opts.What)
	}
	opts.Bench.Train = opts.What != "decode"
	opts.Bench.Decode = opts.What != "train"
	dtype, err := qwen3.ParseDType(opts.DType)
	if err != nil {
		return err
	}
	b, plan, err := opts.openBackend(opts.Log)
	if err != nil {
		return err
	}
	if opts.Bench.PeakTFLOPS == 0 && plan.Kind == backend.CUDA {
		opts.Bench.PeakTFLOPS = 989
	}
	var m *qwen3.Model
	if opts.Model != "" {
		m, err = qwen3.Load(opts.Model, dtype)
	} else {
		var cfg qwen3.Config
		if cfg, err = qwen3.NamedConfig(opts.Config); err == nil {
			m, err = qwen3.NewRandom(cfg, dtype, opts.Bench.Seed)
		}
	}
	if err != nil {
		return err
	}
	res, err := bench.Run(b, m, opts.Bench, opts.Log)
	if err != nil {
		return err
	}
	if opts.JSON {
		data, err := json.Marshal(res)
		if err != nil {
			return err
		}
		fmt.Fprintln(opts.Out, string(data))
		return nil
	}
	return res.WriteText(opts.Out)
}
