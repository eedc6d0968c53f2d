package grpo

import (
	"fmt"
	"math/rand/v2"

	"github.com/mathrl/mathrl/analysis/metrics"
	"github.com/mathrl/mathrl/gomlx_trainer/qwen3"
	"github.com/mathrl/mathrl/gomlx_trainer/rollout"
	"github.com/mathrl/mathrl/gomlx_trainer/sampler"
	"github.com/mathrl/mathrl/gomlx_trainer/tokenizer"
)

// trainer is one run in progress: what Train builds once and its loop uses.
type trainer struct {
	cfg       Config
	log       *progress
	run       RunFolder
	reward    RewardFunc
	onRollout func(RolloutLog)

	model   *qwen3.Model
	learner *Learner
	smp     *sampler.Sampler
	proto   *tokenizer.Protocol
	tokJSON []byte // tokenizer.json, copied into checkpoints
	tools   rollout.ToolRunner
	closers []func()

	train   []Problem
	evalSet []Problem
	data    *promptStream

	st     TrainState
	rngSrc *rand.PCG
	rng    *rand.Rand
	steps  []metrics.StepMetrics // train.jsonl so far
}

// newTrainer loads or creates the policy and the trainer state, and sets up
// the text side, the tools, the sampler, the learner, the data and the run
// folder.
func newTrainer(cfg Config, opt TrainOptions) (*trainer, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	t := &trainer{cfg: cfg, log: newProgress(opt.Progress), run: RunFolder(cfg.Save), reward: opt.Reward, onRollout: opt.OnRollout}
	if t.reward == nil {
		t.reward = ScorerReward(cfg.RMType)
	}
	if err := t.loadPolicy(opt.Resume); err != nil {
		return nil, err
	}
	t.rngSrc = rand.NewPCG(uint64(cfg.Seed), 0x6772706f)
	if t.st.RNG != nil {
		if err := t.rngSrc.UnmarshalBinary(t.st.RNG); err != nil {
			return nil, fmt.Errorf("grpo: resume: rng state: %w", err)
		}
	}
	t.rng = rand.New(t.rngSrc)
	ok := false
	defer func() {
		if !ok {
			t.close()
		}
	}()
	isolation, err := t.setupModels(opt)
	if err != nil {
		return nil, err
	}
	if err := t.loadData(); err != nil {
		return nil, err
	}
	if err := t.run.Init(cfg, opt.Provenance.with(cfg, opt.Backend, isolation)); err != nil {
		return nil, err
	}
	if t.steps, err = t.run.TruncateMetrics(t.st.Step); err != nil { // drop the lines of steps after the checkpoint, once
		return nil, err
	}
	t.log.Printf("policy %s: %d parameters, vocabulary %d; %d training prompts, %d evaluation prompts",
		modelName(cfg), t.model.Config.Params(), t.model.Config.VocabSize, len(t.train), len(t.evalSet))
	t.log.Printf("samples per rollout: %d (%d prompts x %d); optimizer steps per rollout: %d; response budget %d tokens",
		cfg.Samples(), cfg.RolloutBatchSize, cfg.NSamplesPerPrompt, cfg.StepsPerRollout(), cfg.RolloutMaxResponseLen)
	ok = true
	return t, nil
}

// loadPolicy makes a fresh policy, or with resume loads the newest checkpoint
// of the run folder and its trainer state.
func (t *trainer) loadPolicy(resume bool) error {
	cfg := t.cfg
	if !resume {
		if dir, _ := LatestCheckpoint(t.run.CkptDir()); dir != "" {
			return fmt.Errorf("grpo: %s already holds checkpoints: pass --resume to continue, or choose another --save", cfg.Save)
		}
		model, err := newPolicy(cfg)
		if err != nil {
			return err
		}
		t.model, t.st = model, TrainState{Config: cfg}
		return nil
	}
	dir, err := LatestCheckpoint(t.run.CkptDir())
	if err != nil {
		return err
	}
	if dir == "" {
		return fmt.Errorf("grpo: resume: no checkpoint in %s", t.run.CkptDir())
	}
	dtype, err := qwen3.ParseDType(cfg.DType)
	if err != nil {
		return fmt.Errorf("grpo: config dtype: %w", err)
	}
	if t.model, t.st, err = LoadCheckpoint(dir, dtype); err != nil {
		return err
	}
	if key := differingKey(cfg, t.st.Config); key != "" {
		return fmt.Errorf("grpo: resume: config key %s differs from the checkpoint's (only num_rollout, eval_interval, save_interval, keep_ckpts and backend may change)", key)
	}
	t.log.Printf("resumed from %s: rollout %d, step %d", dir, t.st.Rollout, t.st.Step)
	return nil
}

