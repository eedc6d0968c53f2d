package grpo

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"

	"github.com/gomlx/compute"
	"github.com/gomlx/compute/dtypes"

	"github.com/mathrl/mathrl/analysis/metrics"
	"github.com/mathrl/mathrl/gomlx_trainer/backend"
	"github.com/mathrl/mathrl/gomlx_trainer/engine"
	"github.com/mathrl/mathrl/gomlx_trainer/engine/inprocess"
	"github.com/mathrl/mathrl/gomlx_trainer/precision"
	"github.com/mathrl/mathrl/gomlx_trainer/qwen3"
	"github.com/mathrl/mathrl/gomlx_trainer/tokenizer"
	"github.com/mathrl/mathrl/gomlx_trainer/toolloop"
)

// trainer is one run in progress: what Train builds once and its loop uses.
type trainer struct {
	cfg       Config
	log       *progress
	run       RunFolder
	reward    RewardFunc
	onRollout func(RolloutLog)

	learner *Learner      // the policy and its optimizer state
	teacher Teacher       // on-policy distillation's teacher (nil: none)
	engine  engine.Engine // samples the rollouts and evaluations
	proto   *tokenizer.Protocol
	tokJSON []byte // tokenizer.json, copied into checkpoints
	tools   toolloop.ToolRunner
	marks   *PhaseMarks // nil: none
	closers []func()

	prm *implicitPRM // the implicit PRM of process_reward implicit (nil: none)
	// teacherEngine samples the training rollouts from the teacher under
	// distill_mode sft (nil: the policy's engine samples them)
	teacherEngine engine.Engine
	prmStats      *prmStats // the PRM's update on the rollout being trained (nil: none)
	resumed       string    // the checkpoint folder the run resumed from ("": a fresh start)

	// compiles counts the graphs compiled on the run's backends; with
	// localRollouts the engine samples in process, on them
	compiles      *backend.Compiles
	localRollouts bool

	train   []Problem
	evalSet []Problem
	data    *promptStream

	ahead  *ahead // the next rollout's batch being drawn (async_rollouts), or nil
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
	t := &trainer{cfg: cfg, log: newProgress(opt.Progress), run: RunFolder(cfg.Save), reward: opt.Reward, onRollout: opt.OnRollout, marks: opt.PhaseMarks}
	if t.reward == nil {
		t.reward = ScorerReward(cfg.RMType)
	}
	if err := checkTeacherShape(cfg); err != nil { // before the policy's weights load
		return nil, err
	}
	model, err := t.loadPolicy(opt.Resume)
	if err != nil {
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
	isolation, err := t.setupModels(opt, model)
	if err != nil {
		return nil, err
	}
	if err := t.loadData(); err != nil {
		return nil, err
	}
	if err := t.run.Init(cfg, provenanceOf(opt.Provenance, cfg, opt.Backend, isolation)); err != nil {
		return nil, err
	}
	t.log.Printf("run folder %s", t.run.Abs())
	if t.steps, err = t.run.TruncateMetrics(t.st.Step); err != nil { // drop the lines of steps after the checkpoint, once
		return nil, err
	}
	t.log.Printf("policy %s: %d parameters, vocabulary %d; %d training prompts, %d evaluation prompts",
		modelName(cfg), model.Config.Params(), model.Config.VocabSize, len(t.train), len(t.evalSet))
	t.log.Printf("samples per rollout: %d (%d prompts x %d); optimizer steps per rollout: %d; response budget %d tokens",
		cfg.Samples(), cfg.RolloutBatchSize, cfg.NSamplesPerPrompt, cfg.StepsPerRollout(), cfg.RolloutMaxResponseLen)
	ok = true
	return t, nil
}

// loadPolicy makes a fresh policy, or with resume loads the newest intact
// checkpoint of the run folder (the policy with its optimizer state) and its
// trainer state, which it sets in t.st. A resume that finds no
// checkpoint (a run stopped before its first save) starts the run; one that
// finds only damaged checkpoints fails (see resumeCheckpoint).
func (t *trainer) loadPolicy(resume bool) (*qwen3.Model, error) {
	cfg, ckptDir := t.cfg, t.run.CkptDir()
	if err := tidyCheckpoints(ckptDir, t.log); err != nil {
		return nil, err
	}
	dir := ""
	if resume {
		var err error
		if dir, err = resumeCheckpoint(ckptDir, t.log); err != nil {
			return nil, err
		}
		if dir == "" {
			t.log.Printf("resume: no checkpoint in %s yet; starting the run", ckptDir)
		}
	} else if latest, _ := LatestCheckpoint(ckptDir); latest != "" {
		return nil, fmt.Errorf("grpo: %s already holds checkpoints: pass --resume to continue, or choose another --save", cfg.Save)
	}
	if dir == "" {
		model, err := newPolicy(cfg)
		if err != nil {
			return nil, err
		}
		t.st = TrainState{Config: cfg}
		return model, nil
	}
	dtype, err := qwen3.ParseDType(cfg.DType)
	if err != nil {
		return nil, fmt.Errorf("grpo: config dtype: %w", err)
	}
	model, st, err := loadCheckpoint(dir, dtype)
	if err != nil {
		return nil, err
	}
	t.st, t.resumed = st, dir
	if key := differingKey(cfg, t.st.Config); key != "" {
		return nil, fmt.Errorf("grpo: resume: config key %s differs from the checkpoint's (only %s may change)", key, strings.Join(resumeFree, ", "))
	}
	t.log.Printf("resumed from %s: rollout %d, step %d", dir, t.st.Rollout, t.st.Step)
	return model, nil
}

// setupModels builds the chat protocol, the tools, and the engine and the
// learner of model (the learner with the frozen reference when the KL penalty
// is on), and the teacher of on-policy distillation when there is one. It returns the tools' isolation level.
func (t *trainer) setupModels(opt TrainOptions, model *qwen3.Model) (isolation string, err error) {
	cfg := t.cfg
	if t.proto, t.tokJSON, err = newProtocol(cfg, model.Config.VocabSize); err != nil {
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
	if t.tools != nil && t.marks != nil {
		t.tools = markedTools{t.tools, t.marks}
	}
	t.compiles, t.localRollouts = backend.NewCompiles(), cfg.engineConfig().Name == inprocess.Name
	b := t.watch(opt.Backend)
	if err := remaindersOnDevice(cfg, model.DType, backend.OnCUDA(b)); err != nil {
		return "", err
	}
	if cfg.flowRLHead() { // before the learner lists the trainable variables; a resumed run's head is already in the store
		if err := InitFlowRLHead(model.Store, model.Config.Hidden, cfg.FlowRLHeadLayers, uint64(cfg.Seed)); err != nil {
			return "", err
		}
	}
	t.learner = NewLearnerWith(b, model, lossConfig(cfg), adamConfig(cfg), cfg.RolloutTemperature, modelOptions(cfg))
	if err := t.learner.Shard(cfg.NumDevices, cfg.Sharding); err != nil {
		return "", err
	}
	if cfg.OptimizerCPUOffload {
		if err := t.offloadOptimizer(opt); err != nil {
			return "", err
		}
	}
	if t.engine, err = newEngine(cfg, b, model, t.learner.Mesh(), t.log); err != nil {
		return "", err
	}
	if cfg.Teacher != "" {
		if t.teacher, err = newTeacher(cfg, b, t.log); err != nil {
			return "", err
		}
		if cfg.distillSFT() {
			if t.teacherEngine, err = newTeacherEngine(cfg, b, t.teacher); err != nil {
				return "", err
			}
		}
	}
	if needsReference(cfg) {
		ref, err := newPolicy(cfg)
		if err != nil {
			return "", err
		}
		t.learner.WithReference(ref, cfg.RolloutTemperature)
	}
	if cfg.ProcessReward == "implicit" {
		if t.prm, err = newImplicitPRM(cfg, b, t.resumed); err != nil {
			return "", err
		}
	}
	return isolation, nil
}

// remaindersOnDevice refuses the remainder master (store_param_remainders)
// of bfloat16 weights whose update runs on a CUDA device: the check on an
// H200 (docs/gpu.md) found every remainder left 0 there, so the weights
// trained as if rounded to nearest. The float32 copy, or the update on the
// host (optimizer_cpu_offload with optimizer_offload_fraction 1, the 8B
// recipe's), keeps the master.
func remaindersOnDevice(cfg Config, dtype dtypes.DType, onCUDA bool) error {
	offloaded := cfg.OptimizerCPUOffload && cfg.OptimizerOffloadFraction >= 1
	if !onCUDA || dtype != dtypes.BFloat16 || offloaded || PrecisionOf(cfg).Master != precision.MasterRemainder {
		return nil
	}
	return fmt.Errorf("grpo: store_param_remainders: the remainder master is not yet correct on CUDA (every remainder was " +
		"found 0 after an optimizer step on an H200, so updates under half a bfloat16 ulp were lost; docs/gpu.md): set " +
		"store_param_remainders: false (a float32 copy, 2 more bytes a parameter) or optimizer_cpu_offload: true with " +
		"optimizer_offload_fraction: 1 (the update on the host)")
}

// offloadOptimizer moves the optimizer of optimizer_offload_fraction of the
// weights to the host backend (opt.HostBackend, else one opened here).
func (t *trainer) offloadOptimizer(opt TrainOptions) error {
	host := opt.HostBackend
	if host == nil {
		b, plan, err := backend.NewHost()
		if err != nil {
			return fmt.Errorf("grpo: optimizer_cpu_offload: %w", err)
		}
		t.closers = append(t.closers, b.Finalize)
		t.log.Printf("optimizer_cpu_offload: the update of %.0f%% of the parameters runs on the host: %s", 100*t.cfg.OptimizerOffloadFraction, plan.Line())
		host = b
	}
	return t.learner.OffloadOptimizer(t.watch(host), t.cfg.OptimizerOffloadFraction)
}

// watch is b with its compiles counted in t.compiles (nil stays nil).
func (t *trainer) watch(b compute.Backend) compute.Backend {
	if b == nil {
		return nil
	}
	return t.compiles.Watch(b)
}

// rolloutPackage is the in-process engine's package: the graphs its code
// asks for are the rollouts' (and the evaluations'), the others the learner's.
var rolloutPackage = reflect.TypeFor[inprocess.Engine]().PkgPath()

// compiled is what the run's backends have compiled so far: for the
// in-process engine's sampling, and the rest (the learner's steps).
func (t *trainer) compiled() (rollout, train backend.CompileStats) {
	return t.compiles.Split(rolloutPackage)
}

// lossConfig is the policy loss of a recipe.
func lossConfig(cfg Config) LossConfig {
	switch cfg.AdvantageEstimator {
	case "flowrl":
		lc := LossConfig{EpsLow: cfg.EpsClip, EpsHigh: cfg.EpsClipHigh, FlowRL: true, FlowBeta: cfg.FlowRLBeta}
		if cfg.flowRLHead() {
			lc.FlowLogZHead = cfg.FlowRLHeadLayers
		}
		return lc
	case "gspo":
		return LossConfig{EpsLow: cfg.GSPOEpsClip, EpsHigh: cfg.GSPOEpsClipHigh, KLCoef: klCoef(cfg), KLType: cfg.KLLossType,
			EntropyCoef: cfg.EntropyCoef, SequenceRatio: true}
	}
	return LossConfig{EpsLow: cfg.EpsClip, EpsHigh: cfg.EpsClipHigh, KLCoef: klCoef(cfg), KLType: cfg.KLLossType, EntropyCoef: cfg.EntropyCoef}
}

// modelOptions are the memory options of a recipe's training graphs.
func modelOptions(cfg Config) qwen3.ModelOptions {
	return qwen3.ModelOptions{Remat: cfg.RecomputeLayers, LogProbChunk: cfg.LogProbChunk}
}

// adamConfig is the optimizer of a recipe.
func adamConfig(cfg Config) AdamWConfig {
	return AdamWConfig{Beta1: cfg.AdamBeta1, Beta2: cfg.AdamBeta2, Eps: cfg.AdamEps, WeightDecay: cfg.WeightDecay, ClipNorm: cfg.ClipGrad,
		Precision: PrecisionOf(cfg)}
}

// PrecisionOf is the optimizer precision of a validated recipe: without
// use_precision_aware_optimizer, float32 state with a float32 master copy of
// 16-bit weights (Megatron's mixed precision); with it, the dtypes its keys
// give, and for bfloat16 weights the 16 low bits (store_param_remainders), a
// float32 copy, or no master (main_params_dtype bfloat16), rounded to nearest
// or at random (stochastic_rounding).
func PrecisionOf(cfg Config) precision.Optimizer {
	p := precision.Optimizer{Master: precision.MasterFloat32, Seed: uint32(cfg.Seed)}
	if !cfg.UsePrecisionAwareOptimizer {
		return p
	}
	dtype := func(s string) dtypes.DType {
		d, _ := qwen3.ParseDType(s) // validated: float32 or bfloat16
		return d
	}
	p.GradDType, p.ExpAvgDType, p.ExpAvgSqDType = dtype(cfg.MainGradsDType), dtype(cfg.ExpAvgDType), dtype(cfg.ExpAvgSqDType)
	switch {
	case cfg.MainParamsDType == "bfloat16" && cfg.StochasticRounding:
		p.Master = precision.MasterStochastic
	case cfg.MainParamsDType == "bfloat16":
		p.Master = precision.MasterNone
	case cfg.StoreParamRemainders:
		p.Master = precision.MasterRemainder
	}
	return p
}

// loadData loads the training prompts (in a seeded order that continues where
// the state left it) and the fixed evaluation prompts.
func (t *trainer) loadData() error {
	cfg := t.cfg
	var err error
	if t.train, err = loadProblems(cfg.PromptData, arithTrainSize, uint64(cfg.Seed), cfg.arithTasks()); err != nil {
		if t.train, err = t.smokeSample(cfg.PromptData, err); err != nil {
			return err
		}
	}
	if cfg.EvalPromptData != "" {
		if t.evalSet, err = loadEvalSet(cfg.EvalPromptData, cfg.EvalMaxPrompts, uint64(cfg.Seed), cfg.arithTasks()); err != nil {
			if t.evalSet, err = t.smokeSample(cfg.EvalPromptData, err); err != nil {
				return err
			}
		}
	}
	t.data = newPromptStream(t.train, cfg.RolloutShuffle, uint64(cfg.Seed), t.st.DataEpoch, t.st.DataPosition)
	return nil
}

// close ends the draw that is out, if any, then releases the tools.
func (t *trainer) close() {
	t.dropAhead()
	for _, c := range t.closers {
		c()
	}
	t.closers = nil
}
