package main

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/mathrl/mathrl/configs"
	"github.com/mathrl/mathrl/gomlx_trainer/engine/inprocess"
	"github.com/mathrl/mathrl/gomlx_trainer/grpo"
	"github.com/mathrl/mathrl/gomlx_trainer/layout"
	"github.com/mathrl/mathrl/gomlx_trainer/memplan"
	"github.com/mathrl/mathrl/gomlx_trainer/qwen3"
)

// planOptions are the parsed flags of `mathrl plan`.
type planOptions struct {
	Config grpo.Config    // the recipe, with --hf-checkpoint and --tiny-model applied
	Recipe memplan.Recipe // its numbers that decide memory, with the other flags applied
	Limit  int64          // --gpu-memory, in bytes
	Rules  memplan.Rules  // --rules, or the recipe's backend: cpu for the pure Go backend, else xla
	Out    io.Writer
}

// planKnobKeys are the recipe keys `mathrl plan` takes as mathrl train
// does: the optimizer state's, and process_reward (an implicit PRM is a
// second trained model).
var planKnobKeys = append(slices.Clone(grpo.OptimizerStateKeys), "process_reward")

// planFlags are the flags of `mathrl plan` before they are resolved.
type planFlags struct {
	recipe, gpuMemory, hfCheckpoint, tinyModel, rules, sharding, teacher, teacherTiny string
	microBatch, maxTokens, samplingBatch, logProbChunk, devices                       int
	recompute, fused                                                                  bool
	state                                                                             grpo.Config // the optimizer-state knobs, as mathrl train takes them (grpo.OptimizerStateKeys)
}

func newPlanCmd(runF func(*planOptions) error) *cobra.Command {
	var f planFlags
	cmd := &cobra.Command{
		Use:   "plan",
		Short: "Predict a recipe's peak device memory, and whether it fits",
		Long: `plan predicts the peak device memory of a recipe's training step (weights,
gradient accumulators, AdamW moments, the activations of one micro-batch of the
longest sequences, the log-prob head) and of its sampling sessions (the key/value
cache and one step's working set), names the term that dominates, and finds the
largest micro-batch and sampling batch that fit. It exits with an error when the
recipe does not fit.

The optimizer's state is planned as mathrl train keeps it, with the same flags
(--use-precision-aware-optimizer, --main-params-dtype, --store-param-remainders,
--exp-avg-dtype, --optimizer-cpu-offload, --offload-train, ...): weights and
accumulators on the device during a step, the master and moments on the device
or the host, and while sampling only what offload_train leaves.

The model's shape comes from --tiny-model (a built-in shape: qwen3-4b, qwen3-8b, ...)
or from the config.json of --hf-checkpoint, else from the recipe. The other flags
try settings without editing the recipe. With --devices N and --sharding data or
fsdp the figures are those of one device (the first, which also runs the sampler).`,
		Example: `  mathrl plan --config retool-grpo-qwen3-4b --tiny-model qwen3-4b
  mathrl plan --config math-grpo-qwen3-8b --hf-checkpoint ~/models/Qwen3-8B --gpu-memory 80GiB
  mathrl plan --config math-grpo-qwen3-8b --tiny-model qwen3-8b --micro-batch-size 1 --recompute-layers
  mathrl plan --config math-grpo-qwen3-8b --tiny-model qwen3-8b --micro-batch-size 8 --devices 8 --sharding fsdp
  mathrl plan --config math-grpo-qwen3-8b --tiny-model qwen3-8b --gpu-memory 93GiB --optimizer-cpu-offload=false`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts, err := f.resolve(cmd)
			if err != nil {
				return err
			}
			opts.Out = cmd.OutOrStdout()
			if runF == nil {
				runF = runPlan
			}
			return runF(opts)
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&f.recipe, "config", configs.Demo, "recipe: a YAML file, or one of "+strings.Join(configs.Names(), ", "))
	fs.StringVar(&f.gpuMemory, "gpu-memory", "141GiB", "memory the device may use (GiB, GB, MiB, ...)")
	fs.StringVar(&f.hfCheckpoint, "hf-checkpoint", "", "read the model's shape from this folder's config.json")
	fs.StringVar(&f.tinyModel, "tiny-model", "", "a built-in model shape ("+strings.Join(qwen3.ConfigNames(), ", ")+")")
	fs.StringVar(&f.teacher, "teacher", "", "count the weights of an in-process distillation teacher, its shape from this folder's config.json (default: the recipe's teacher)")
	fs.StringVar(&f.teacherTiny, "teacher-tiny-model", "", "count the weights of an in-process distillation teacher of this built-in shape, without its folder (as --tiny-model does for the policy)")
	fs.StringVar(&f.rules, "rules", "", "whose buffer rules: xla (GPU) or cpu (the pure Go backend); default: from the recipe's backend")
	fs.IntVar(&f.microBatch, "micro-batch-size", 0, "sequences per forward/backward pass (default: the recipe's)")
	fs.IntVar(&f.maxTokens, "max-tokens-per-micro-batch", 0, "padded tokens per micro-batch, instead of a number of sequences (default: the recipe's)")
	fs.IntVar(&f.samplingBatch, "sampling-batch-size", 0, "sequences sampled at once (default: the recipe's)")
	fs.IntVar(&f.logProbChunk, "logprob-chunk", 0, "positions per chunk of the log-prob head, 0 for all at once (default: the recipe's)")
	fs.IntVar(&f.devices, "devices", 1, "devices the training step spreads over (default: the recipe's num_devices)")
	fs.StringVar(&f.sharding, "sharding", "", "how the step spreads over --devices: "+strings.Join(layout.Modes(), ", ")+" (default: the recipe's)")
	fs.BoolVar(&f.recompute, "recompute-layers", false, "recompute each decoder layer in the backward (default: the recipe's)")
	f.state = grpo.Default()
	for _, k := range grpo.Knobs() {
		if slices.Contains(planKnobKeys, k.Key) {
			bindKnob(fs, k, &f.state)
		}
	}
	fs.BoolVar(&f.fused, "fused-attention", false, "plan the training step's attention as fused (flash) attention, without [B, heads, T, T] scores "+
		"(default: as the trainer runs it, fused under the xla rules in bfloat16 or float16; --fused-attention=false plans the decomposed graph)")
	return cmd
}

