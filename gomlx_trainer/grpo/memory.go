package grpo

import (
	"fmt"

	"github.com/mathrl/mathrl/gomlx_trainer/engine/inprocess"
	"github.com/mathrl/mathrl/gomlx_trainer/memplan"
	"github.com/mathrl/mathrl/gomlx_trainer/qwen3"
)

// MemoryRecipe picks out of the recipe the numbers that decide its memory,
// for the memory planner: with an in-process teacher, its parameters too
// (from its config.json).
func (cfg Config) MemoryRecipe() (memplan.Recipe, error) {
	dtype, err := qwen3.ParseDType(cfg.DType)
	if err != nil {
		return memplan.Recipe{}, err
	}
	rc := memplan.Recipe{
		DType: dtype, GlobalBatch: cfg.GlobalBatchSize, MicroBatch: cfg.MicroBatchSize,
		PromptLen: cfg.RolloutMaxPromptLen, ResponseLen: cfg.RolloutMaxResponseLen,
		RolloutSamples: cfg.Samples(), SamplingBatch: cfg.SamplingBatchSize, Tools: cfg.UseTools,
		Reference: needsReference(cfg), State: cfg.OptimizerState(),
	}
	if cfg.NumDevices > 1 { // one device leaves them zero
		rc.Devices, rc.Sharding = cfg.NumDevices, cfg.Sharding
	}
	if cfg.EvalPromptData != "" {
		rc.EvalResponseLen = cfg.EvalMaxResponseLen
	}
	rc.MaxTokens, rc.LogProbChunk, rc.RecomputeLayers = cfg.MaxTokensPerMicroBatch, cfg.LogProbChunk, cfg.RecomputeLayers
	if cfg.Teacher != "" && cfg.TeacherEngine == inprocess.Name { // a served teacher's weights are elsewhere
		tc, err := qwen3.LoadConfig(cfg.Teacher)
		if err != nil {
			return memplan.Recipe{}, fmt.Errorf("grpo: config teacher: %w", err)
		}
		rc.TeacherParams = tc.Params()
		if cfg.distillSFT() { // the teacher samples the rollouts
			rc.RolloutSampler = &tc
		}
	}
	return rc, nil
}

// PolicyShape is the shape of the recipe's policy, and its name: its
// tiny_model's built-in shape, else its hf_checkpoint's config.json.
func (cfg Config) PolicyShape() (qwen3.Config, string, error) {
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

// OptimizerState is the state the recipe's optimizer keeps, for the memory
// planner.
func (cfg Config) OptimizerState() memplan.State {
	st := memplan.State{Precision: PrecisionOf(cfg), OffloadTrain: cfg.OffloadTrain && !cfg.AsyncRollouts}
	if cfg.OptimizerCPUOffload {
		st.OffloadFraction = cfg.OptimizerOffloadFraction
	}
	if cfg.flowRLHead() {
		st.FlowRLHead = cfg.FlowRLHeadLayers
	}
	st.ImplicitPRM = cfg.ProcessReward == "implicit"
	return st
}
