package main

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/gomlx/compute"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/mathrl/mathrl/gomlx_trainer/backend"
	"github.com/mathrl/mathrl/gomlx_trainer/grpo"
	"github.com/mathrl/mathrl/gomlx_trainer/qwen3"
)

// newModelCmd groups the checkpoint commands.
func newModelCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "model",
		Short: "Make and inspect Qwen3 checkpoints in Hugging Face format",
		Example: `  mathrl model init --config tiny --out ./models/tiny
  mathrl model init --config qwen3-0.6b --out ./models/rand-0.6b --seed 3`,
		Args: cobra.NoArgs,
	}
	cmd.AddCommand(newModelInitCmd(nil), newModelUntieCmd())
	return cmd
}

// newModelUntieCmd is `mathrl model untie`: a tied checkpoint written untied,
// the starting folder of a vLLM server that rollout_engine openai reloads.
func newModelUntieCmd() *cobra.Command {
	var in, out string
	cmd := &cobra.Command{
		Use:   "untie",
		Short: "Write a checkpoint with its embeddings untied (lm_head.weight a copy of the embedding)",
		Long: `Untie writes the same model with tie_word_embeddings false and lm_head.weight a copy of
model.embed_tokens.weight (a checkpoint already untied is copied as it is). vLLM's in-place weight reload
leaves a tied lm_head at its old weights, so with rollout_engine openai a tied policy is pushed to vLLM
untied, and vLLM must start from an untied checkpoint of its shape (docs/vllm.md).`,
		Example: `  mathrl model untie --model ./models/rand-0.6b --out ./models/rand-0.6b-untied`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := qwen3.WriteUntied(in, out); err != nil {
				return err
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "model untie: %s written untied into %s\n", in, out)
			return nil
		},
	}
	cmd.Flags().StringVar(&in, "model", "", "checkpoint folder (config.json + safetensors)")
	cmd.Flags().StringVar(&out, "out", "", "output folder")
	cmd.MarkFlagRequired("model")
	cmd.MarkFlagRequired("out")
	return cmd
}

// modelInitOptions are the flags of `mathrl model init`.
type modelInitOptions struct {
	Config    string
	Out       string
	Seed      uint64
	DType     string // stored dtype: bf16, f16, f32; "" is the config's own
	VocabSize int    // 0 keeps the config's
	Log       io.Writer
}

func newModelInitCmd(runF func(context.Context, *modelInitOptions) error) *cobra.Command {
	var opts modelInitOptions
	cmd := &cobra.Command{
		Use:   "init",
		Short: "Write a randomly initialised checkpoint (config.json + model.safetensors)",
		Long: `Init writes a Qwen3 checkpoint with random weights (normal, std 0.02; norms at 1, as
transformers initialises Qwen3) in Hugging Face format, loadable by mathrl and by transformers.
Configs: ` + strings.Join(qwen3.ConfigNames(), ", ") + `. The tiny ones have a 300-id vocabulary
for the byte-level tokenizer; the qwen3-* ones have the shapes of the released models.`,
		Example: `  mathrl model init --config tiny --out ./models/tiny
  mathrl model init --config qwen3-0.6b --out ./models/rand-0.6b --dtype bf16 --seed 3`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts.Log = cmd.ErrOrStderr()
			if runF == nil {
				runF = runModelInit
			}
			return runF(cmd.Context(), &opts)
		},
	}
	cmd.Flags().StringVar(&opts.Config, "config", "", "config name: "+strings.Join(qwen3.ConfigNames(), ", "))
	cmd.Flags().StringVar(&opts.Out, "out", "", "output folder")
	cmd.Flags().Uint64Var(&opts.Seed, "seed", 0, "random seed")
	cmd.Flags().StringVar(&opts.DType, "dtype", "", "stored dtype: bf16, f16 or f32 (default: the config's)")
	cmd.Flags().IntVar(&opts.VocabSize, "vocab-size", 0, "override the vocabulary size (e.g. to match a tokenizer)")
	cmd.MarkFlagRequired("config")
	cmd.MarkFlagRequired("out")
	return cmd
}