// resolve loads the recipe and applies the flags that were set.
func (f planFlags) resolve(cmd *cobra.Command) (*planOptions, error) {
	cfg, err := grpo.LoadRecipe(f.recipe)
	if err != nil {
		return nil, err
	}
	set := cmd.Flags().Changed
	if set("hf-checkpoint") {
		cfg.HFCheckpoint, cfg.TinyModel = f.hfCheckpoint, ""
	}
	if set("tiny-model") {
		cfg.TinyModel = f.tinyModel
	}
	if set("teacher") && set("teacher-tiny-model") {
		return nil, errors.New("plan: --teacher and --teacher-tiny-model both name the teacher's shape; give one")
	}
	if set("teacher") {
		cfg.Teacher, cfg.TeacherEngine = f.teacher, inprocess.Name
	}
	var teacherShape *qwen3.Config
	if set("teacher-tiny-model") {
		shape, err := qwen3.NamedConfig(f.teacherTiny)
		if err != nil {
			return nil, fmt.Errorf("plan: --teacher-tiny-model: %w", err)
		}
		teacherShape, cfg.Teacher = &shape, "" // the recipe's teacher folder is not read
	}
	applyKnobFlags(cmd.Flags(), f.state, &cfg, planKnobKeys...)
	if err := cfg.ValidateOptimizerState(); err != nil {
		return nil, err
	}
	if err := cfg.ValidateProcessReward(); err != nil {
		return nil, err
	}
	rc, err := cfg.MemoryRecipe()
	if err != nil {
		return nil, err
	}
	if teacherShape != nil {
		rc.TeacherParams = teacherShape.Params()
		if cfg.DistillMode == "sft" { // the teacher samples the rollouts
			rc.RolloutSampler = teacherShape
		}
	}
	for _, o := range []struct {
		flag string
		dst  *int
		v    int
	}{
		{"micro-batch-size", &rc.MicroBatch, f.microBatch}, {"max-tokens-per-micro-batch", &rc.MaxTokens, f.maxTokens},
		{"sampling-batch-size", &rc.SamplingBatch, f.samplingBatch}, {"logprob-chunk", &rc.LogProbChunk, f.logProbChunk},
	} {
		if set(o.flag) {
			if o.v < 0 {
				return nil, fmt.Errorf("--%s %d is negative", o.flag, o.v)
			}
			*o.dst = o.v
		}
	}
	if err := f.shardingOf(set, cfg, &rc); err != nil {
		return nil, err
	}
	if set("recompute-layers") {
		rc.RecomputeLayers = f.recompute
	}
	limit, err := memplan.ParseSize(f.gpuMemory)
	if err != nil {
		return nil, err
	}
	rules, err := planRules(f.rules, cfg.Backend)
	if err != nil {
		return nil, err
	}
	rc.FusedAttention = memplan.FusedAttention(rc.DType, rules)
	if set("fused-attention") {
		if f.fused && !rc.FusedAttention {
			return nil, fmt.Errorf("--fused-attention: fused attention runs under the xla rules in bfloat16 or float16, "+
				"not under the %s rules in %s", rules, cfg.DType)
		}
		rc.FusedAttention = f.fused
	}
	return &planOptions{Config: cfg, Recipe: rc, Limit: limit, Rules: rules}, nil
}

