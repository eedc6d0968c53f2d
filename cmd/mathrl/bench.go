package main

import (
	"context"
	"fmt"
	"io"

	"github.com/gomlx/compute/dtypes"
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
	// Roofline measures the machine's limits before the benches; RooflinePeaks
	// names them instead (a device or three numbers, bench.ParseRoofline).
	Roofline        bool
	RooflinePeaks   string
	RooflineCopyMiB int64 // --roofline's copy buffers; 0: bench.DefaultCopyBuffer
	RooflineMatmul  int   // --roofline's largest matmul
	Out             io.Writer
	Log             io.Writer
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
of a named config, or on --model. Compilation is timed apart. Every part reports its rate: the train
step's and the prefill's model FLOP/s, decoding's bytes/s (the weights a step multiplies by, at the
dtype's size, plus the key/value cache it attends over).

--roofline measures this machine's limits first, in a few seconds: the copy bandwidth (bytes read +
written per second copying a buffer into another, each the size of the last-level cache and at least
256 MiB, on --threads threads) and the float32 and bfloat16 matmul peaks (the best FLOP/s of square matmuls up to
--roofline-matmul, on every backend benched and, with --baseline torch, in PyTorch; the highest is
the peak). Each rate is then also given as its fraction of its limit: train and prefill of the
matmul peak of the model's dtype (MFU), decoding of the copy bandwidth (MBU). A decode step far
under its bandwidth is losing time elsewhere; one near 100% can only go faster by reading less.
--roofline-peaks takes the limits from a datasheet instead, without measuring: a device (h200:
4.8 TB/s, 67 TFLOP/s float32, 989 TFLOP/s bfloat16 dense) or "GB/s,TFLOP/s f32,TFLOP/s bf16". On
cuda the default is --roofline-peaks h200.