func runModelInit(_ context.Context, opts *modelInitOptions) error {
	cfg, err := qwen3.NamedConfig(opts.Config)
	if err != nil {
		return err
	}
	if opts.VocabSize != 0 {
		cfg.VocabSize = opts.VocabSize
	}
	stored, err := qwen3.StoredDType(opts.DType, cfg)
	if err != nil {
		return fmt.Errorf("model init: --dtype: %w", err)
	}
	fmt.Fprintf(opts.Log, "model init: %s, %.3g parameters, %s, seed %d\n", opts.Config, float64(cfg.Params()), stored, opts.Seed)
	return qwen3.WriteRandom(cfg, opts.Out, stored, opts.Seed)
}

// modelFlags are the flags of every command that runs a model.
type modelFlags struct {
	Model      string // checkpoint folder
	DType      string // compute dtype
	Backend    string // backend.Kinds
	PJRTPlugin string
}

func addModelFlags(cmd *cobra.Command, f *modelFlags) {
	cmd.Flags().StringVar(&f.Model, "model", "", "checkpoint folder (config.json + safetensors)")
	cmd.Flags().StringVar(&f.DType, "dtype", "f32", "compute dtype: f32 or bf16")
	addBackendFlags(cmd, f)
}

func addBackendFlags(cmd *cobra.Command, f *modelFlags) {
	defineBackendFlags(cmd.Flags(), &f.Backend, &f.PJRTPlugin)
}

// defineBackendFlags defines --backend and --pjrt-plugin on fs, writing into
// kind and plugin: the one definition of both flags, for every command that
// runs a model (train's recipe key backend included). The default of --backend
// is *kind, else auto.
func defineBackendFlags(fs *pflag.FlagSet, kind, plugin *string) {
	fs.StringVar(kind, "backend", cmp.Or(*kind, backend.Auto), knobHelp("backend"))
	fs.StringVar(plugin, "pjrt-plugin", "", pjrtPluginFlagHelp)
}

// knobHelp is the description of the recipe key key, the help of every flag
// that sets the same thing (--backend, eval's --rollout-engine), so that
// train and every other command say the same.
func knobHelp(key string) string {
	for _, k := range grpo.Knobs() {
		if k.Key == key {
			return k.Help
		}
	}
	panic("mathrl: grpo.Config has no knob " + key)
}

// pjrtPluginFlagHelp is the help of --pjrt-plugin.
const pjrtPluginFlagHelp = "PJRT plugin: the CUDA one for cuda and auto (default $MATHRL_PJRT_PLUGIN, else found in python3's site-packages), " +
	"the CPU one for xla-cpu (default $MATHRL_PJRT_CPU_PLUGIN, else found in .cache/pjrt-cpu or site-packages)"

// openBackend chooses and opens the backend (it may re-execute the program once
// to set LD_LIBRARY_PATH for the CUDA plugin).
func (f *modelFlags) openBackend(log io.Writer) (compute.Backend, backend.Plan, error) {
	return openBackend(f.Backend, f.PJRTPlugin, log)
}

// openBackend opens the backend of --backend and --pjrt-plugin and prints the
// one line that says which it is (and, where auto fell back to the pure Go
// backend, why).
func openBackend(kind, plugin string, log io.Writer) (compute.Backend, backend.Plan, error) {
	return openBackendOn(backend.Options{Kind: kind, PJRTPlugin: plugin}, log)
}

// openBackendOn is openBackend with every backend option (the device count of
// mathrl train).
func openBackendOn(opts backend.Options, log io.Writer) (compute.Backend, backend.Plan, error) {
	b, plan, err := backend.New(opts)
	if err != nil {
		return nil, plan, err
	}
	fmt.Fprintln(log, plan.Line())
	return b, plan, nil
}

// open opens the backend and loads the model.
func (f *modelFlags) open(log io.Writer) (compute.Backend, *qwen3.Model, error) {
	dtype, err := qwen3.ParseDType(f.DType)
	if err != nil {
		return nil, nil, err
	}
	b, _, err := f.openBackend(log)
	if err != nil {
		return nil, nil, err
	}
	m, err := qwen3.LoadOn(b, f.Model, dtype)
	if err != nil {
		return nil, nil, err
	}
	return b, m, nil
}