// shardingOf sets rc's devices and sharding from the recipe's num_devices
// and sharding, or the flags where set: one device under replicate leaves
// both zero, as grpo.Config.MemoryRecipe does.
func (f planFlags) shardingOf(set func(string) bool, cfg grpo.Config, rc *memplan.Recipe) error {
	devices, sharding := cfg.NumDevices, cfg.Sharding
	if set("devices") {
		if f.devices < 1 {
			return fmt.Errorf("--devices %d: want at least 1", f.devices)
		}
		devices = f.devices
	}
	if set("sharding") {
		sharding = f.sharding
	}
	rc.Devices, rc.Sharding = devices, sharding
	if devices <= 1 && (sharding == "" || sharding == layout.Replicate) {
		rc.Devices, rc.Sharding = 0, ""
	}
	return nil
}

// planRules chooses the buffer rules: the flag's, else cpu for a recipe that
// runs on the pure Go backend and xla for one that runs on a GPU.
func planRules(flag, backend string) (memplan.Rules, error) {
	switch {
	case flag == "xla", flag == "" && backend != "cpu":
		return memplan.XLA, nil
	case flag == "cpu", flag == "":
		return memplan.CPU, nil
	}
	return 0, fmt.Errorf("--rules %q: want xla or cpu", flag)
}

func runPlan(opts *planOptions) error {
	model, name, err := opts.Config.PolicyShape()
	if err != nil {
		return err
	}
	fmt.Fprintf(opts.Out, "model %s: %s parameters, %s; prompts of %d + responses of %d tokens\n",
		name, count(model.Params()), opts.Config.DType, opts.Recipe.PromptLen, opts.Recipe.ResponseLen)
	if err := opts.Recipe.CheckDevices(model, opts.Rules); err != nil {
		return err
	}
	rep := memplan.Plan(model, opts.Recipe, opts.Limit, opts.Rules)
	if _, err := rep.WriteTo(opts.Out); err != nil {
		return err
	}
	if !rep.Fits() {
		return fmt.Errorf("plan: %w in %s", memplan.ErrDoesNotFit, memplan.FormatGiB(opts.Limit))
	}
	return nil
}

// count writes n with a B (billion) or M (million) suffix when it is that large.
func count(n int64) string {
	switch {
	case n >= 1e9:
		return fmt.Sprintf("%.2fB", float64(n)/1e9)
	case n >= 1e6:
		return fmt.Sprintf("%.2fM", float64(n)/1e6)
	}
	return fmt.Sprint(n)
}
