package memplan

import (
	"fmt"

	"github.com/mathrl/mathrl/gomlx_trainer/grpo"
	"github.com/mathrl/mathrl/gomlx_trainer/qwen3"
)

// RecipeOf picks out of a recipe the numbers that decide its memory.
func RecipeOf(cfg grpo.Config) (Recipe, error) {
	dtype, err := qwen3.ParseDType(cfg.DType)
	if err != nil {
		return Recipe{}, err
	}
	rc := Recipe{
		DType: dtype, GlobalBatch: cfg.GlobalBatchSize, MicroBatch: cfg.MicroBatchSize,
		PromptLen: cfg.RolloutMaxPromptLen, ResponseLen: cfg.RolloutMaxResponseLen,
		RolloutSamples: cfg.Samples(), SamplingBatch: cfg.SamplingBatchSize, Tools: cfg.UseTools,
		Reference: cfg.UseKLLoss && cfg.KLLossCoef != 0, State: StateOf(cfg),
	}
	if cfg.NumDevices > 1 { // one device leaves them zero
		rc.Devices, rc.Sharding = cfg.NumDevices, cfg.Sharding
	}
	if cfg.EvalPromptData != "" {
		rc.EvalResponseLen = cfg.EvalMaxResponseLen
	}
	rc.MaxTokens, rc.LogProbChunk, rc.RecomputeLayers = cfg.MaxTokensPerMicroBatch, cfg.LogProbChunk, cfg.RecomputeLayers
	return rc, nil
}

// ModelOf is the shape of the recipe's policy, and its name: its tiny_model's built-in
// shape, else its hf_checkpoint's config.json.
func ModelOf(cfg grpo.Config) (qwen3.Config, string, error) {
	if cfg.TinyModel != "" {
		c, err := qwen3.NamedConfig(cfg.TinyModel)
		return c, cfg.TinyModel, err
	}
	c, err := qwen3.LoadConfig(cfg.HFCheckpoint)
	if err != nil {
		return c, "", fmt.Errorf("%w (pass --tiny-model with a built-in shape such as qwen3-8b to plan without the checkpoint)", err)
	}
	return c, cfg.HFCheckpoint, nil
}
