package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"reflect"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/mathrl/mathrl/analysis/metrics"
	"github.com/mathrl/mathrl/configs"
	"github.com/mathrl/mathrl/gomlx_trainer/backend"
	"github.com/mathrl/mathrl/gomlx_trainer/grpo"
)

// trainOptions are the parsed flags of `mathrl train`.
type trainOptions struct {
	Recipe     string      // --config: a YAML file or an embedded recipe name
	Resume     bool        // --resume
	PJRTPlugin string      // --pjrt-plugin
	Config     grpo.Config // the resolved config: recipe, then the flags that were set
	Command    string      // the command line, for provenance.json
	Out        io.Writer
}

func newTrainCmd(runF func(context.Context, *trainOptions) error) *cobra.Command {
	opts := trainOptions{}
	flagValues := grpo.Default()
	cmd := &cobra.Command{
		Use:   "train",
		Short: "Train a Qwen3 policy with GRPO (with no flags: the CPU demo)",
		Long: `train runs GRPO as a recipe says: rollouts with the code_interpreter tool, scores,
group advantages, PPO-clip updates with AdamW, evaluation, checkpoints and figures,
all in one run folder (--save). With no flags it runs the CPU demo (configs/demo.yaml)
into runs/demo; run it from the repository's root, where its policy, configs/demo-base,
is found (scripts/demo.sh regenerates the committed results/runs/demo).

A tiny model standing in for a recipe's checkpoint (--tiny-model with a recipe
that sets hf_checkpoint) makes a smoke run: budgets, batches, evaluation and
rollouts are cut to a few minutes on a CPU, keeping the optimizer steps per
rollout, and each cut is printed. Flags you set are kept as you set them;
--hf-checkpoint "" keeps the whole recipe.

Every recipe key is also a flag (rollout_batch_size is --rollout-batch-size;
num_devices is --devices). A flag
you set overrides the recipe; a default shown below is the value a recipe gets for a
key it leaves out. configs/README.md lists the keys with slime's equivalents.`,
		Example: `  mathrl train
  mathrl train --config configs/retool-grpo-qwen3-4b.yaml --backend cuda --hf-checkpoint ~/models/Qwen3-4B-Instruct-2507
  mathrl train --config math-grpo-qwen3-8b --tiny-model tiny --num-rollout 1 --save /tmp/smoke
  mathrl train --config demo --resume`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := grpo.LoadRecipe(opts.Recipe)
			if err != nil {
				return err
			}
			applyKnobFlags(cmd.Flags(), flagValues, &cfg)
			cfg, smoke := cfg.Smoke(setKnobs(cmd.Flags()))
			if err := cfg.Validate(); err != nil {
				return err
			}
			opts.Config, opts.Out = cfg, cmd.OutOrStdout()
			printSmoke(opts.Out, cfg, smoke)
			opts.Command = strings.Join(append([]string{cmd.Root().Name()}, os.Args[1:]...), " ") // "mathrl ...", whatever the binary is called
			if runF == nil {
				runF = runTrain
			}
			return runF(cmd.Context(), &opts)
		},
	}
	cmd.Flags().StringVar(&opts.Recipe, "config", configs.Demo, "recipe: a YAML file, or one of "+strings.Join(configs.Names(), ", "))
	cmd.Flags().BoolVar(&opts.Resume, "resume", false, "continue from the newest checkpoint in the run folder")
	bindKnobFlags(cmd.Flags(), &flagValues, &opts.PJRTPlugin)
	cmd.Flags().SortFlags = false // keep the knobs grouped as grpo.Config declares them
	return cmd
}

// knobFlag is the flag of a recipe key: "rollout_batch_size" is
// --rollout-batch-size, as in slime, unless the knob names its own flag
// (num_devices is --devices).
func knobFlag(k grpo.Knob) string {
	if k.Flag != "" {
		return k.Flag
	}
	return strings.ReplaceAll(k.Key, "_", "-")
}

// bindKnobFlags adds one flag per grpo.Config knob to fs, writing into c: its
// usage is the knob's description, its default c's value. The knob backend is
// --backend as every command defines it, followed by --pjrt-plugin (into
// plugin).
func bindKnobFlags(fs *pflag.FlagSet, c *grpo.Config, plugin *string) {
	for _, k := range grpo.Knobs() {
		if k.Key == "backend" {
			defineBackendFlags(fs, &c.Backend, plugin)
			continue
		}
		bindKnob(fs, k, c)
	}
}

// bindKnob adds the flag of knob k to fs, writing into c; its usage is the
// knob's description, its default c's value.
func bindKnob(fs *pflag.FlagSet, k grpo.Knob, c *grpo.Config) {
	name := knobFlag(k)
	switch p := k.Ptr(c).(type) {
	case *string:
		fs.StringVar(p, name, *p, k.Help)
	case *int:
		fs.IntVar(p, name, *p, k.Help)
	case *int64:
		fs.Int64Var(p, name, *p, k.Help)
	case *float64:
		fs.Float64Var(p, name, *p, k.Help)
	case *bool:
		fs.BoolVar(p, name, *p, k.Help)
	case *[]string:
		fs.StringSliceVar(p, name, *p, k.Help)
	default:
		panic(fmt.Sprintf("mathrl: recipe key %s has the unsupported type %s", k.Key, k.Type))
	}
}

// applyKnobFlags copies into dst the knobs whose flags were set on fs (bound
// to from by bindKnobFlags, or bindKnob for the keys given): a flag left
// unset keeps dst's value, even where dst differs from the flag's default.
// With keys, only those knobs are looked at (fs may have other flags of the
// same names).
func applyKnobFlags(fs *pflag.FlagSet, from grpo.Config, dst *grpo.Config, keys ...string) {
	src, out := reflect.ValueOf(from), reflect.ValueOf(dst).Elem()
	for _, k := range grpo.Knobs() {
		if len(keys) > 0 && !slices.Contains(keys, k.Key) {
			continue
		}
		if fs.Changed(knobFlag(k)) {
			out.Field(k.Index).Set(src.Field(k.Index))
		}
	}
}

// setKnobs returns the recipe keys whose flags were set on fs.
func setKnobs(fs *pflag.FlagSet) map[string]bool {
	set := map[string]bool{}
	for _, k := range grpo.Knobs() {
		if fs.Changed(knobFlag(k)) {
			set[k.Key] = true
		}
	}
	return set
}

// printSmoke says which knobs grpo.Config.Smoke cut, one line each.
func printSmoke(w io.Writer, cfg grpo.Config, changes []grpo.Change) {
	if len(changes) == 0 {
		return
	}
	fmt.Fprintf(w, "mathrl: smoke run: random %s stands in for %s, so the recipe's sizes are cut (a flag you set is kept):\n", cfg.TinyModel, cfg.HFCheckpoint)
	for _, ch := range changes {
		fmt.Fprintf(w, "mathrl: smoke: %s\n", ch)
	}
}

func runTrain(ctx context.Context, opts *trainOptions) error {
	b, _, err := openBackendOn(backend.Options{Kind: opts.Config.Backend, PJRTPlugin: opts.PJRTPlugin, NumDevices: opts.Config.NumDevices}, opts.Out)
	if err != nil {
		return err
	}
	return grpo.Train(ctx, opts.Config, grpo.TrainOptions{
		Backend: b, Resume: opts.Resume, Progress: opts.Out,
		Provenance: metrics.Provenance{Command: opts.Command},
	})
}
