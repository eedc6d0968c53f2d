package main

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

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
all in one run folder (--save). Every recipe key is also a flag (rollout_batch_size is
--rollout-batch-size); flags override the recipe. With no flags it runs the CPU demo
(configs/demo.yaml) into results/runs/demo.`,
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
			grpo.ApplyFlags(cmd.Flags(), flagValues, &cfg)
			if err := cfg.Validate(); err != nil {
				return err
			}
			opts.Config, opts.Out = cfg, cmd.OutOrStdout()
			opts.Command = strings.Join(append([]string{filepath.Base(os.Args[0])}, os.Args[1:]...), " ")
			if runF == nil {
				runF = runTrain
			}
			return runF(cmd.Context(), &opts)
		},
	}
	cmd.Flags().StringVar(&opts.Recipe, "config", configs.Demo, "recipe: a YAML file, or one of "+strings.Join(configs.Names(), ", "))
	cmd.Flags().BoolVar(&opts.Resume, "resume", false, "continue from the newest checkpoint in the run folder")
	cmd.Flags().StringVar(&opts.PJRTPlugin, "pjrt-plugin", "", "path to a PJRT CUDA plugin (--backend cuda)")
	grpo.BindFlags(cmd.Flags(), &flagValues)
	return cmd
}

func runTrain(ctx context.Context, opts *trainOptions) error {
	b, _, err := backend.New(backend.Options{Kind: opts.Config.Backend, PJRTPlugin: opts.PJRTPlugin})
	if err != nil {
		return err
	}
	return grpo.Train(ctx, opts.Config, grpo.TrainOptions{
		Backend: b, Resume: opts.Resume, Progress: opts.Out,
		Provenance: grpo.Provenance{Command: opts.Command},
	})
}
