package grpo

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"time"

	"github.com/gomlx/compute"

	"github.com/mathrl/mathrl/gomlx_trainer/engine"
	"github.com/mathrl/mathrl/gomlx_trainer/engine/inprocess"
	"github.com/mathrl/mathrl/gomlx_trainer/layout"
	"github.com/mathrl/mathrl/gomlx_trainer/qwen3"
	"github.com/mathrl/mathrl/gomlx_trainer/sandbox"
	"github.com/mathrl/mathrl/gomlx_trainer/tokenizer"
	"github.com/mathrl/mathrl/gomlx_trainer/toolloop"
)

// newProtocol loads the tokenizer named by cfg (tokenizer: "bytes", a
// tokenizer.json path, or empty for the model folder's; a tiny stand-in of a
// byte-sized vocabulary takes "bytes") and returns the run's chat protocol with
// the tokenizer.json bytes that checkpoints keep.
func newProtocol(cfg Config, modelVocab int) (*tokenizer.Protocol, []byte, error) {
	tok, data, err := tokenizer.Open(policyTokenizer(cfg, modelVocab))
	if err != nil {
		return nil, nil, fmt.Errorf("grpo: %w", err)
	}
	if tok.VocabSize() > modelVocab {
		return nil, nil, fmt.Errorf("grpo: tokenizer has %d ids, the model's vocabulary only %d", tok.VocabSize(), modelVocab)
	}
	proto, err := tokenizer.NewProtocol(tok, cfg.SystemPrompt, cfg.UseTools, cfg.OfferToolSpec)
	if err != nil {
		return nil, nil, fmt.Errorf("grpo: %w", err)
	}
	return proto, data, nil
}

// policyTokenizer is the tokenizer spec (tokenizer.Open) of the policy:
// tokenizer, else bytes for a tiny_model of fewer than 1000 ids, else
// hf_checkpoint's tokenizer.json.
func policyTokenizer(cfg Config, modelVocab int) string {
	switch {
	case cfg.Tokenizer != "":
		return cfg.Tokenizer
	case cfg.TinyModel != "" && modelVocab < 1000:
		return "bytes"
	}
	return filepath.Join(cfg.HFCheckpoint, "tokenizer.json")
}

// newEngine returns the engine rollout_engine names: the in-process sampler
// of model on b (on the learner's mesh, when it has one; with
// async_rollouts, of a copy of model that each sync refreshes, so that it
// samples while model trains), or a client of rollout_engine_urls that
// pushes model's weights to the servers through weights_dir (taken-out
// workers reported to log), sending rollout_engine_api_key, else
// $MATHRL_ROLLOUT_API_KEY, with every request.
func newEngine(cfg Config, b compute.Backend, model *qwen3.Model, mesh *layout.Mesh, log *progress) (engine.Engine, error) {
	ec := cfg.engineConfig()
	if ec.Name != inprocess.Name && ec.WeightsDir == "" {
		ec.WeightsDir = RunFolder(cfg.Save).WeightsDir()
	}
	ec.Warn = func(msg string) { log.Printf("%s", msg) }
	eng, err := engine.New(ec, engine.Policy{
		Vocab:  model.Config.VocabSize,
		Save:   func(dir string) error { return model.Save(dir, savedDType(model)) },
		Untied: qwen3.UntiedFolder,
		Local:  inprocess.Local{Backend: b, Model: model, Mesh: mesh},
	})
	if err != nil {
		return nil, fmt.Errorf("grpo: rollout_engine: %w", err)
	}
	return eng, nil
}

// sandboxRunner adapts a sandbox.Pool to toolloop.ToolRunner; a program that
// exits with an error, times out or is killed counts as a failed call.
type sandboxRunner struct {
	pool *sandbox.Pool
}

func (r sandboxRunner) Run(ctx context.Context, code string) (toolloop.ToolOutput, error) {
	res, err := r.pool.Run(ctx, code)
	if err != nil {
		return toolloop.ToolOutput{}, err
	}
	failed := res.ExitCode != 0 || res.TimedOut || res.Killed
	return toolloop.ToolOutput{Text: res.ToolResponse(), Failed: failed, NoOutput: !failed && res.Stdout == "" && res.Stderr == ""}, nil
}

// A tool call's CPU time decides its verdict: RLIMIT_CPU at tool_timeout,
// rounded up to whole seconds, kills a program that computes too long, at the
// same point of its work however busy the machine is. The wall clock is only a
// backstop, for programs that wait (sleep, block): toolWallFactor times the
// CPU limit, at least toolWallMin. So a run's tool calls end the same way on a
// busy machine as on a quiet one, as long as the load slows a call less than
// toolWallFactor times.
const (
	toolWallFactor = 10
	toolWallMin    = 30 * time.Second
)

// toolLimits returns a tool call's CPU limit in seconds and its wall-clock backstop.
func toolLimits(toolTimeout float64) (cpuSeconds int, wall time.Duration) {
	cpuSeconds = max(1, int(math.Ceil(toolTimeout)))
	return cpuSeconds, max(toolWallMin, time.Duration(toolWallFactor*cpuSeconds)*time.Second)
}

// toolDeadline is how long the tool loop waits for a tool call: 5 s past
// the sandbox's own backstop, which therefore ends the call first.
func toolDeadline(toolTimeout float64) time.Duration {
	_, wall := toolLimits(toolTimeout)
	return wall + 5*time.Second
}

// newToolRunner starts the sandbox pool of a run; close releases the pool's
// cgroups once no call runs any more.
func newToolRunner(cfg Config) (tools toolloop.ToolRunner, close func(), isolation string, err error) {
	sc := sandbox.Default()
	sc.Workers = cfg.ToolConcurrency
	sc.CPUSeconds, sc.Timeout = toolLimits(cfg.ToolTimeout)
	pool, err := sandbox.NewPool(sc)
	if err != nil {
		return nil, nil, "", fmt.Errorf("grpo: sandbox: %w", err)
	}
	return sandboxRunner{pool: pool}, pool.Close, string(pool.Isolation().Level), nil
}

// newPolicy returns the run's initial policy: a random model of the tiny_model
// shape (seeded by cfg.Seed), or hf_checkpoint.
func newPolicy(cfg Config) (*qwen3.Model, error) {
	dtype, err := qwen3.ParseDType(cfg.DType)
	if err != nil {
		return nil, fmt.Errorf("grpo: config dtype: %w", err)
	}
	if cfg.TinyModel != "" {
		mc, err := qwen3.NamedConfig(cfg.TinyModel)
		if err != nil {
			return nil, fmt.Errorf("grpo: %w", err)
		}
		return qwen3.NewRandom(mc, dtype, uint64(cfg.Seed))
	}
	if _, err := os.Stat(cfg.HFCheckpoint); errors.Is(err, os.ErrNotExist) && !filepath.IsAbs(cfg.HFCheckpoint) {
		wd, _ := os.Getwd()
		return nil, fmt.Errorf("grpo: config hf_checkpoint %q: no such folder in %s (a relative folder is read from the working directory)", cfg.HFCheckpoint, wd)
	}
	return qwen3.Load(cfg.HFCheckpoint, dtype)
}