// setupModels builds the chat protocol, the tools, the sampler and the
// learner (with the frozen reference when the KL penalty is on). It returns
// the tools' isolation level.
func (t *trainer) setupModels(opt TrainOptions) (isolation string, err error) {
	cfg := t.cfg
	if t.proto, t.tokJSON, err = newProtocol(cfg, t.model.Config.VocabSize); err != nil {
		return "", err
	}
	t.tools, isolation = opt.Tools, "injected"
	if t.tools == nil && (cfg.UseTools || cfg.SFTSteps > 0) {
		var closeTools func()
		if t.tools, closeTools, isolation, err = newToolRunner(cfg); err != nil {
			return "", err
		}
		t.closers = append(t.closers, closeTools)
	}
	t.learner = NewLearnerWith(opt.Backend, t.model, lossConfig(cfg), adamConfig(cfg), cfg.RolloutTemperature, modelOptions(cfg))
	t.smp = sampler.New(opt.Backend, t.model)
	if klCoef(cfg) != 0 {
		ref, err := newPolicy(cfg)
		if err != nil {
			return "", err
		}
		t.learner.WithReference(ref, cfg.RolloutTemperature)
	}
	return isolation, nil
}

// lossConfig is the policy loss of a recipe.
func lossConfig(cfg Config) LossConfig {
	return LossConfig{EpsLow: cfg.EpsClip, EpsHigh: cfg.EpsClipHigh, KLCoef: klCoef(cfg), KLType: cfg.KLLossType, EntropyCoef: cfg.EntropyCoef}
}

// modelOptions are the memory options of a recipe's training graphs.
func modelOptions(cfg Config) qwen3.ModelOptions {
	return qwen3.ModelOptions{Remat: cfg.RecomputeLayers, LogProbChunk: cfg.LogProbChunk}
}

// adamConfig is the optimizer of a recipe.
func adamConfig(cfg Config) AdamWConfig {
	return AdamWConfig{Beta1: cfg.AdamBeta1, Beta2: cfg.AdamBeta2, Eps: cfg.AdamEps, WeightDecay: cfg.WeightDecay, ClipNorm: cfg.ClipGrad}
}

// loadData loads the training prompts (in a seeded order that continues where
// the state left it) and the fixed evaluation prompts.
func (t *trainer) loadData() error {
	cfg := t.cfg
	var err error
	if t.train, err = loadProblems(cfg.PromptData, arithTrainSize, uint64(cfg.Seed), cfg.arithTasks()); err != nil {
		return err
	}
	if cfg.EvalPromptData != "" {
		n := cfg.EvalMaxPrompts
		if n == 0 {
			n = 64
		}
		if t.evalSet, err = loadProblems(cfg.EvalPromptData, n, evalSeed(uint64(cfg.Seed)), cfg.arithTasks()); err != nil {
			return err
		}
		if cfg.EvalMaxPrompts > 0 && len(t.evalSet) > cfg.EvalMaxPrompts {
			t.evalSet = t.evalSet[:cfg.EvalMaxPrompts]
		}
	}
	t.data = newPromptStream(t.train, cfg.RolloutShuffle, uint64(cfg.Seed), t.st.DataEpoch, t.st.DataPosition)
	return nil
}

// close releases the tools.
func (t *trainer) close() {
	for _, c := range t.closers {
		c()
	}
	t.closers = nil
}