--what products times the model's matrix products alone instead, each as the model builds it, at
the shapes of a training step (every weight's product, its input's gradient and its own on batch x
len tokens), of the prefill (the sampler's, one prompt at a time, and one batched forward of every
prompt) and of a decode step (decode-batch rows), and with each side's fraction of the matmul peak
and a step's total per part: it shows how much of a step's time its products take, and which
product a backend multiplies slower than PyTorch.

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
      --decode-batch 16 --prompt-len 64 --new-tokens 32 --whole-cache=false
  mathrl bench --config qwen3-0.6b-4l --backend xla-cpu --baseline torch --roofline --what decode \
      --decode-batch 16 --prompt-len 64 --new-tokens 8 --whole-cache=false
  mathrl bench --config qwen3-0.6b --dtype bf16 --backend cuda --roofline-peaks 4800,67,989 --json
  mathrl bench --config qwen3-0.6b-4l --backend xla-cpu --baseline torch --roofline --what products \
      --batch 8 --len 256 --decode-batch 64 --prompt-len 64`,
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
	f.BoolVar(&opts.Roofline, "roofline", false, "measure the copy bandwidth and matmul peaks first; report each rate's fraction of them")
	f.StringVar(&opts.RooflinePeaks, "roofline-peaks", "", "the limits from a datasheet, not measured: h200, or GB/s,TFLOP/s f32,TFLOP/s bf16 (default h200 on cuda)")
	f.Int64Var(&opts.RooflineCopyMiB, "roofline-copy-mib", 0, "--roofline: MiB of each copy buffer (default the last-level cache, at least 256)")
	f.IntVar(&opts.RooflineMatmul, "roofline-matmul", bench.DefaultMatmulMax, "--roofline: largest side of the square matmuls timed")
	f.StringVar(&opts.What, "what", "both", "train, decode, both, or products (the model's matrix products alone, at train's and decode's shapes)")
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
	case "train", "decode", "both", "products":
	default:
		return fmt.Errorf("bench: --what %q (train, decode, both or products)", opts.What)
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
	if err := opts.checkRoofline(); err != nil {
		return err
	}
	b, plan, err := opts.openBackend(opts.Log)
	if err != nil {
		return err
	}
	if opts.RooflinePeaks == "" && !opts.Roofline && plan.Kind == backend.CUDA {
		opts.RooflinePeaks = "h200"
	}
	if opts.What == "products" {
		return runBenchProducts(ctx, opts, bench.GoMLXSide{Name: plan.Kind, Backend: b}, dtype)
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
	if opts.Bench.Roofline, err = benchRoofline(opts, bench.GoMLXSide{Name: plan.Kind, Backend: b}); err != nil {
		return err
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
	co, err := opts.compareOptions(main)
	if err != nil {
		return err
	}
	co.NewModel = newModel
	c, err := bench.Compare(ctx, co, opts.Log)
	if err != nil {
		return err
	}
	if opts.JSON {
		return jsonl.WriteLine(opts.Out, c)
	}
	return c.WriteText(opts.Out)
}

// runBenchProducts times the model's matrix products on main and every
// --baseline (--what products).
func runBenchProducts(ctx context.Context, opts *benchOptions, main bench.GoMLXSide, dtype dtypes.DType) error {
	var cfg qwen3.Config
	var err error
	if opts.Model != "" {
		cfg, err = qwen3.LoadConfig(opts.Model)
	} else {
		cfg, err = qwen3.NamedConfig(opts.Config)
	}
	if err != nil {
		return err
	}
	co, err := opts.compareOptions(main)
	if err != nil {
		return err
	}
	c, err := bench.CompareProducts(ctx, cfg, dtype, co, opts.Log)
	if err != nil {
		return err
	}
	if opts.JSON {
		return jsonl.WriteLine(opts.Out, c)
	}
	return c.WriteText(opts.Out)
}

// compareOptions opens every --baseline and returns what Compare and
// CompareProducts measure: main first, then the baselines, PyTorch last,
// against --roofline or --roofline-peaks.
func (opts *benchOptions) compareOptions(main bench.GoMLXSide) (bench.CompareOptions, error) {
	co := bench.CompareOptions{Bench: opts.Bench, Backends: []bench.GoMLXSide{main}}
	for _, name := range opts.Baseline {
		if name == bench.TorchName {
			t := opts.Torch
			t.Threads, t.Checkpoint = opts.Threads, opts.Model
			co.Torch = &t
			continue
		}
		b, plan, err := openBackend(name, "", opts.Log)
		if err != nil {
			return co, fmt.Errorf("bench: --baseline %s: %w", name, err)
		}
		co.Backends = append(co.Backends, bench.GoMLXSide{Name: plan.Kind, Backend: b})
	}
	if opts.Roofline {
		co.Roofline = opts.rooflineOptions()
	} else if opts.RooflinePeaks != "" {
		r, err := bench.ParseRoofline(opts.RooflinePeaks)
		if err != nil {
			return co, err
		}
		co.Bench.Roofline = &r
	}
	return co, nil
}

// checkRoofline refuses bad --roofline* flags before anything loads.
func (opts *benchOptions) checkRoofline() error {
	switch {
	case opts.Roofline && opts.RooflinePeaks != "":
		return fmt.Errorf("bench: --roofline measures the limits, --roofline-peaks gives them: not both")
	case opts.RooflineCopyMiB < 0:
		return fmt.Errorf("bench: --roofline-copy-mib %d, want >= 0", opts.RooflineCopyMiB)
	case opts.RooflineMatmul < 1:
		return fmt.Errorf("bench: --roofline-matmul %d, want >= 1", opts.RooflineMatmul)
	case opts.RooflinePeaks != "":
		if _, err := bench.ParseRoofline(opts.RooflinePeaks); err != nil {
			return fmt.Errorf("bench: --roofline-peaks: %w", err)
		}
	}
	return nil
}

// rooflineOptions is how --roofline measures: on the bench's threads, with
// --roofline-copy-mib and --roofline-matmul.
func (opts *benchOptions) rooflineOptions() *bench.RooflineOptions {
	return &bench.RooflineOptions{CopyBuffer: opts.RooflineCopyMiB << 20, MatmulMax: opts.RooflineMatmul}
}

// benchRoofline returns the limits the rates are read against: measured on
// side (--roofline), from --roofline-peaks, or nil.
func benchRoofline(opts *benchOptions, side bench.GoMLXSide) (*bench.Roofline, error) {
	switch {
	case opts.Roofline:
		r, err := bench.MeasureRoofline([]bench.GoMLXSide{side}, *opts.rooflineOptions(), opts.Log)
		return &r, err
	case opts.RooflinePeaks != "":
		r, err := bench.ParseRoofline(opts.RooflinePeaks)
		return &r, err
	}
	return nil, nil
}
