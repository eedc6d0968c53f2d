package main

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/mathrl/mathrl/gomlx_trainer/backend"
	"github.com/mathrl/mathrl/gomlx_trainer/bench"
	"github.com/mathrl/mathrl/gomlx_trainer/qwen3"
	"github.com/mathrl/mathrl/internal/jsonl"
)

// benchOptions are the flags of `mathrl bench`.
type benchOptions struct {
	modelFlags
	Config     string
	Bench      bench.Options
	JSON       bool
	What       string
	Baseline   []string // "torch" and GoMLX backend kinds, measured after --backend
	Torch      bench.TorchOptions
	Threads    int
	WholeCache bool
	Out        io.Writer
	Log        io.Writer
}

func newBenchCmd(runF func(context.Context, *benchOptions) error) *cobra.Command {
	var opts benchOptions
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Measure training-step and decoding throughput of a Qwen3 model",
		Long: `Bench times a training step (forward, backward and the GRPO trainer's AdamW update of every
weight on batch x len tokens) and sampler decoding (decode-batch prompts of prompt-len tokens,
new-tokens generated with the KV cache, greedy unless --temperature, then again with the whole cache
allocated from the start, as a baseline, unless --whole-cache=false) on a randomly initialised model
of a named config, or on --model. Compilation is timed apart. With --peak-tflops (default 989, an
H200's dense bf16 peak, on CUDA) it reports MFU.

--baseline measures the same shapes again, after --backend, on other GoMLX backends (cpu, xla-cpu,
cuda) and/or on PyTorch eager + transformers (torch: scripts/bench/torch_qwen3.py run by --python,
the venv scripts/setup.sh installs, with torch.set_num_threads(--threads); its train step is the
forward with labels, backward, the same gradient clip and torch.optim.AdamW, its decoding
model.generate with the KV cache), and prints them side by side with the ratios of their step times.
--threads sets the pure Go backend's threads (GOMAXPROCS) too; XLA's CPU backend takes every CPU the
process may run on (use taskset to give it fewer).`,
		Example: `  mathrl bench --config tiny --backend cpu --batch 8 --len 64 --new-tokens 32
  mathrl bench --config qwen3-0.6b --dtype bf16 --backend cuda --batch 64 --len 320 --new-tokens 256 --json
  mathrl bench --config qwen3-0.6b-4l --backend xla-cpu --baseline torch --what train --batch 8 --len 256 --steps 2
  mathrl bench --config qwen3-0.6b-4l --backend xla-cpu --baseline torch,cpu --what decode \
      --decode-batch 16 --prompt-len 64 --new-tokens 32 --whole-cache=false`,
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
	f.IntVar(&opts.Bench.Batch, "batch", 8, "sequences per training step (and prompts decoded together unless --decode-batch)")
	f.IntVar(&opts.Bench.SeqLen, "len", 64, "tokens per training sequence (and per prompt unless --prompt-len)")
	f.IntVar(&opts.Bench.DecodeBatch, "decode-batch", 0, "prompts decoded together (default --batch)")
	f.IntVar(&opts.Bench.PromptLen, "prompt-len", 0, "tokens per prompt (default --len)")
	f.IntVar(&opts.Bench.NewTokens, "new-tokens", 32, "tokens generated per prompt")
	f.Float64Var(&opts.Bench.Temperature, "temperature", 0, "decoding temperature; 0 is greedy")
	f.BoolVar(&opts.WholeCache, "whole-cache", true, "also time decoding with the whole cache allocated from the start")
	f.IntVar(&opts.Bench.TrainSteps, "steps", 3, "timed training steps")
	f.Float64Var(&opts.Bench.PeakTFLOPS, "peak-tflops", 0, "device peak TFLOP/s for MFU (default 989 on cuda, none on cpu)")
	f.StringVar(&opts.What, "what", "both", "train, decode or both")
	f.Uint64Var(&opts.Bench.Seed, "seed", 0, "seed of the random model and tokens")
	f.BoolVar(&opts.JSON, "json", false, "print the result as one JSON object")
	f.StringSliceVar(&opts.Baseline, "baseline", nil, "also measure on these, side by side: torch (PyTorch eager), cpu, xla-cpu, cuda")
	f.StringVar(&opts.Torch.Python, "python", "", "python with torch and transformers for --baseline torch (default "+bench.VenvPython+" found above the working directory)")
	f.StringVar(&opts.Torch.Script, "torch-script", "", "the PyTorch baseline script (default "+bench.TorchScript+" found above the working directory)")
	f.IntVar(&opts.Threads, "threads", 0, "compute threads of the pure Go backend (GOMAXPROCS) and of PyTorch (default GOMAXPROCS: every CPU)")
	f.BoolVar(&opts.Bench.Model.DecomposedAttention, "decomposed-attention", false,
		"train with attention built from matmuls and a softmax even where the backend has fused (flash) attention")
	return cmd
}

func runBench(ctx context.Context, opts *benchOptions) error {
	switch opts.What {
	case "train", "decode", "both":
	default:
		return fmt.Errorf("bench: --what %q (train, decode or both)", opts.What)
	}
	opts.Bench.Train = opts.What != "decode"
	opts.Bench.Decode = opts.What != "train"
	opts.Bench.SkipWholeCache = !opts.WholeCache
	dtype, err := qwen3.ParseDType(opts.DType)
	if err != nil {
		return err
	}
	if opts.Threads != 0 {
		if _, err := bench.SetThreads(opts.Threads); err != nil {
			return fmt.Errorf("bench: --threads: %w", err)
		}
	}
	b, plan, err := opts.openBackend(opts.Log)
	if err != nil {
		return err
	}
	if opts.Bench.PeakTFLOPS == 0 && plan.Kind == backend.CUDA {
		opts.Bench.PeakTFLOPS = 989
	}
	newModel := func() (*qwen3.Model, error) {
		if opts.Model != "" {
			return qwen3.Load(opts.Model, dtype)
		}
		cfg, err := qwen3.NamedConfig(opts.Config)
		if err != nil {
			return nil, err
		}
		return qwen3.NewRandom(cfg, dtype, opts.Bench.Seed)
	}
	if len(opts.Baseline) > 0 {
		return runBenchCompare(ctx, opts, bench.GoMLXSide{Name: plan.Kind, Backend: b}, newModel)
	}
	m, err := newModel()
	if err != nil {
		return err
	}
	res, err := bench.Run(b, m, opts.Bench, opts.Log)
	if err != nil {
		return err
	}
	if opts.JSON {
		return jsonl.WriteLine(opts.Out, res)
	}
	return res.WriteText(opts.Out)
}

// runBenchCompare measures main, then every --baseline, side by side.
func runBenchCompare(ctx context.Context, opts *benchOptions, main bench.GoMLXSide, newModel func() (*qwen3.Model, error)) error {
	co := bench.CompareOptions{Bench: opts.Bench, Backends: []bench.GoMLXSide{main}, NewModel: newModel}
	for _, name := range opts.Baseline {
		if name == bench.TorchName {
			t := opts.Torch
			t.Threads, t.Checkpoint = opts.Threads, opts.Model
			co.Torch = &t
			continue
		}
		b, plan, err := openBackend(name, "", opts.Log)
		if err != nil {
			return fmt.Errorf("bench: --baseline %s: %w", name, err)
		}
		co.Backends = append(co.Backends, bench.GoMLXSide{Name: plan.Kind, Backend: b})
	}
	c, err := bench.Compare(ctx, co, opts.Log)
	if err != nil {
		return err
	}
	if opts.JSON {
		return jsonl.WriteLine(opts.Out, c)
	}
	return c.WriteText(opts.Out)
}
