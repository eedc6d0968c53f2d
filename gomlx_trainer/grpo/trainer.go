package grpo

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"time"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/pkg/core/dtypes"

	"github.com/mathrl/mathrl/analysis/metrics"
	"github.com/mathrl/mathrl/gomlx_trainer/qwen3"
	"github.com/mathrl/mathrl/gomlx_trainer/rollout"
	"github.com/mathrl/mathrl/gomlx_trainer/sampler"
)

// TrainOptions are the parts of a run that are not recipe knobs.
type TrainOptions struct {
	Backend    backends.Backend   // where the graphs run
	Resume     bool               // continue from the newest checkpoint in <save>/ckpt
	Progress   io.Writer          // progress bar and log lines (nil: none)
	Tools      rollout.ToolRunner // nil: a sandbox pool built from the config
	Provenance Provenance         // recorded in provenance.json
}

// ErrNonFinite is wrapped by Train's error when a loss or gradient norm is NaN
// or infinite; the last good checkpoint is left as it was.
var ErrNonFinite = errors.New("non-finite loss")

// Train runs GRPO as cfg says, in the run folder cfg.Save. It returns nil when
// every rollout is done, ctx's error after saving a checkpoint when ctx ends
// (Ctrl-C), and an error wrapping ErrNonFinite without saving when training
// diverges.
func Train(ctx context.Context, cfg Config, opt TrainOptions) error {
	log := newProgress(opt.Progress)
	if err := cfg.Validate(); err != nil {
		return err
	}
	run := RunFolder(cfg.Save)

	// --- policy and trainer state: fresh, or from the newest checkpoint
	var model *qwen3.Model
	var st TrainState
	if opt.Resume {
		dir, err := LatestCheckpoint(run.CkptDir())
		if err != nil {
			return err
		}
		if dir == "" {
			return fmt.Errorf("grpo: resume: no checkpoint in %s", run.CkptDir())
		}
		dtype := dtypes.Float32
		if cfg.DType == "bfloat16" {
			dtype = dtypes.BFloat16
		}
		if model, st, err = LoadCheckpoint(dir, dtype); err != nil {
			return err
		}
		if key := differingKey(cfg, st.Config); key != "" {
			return fmt.Errorf("grpo: resume: config key %s differs from the checkpoint's (only num_rollout, eval_interval, save_interval, keep_ckpts and backend may change)", key)
		}
		log.Printf("resumed from %s: rollout %d, step %d", dir, st.Rollout, st.Step)
	} else {
		if dir, _ := LatestCheckpoint(run.CkptDir()); dir != "" {
			return fmt.Errorf("grpo: %s already holds checkpoints: pass --resume to continue, or choose another --save", cfg.Save)
		}
		var err error
		if model, err = NewPolicy(cfg); err != nil {
			return err
		}
		st = TrainState{Config: cfg}
	}
	rngSrc := rand.NewPCG(uint64(cfg.Seed), 0x6772706f)
	if st.RNG != nil {
		if err := rngSrc.UnmarshalBinary(st.RNG); err != nil {
			return fmt.Errorf("grpo: resume: rng state: %w", err)
		}
	}
	rng := rand.New(rngSrc)

	// --- text side, tools, sampler, learner
	chat, err := NewChat(cfg, model.Config.VocabSize)
	if err != nil {
		return err
	}
	tools, isolation := opt.Tools, "injected"
	if tools == nil && (cfg.UseTools || cfg.SFTSteps > 0) {
		var closeTools func()
		if tools, closeTools, isolation, err = NewToolRunner(cfg); err != nil {
			return err
		}
		defer closeTools()
	}
	learner := NewLearner(opt.Backend, model,
		LossConfig{EpsLow: cfg.EpsClip, EpsHigh: cfg.EpsClipHigh, KLCoef: klCoef(cfg), KLType: cfg.KLLossType, EntropyCoef: cfg.EntropyCoef},
		AdamWConfig{Beta1: cfg.AdamBeta1, Beta2: cfg.AdamBeta2, Eps: cfg.AdamEps, WeightDecay: cfg.WeightDecay, ClipNorm: cfg.ClipGrad},
		cfg.RolloutTemperature)
	smp := sampler.New(opt.Backend, model)
	var ref *Learner // frozen initial policy for the KL penalty
	if klCoef(cfg) != 0 {
		refModel, err := NewPolicy(cfg)
		if err != nil {
			return err
		}
		ref = NewLearner(opt.Backend, refModel, LossConfig{}, AdamWConfig{}, cfg.RolloutTemperature)
	}

	// --- data: training prompts in a seeded order, evaluation prompts fixed
	train, err := LoadProblems(cfg.PromptData, arithTrainSize, uint64(cfg.Seed), cfg.arithTasks())
	if err != nil {
		return err
	}
	var evalSet []Problem
	if cfg.EvalPromptData != "" {
		n := cfg.EvalMaxPrompts
		if n == 0 {
			n = 64
		}
		if evalSet, err = LoadProblems(cfg.EvalPromptData, n, evalSeed(uint64(cfg.Seed)), cfg.arithTasks()); err != nil {
			return err
		}
		if cfg.EvalMaxPrompts > 0 && len(evalSet) > cfg.EvalMaxPrompts {
			evalSet = evalSet[:cfg.EvalMaxPrompts]
		}
	}
	data := newPromptStream(train, cfg.RolloutShuffle, uint64(cfg.Seed), st.DataEpoch, st.DataPosition)

	// --- run folder: config, provenance, metrics so far
	if err := run.Init(cfg, opt.Provenance.with(cfg, opt.Backend, isolation)); err != nil {
		return err
	}
	steps, err := run.ReadSteps(st.Step)
	if err != nil {
		return err
	}
	log.Printf("policy %s: %d parameters, vocabulary %d; %d training prompts, %d evaluation prompts",
		modelName(cfg), model.Config.Params(), model.Config.VocabSize, len(train), len(evalSet))
	log.Printf("samples per rollout: %d (%d prompts x %d); optimizer steps per rollout: %d; response budget %d tokens",
		cfg.Samples(), cfg.RolloutBatchSize, cfg.NSamplesPerPrompt, cfg.StepsPerRollout(), cfg.RolloutMaxResponseLen)

	save := func() error {
		st.Config, st.RNG = cfg, MarshalRNG(rngSrc)
		st.DataEpoch, st.DataPosition = data.epoch, data.pos
		dir := filepath.Join(run.CkptDir(), CheckpointName(st.Step))
		if err := SaveCheckpoint(dir, model, chat.JSON, st); err != nil {
			return err
		}
		log.Printf("checkpoint %s", dir)
		return PruneCheckpoints(run.CkptDir(), cfg.KeepCkpts)
	}
	evaluate := func() error {
		if len(evalSet) == 0 {
			return nil
		}
		t0 := time.Now()
		samples, err := Evaluate(ctx, smp, chat, tools, EvalOptions{
			ModelName: fmt.Sprintf("%s@step-%d", filepath.Base(cfg.Save), st.Step), Problems: evalSet,
			K: cfg.NSamplesPerEvalPrompt, Budget: cfg.EvalMaxResponseLen, Temperature: cfg.EvalTemperature,
			TopP: cfg.EvalTopP, Scorer: cfg.RMType, UseTools: cfg.UseTools, MaxTurns: cfg.MaxTurns,
			Seed: uint64(cfg.Seed), BatchSize: evalBatch(cfg),
		})
		if err != nil {
			return err
		}
		if err := WriteSamples(filepath.Join(run.SamplesDir(), CheckpointName(st.Step)+".jsonl"), samples); err != nil {
			return err
		}
		sum, err := metrics.Summarize(samples, cfg.NSamplesPerEvalPrompt)
		if err != nil {
			return err
		}
		if err := run.AppendEval(metrics.EvalPoint{Step: st.Step, Rollout: st.Rollout, AvgAtK: sum.AvgAtK, PassAtK: sum.PassAtK,
			K: sum.K, Truncation: sum.TruncationRate, ToolCalls: sum.ToolCallsMean, Errors: sum.Errors}); err != nil {
			return err
		}
		log.Printf("eval at step %d: avg@%d %.3f, pass@%d %.3f, truncated %.3f, tool calls %.2f (%.0fs)",
			st.Step, sum.K, sum.AvgAtK, sum.K, sum.PassAtK, sum.TruncationRate, sum.ToolCallsMean, time.Since(t0).Seconds())
		return nil
	}

	// --- supervised warm start on generated traces (once, before GRPO)
	if st.SFTStep < cfg.SFTSteps {
		if err := warmStart(ctx, cfg, &st, learner, chat, tools, train, log); err != nil {
			if ctx.Err() != nil { // Ctrl-C: save, then stop; --resume finishes the warm start
				if serr := save(); serr != nil {
					return serr
				}
			}
			return err
		}
		if err := ResetOptimizer(model.Ctx); err != nil {
			return err
		}
		if err := save(); err != nil {
			return err
		}
	}

	// --- GRPO: one rollout, then its optimizer steps, until num_rollout
	runStart := time.Now()
	for st.Rollout < cfg.NumRollout {
		if ctx.Err() != nil { // Ctrl-C: save, then stop
			if err := save(); err != nil {
				return err
			}
			return fmt.Errorf("grpo: interrupted after step %d (checkpoint saved): %w", st.Step, ctx.Err())
		}

		// --- evaluation every eval_interval rollouts
		if cfg.EvalInterval > 0 && st.Rollout%cfg.EvalInterval == 0 || st.Rollout == 0 {
			if err := evaluate(); err != nil {
				return err
			}
		}

		// --- rollouts: n_samples_per_prompt completions of rollout_batch_size prompts
		t0 := time.Now()
		var problems []Problem
		var prompts [][]int
		for len(problems) < cfg.RolloutBatchSize {
			p := data.next()
			ids, err := chat.PromptIDs(p.Text)
			if err != nil {
				return err
			}
			if len(ids) > cfg.RolloutMaxPromptLen {
				continue
			}
			problems = append(problems, p)
			for range cfg.NSamplesPerPrompt {
				prompts = append(prompts, ids)
			}
		}
		var samples []rollout.Sample
		var rstats rollout.Stats
		chunk := cfg.SamplingBatchSize
		if chunk <= 0 {
			chunk = len(prompts)
		}
		seed := rng.Uint64()
		for c := 0; c < len(prompts) && err == nil; c += chunk {
			var part []rollout.Sample
			var ps rollout.Stats
			part, ps, err = generate(ctx, smp, chat, tools, prompts[c:min(c+chunk, len(prompts))], genOptions{
				budget: cfg.RolloutMaxResponseLen, temperature: cfg.RolloutTemperature, topP: cfg.RolloutTopP,
				topK: cfg.RolloutTopK, useTools: cfg.UseTools, maxTurns: cfg.MaxTurns, concurrency: cfg.ToolConcurrency,
				seed: seed + uint64(c), toolDeadlineS: cfg.ToolTimeout + 5,
			})
			samples = append(samples, part...)
			rstats.GenerateSeconds += ps.GenerateSeconds
			rstats.ToolSeconds += ps.ToolSeconds
			rstats.SampledTokens += ps.SampledTokens
		}
		if err != nil {
			if ctx.Err() != nil {
				continue // saved and reported at the top of the loop
			}
			return err
		}
		rolloutSeconds := time.Since(t0).Seconds()

		// --- scores -> group advantages (dynamic sampling drops all-equal groups)
		t0 = time.Now()
		rewards := make([]float64, len(samples))
		var stats rolloutStats
		for i, s := range samples {
			p := problems[i/cfg.NSamplesPerPrompt]
			r := ScoreResponse(cfg.RMType, s.Text, p.Answer, s.ToolCalls)
			rewards[i] = r.Value
			stats.add(s, r)
		}
		scoreSeconds := time.Since(t0).Seconds()
		adv := GroupAdvantages(rewards, cfg.NSamplesPerPrompt, cfg.AdvantageEps, !cfg.DisableGRPOStdNormalization)
		keep := make([]int, 0, len(samples))
		groups := KeepGroups(rewards, cfg.NSamplesPerPrompt)
		if !cfg.DynamicSampling {
			groups = groups[:0]
			for g := 0; g < cfg.RolloutBatchSize; g++ {
				groups = append(groups, g)
			}
		}
		for _, g := range groups {
			for i := g * cfg.NSamplesPerPrompt; i < (g+1)*cfg.NSamplesPerPrompt; i++ {
				keep = append(keep, i)
			}
		}
		seqs := make([]Sequence, len(keep))
		for j, i := range keep {
			s := samples[i]
			seqs[j] = Sequence{Prompt: prompts[i], Response: s.IDs, Mask: s.Mask, LogProbs: s.LogProbs, Advantage: adv[i]}
		}

		// --- loss, grads, clip, optimizer step: global_batch_size samples per step
		nSteps := max(len(seqs)/cfg.GlobalBatchSize, 1)
		if len(seqs) == 0 {
			nSteps = 0
			log.Printf("rollout %d: every group had equal rewards; no update", st.Rollout+1)
		}
		for k := 0; k < nSteps; k++ {
			t0 = time.Now()
			part := seqs[k*len(seqs)/nSteps : (k+1)*len(seqs)/nSteps]
			masks := make([][]float32, len(part))
			for i := range part {
				masks[i] = part[i].Mask
			}
			for i, w := range TokenWeights(masks, cfg.CalculatePerTokenLoss) {
				part[i].Weights = w
			}
			var ss StepStats
			tokens := 0
			for _, q := range part {
				tokens += len(q.Prompt) + len(q.Response)
			}
			micro := cfg.MicroBatchSize
			if micro <= 0 {
				micro = len(part)
			}
			for m := 0; m < len(part); m += micro {
				mb := part[m:min(m+micro, len(part))]
				b, err := PackBatch(mb)
				if err != nil {
					return err
				}
				if ref != nil {
					if b.RefLogProbs, err = ref.LogProbs(b.IDs, b.Targets); err != nil {
						return err
					}
				}
				s, err := learner.Accumulate(b)
				if err != nil {
					return err
				}
				ss.Add(s)
			}
			lr := LearningRate(st.Step, cfg.LRWarmupIters, cfg.LR)
			if math.IsNaN(ss.Loss) || math.IsInf(ss.Loss, 0) {
				return fmt.Errorf("grpo: step %d: loss is %v; stopping, the last good checkpoint is kept in %s: %w",
					st.Step+1, ss.Loss, run.CkptDir(), ErrNonFinite)
			}
			gradNorm, err := learner.Apply(lr)
			if err != nil {
				return err
			}
			if math.IsNaN(gradNorm) || math.IsInf(gradNorm, 0) {
				return fmt.Errorf("grpo: step %d: gradient norm is %v; stopping, the last good checkpoint is kept in %s: %w",
					st.Step+1, gradNorm, run.CkptDir(), ErrNonFinite)
			}
			st.Step++

			// --- one JSON line to train.jsonl
			m := stats.metrics(st.Step, ss, gradNorm, lr)
			m.RolloutSeconds = math.Max(rolloutSeconds-rstats.ToolSeconds, 0) / float64(nSteps)
			m.ToolSeconds = rstats.ToolSeconds / float64(nSteps)
			m.ScoreSeconds = scoreSeconds / float64(nSteps)
			m.TrainSeconds = time.Since(t0).Seconds()
			if rstats.GenerateSeconds > 0 {
				m.TokensPerSecond = float64(rstats.SampledTokens) / rstats.GenerateSeconds
			}
			if klCoef(cfg) != 0 && ss.Tokens > 0 {
				kl := ss.KLSum / ss.Tokens
				m.KL = &kl
			}
			// model FLOPs (matmuls only, 2 per weight per token forward, 6 forward+backward)
			params := float64(model.Config.Params())
			m.Extra = map[string]float64{
				"rollout": float64(st.Rollout + 1), "kept_samples": float64(len(seqs)), "scorer_errors": float64(stats.errors),
				"train_tokens": float64(tokens), "sampled_tokens": float64(rstats.SampledTokens) / float64(nSteps),
				"train_flops": 6 * params * float64(tokens), "rollout_flops": 2 * params * float64(rstats.SampledTokens) / float64(nSteps),
			}
			if stats.toolCalls > 0 {
				// calls that ran cleanly but printed nothing: what the demo's GRPO unlearns
				m.Extra["tool_no_output_rate"] = float64(stats.toolNoOutput) / float64(stats.toolCalls)
			}
			steps = append(steps, m)
			if err := run.WriteSteps(steps); err != nil {
				return err
			}
		}
		st.Rollout++
		log.Bar(st.Rollout, cfg.NumRollout, time.Since(runStart), fmt.Sprintf("step %d  reward %+.3f  acc %.3f  len %.0f  tools %.2f",
			st.Step, stats.rewardMean(), stats.accuracy(), stats.lenMean(), stats.toolsPerSample()))
		if len(samples) > 0 {
			log.Sample(problems[0].Text, samples[0].Text, rewards[0])
		}

		// --- checkpoint every save_interval rollouts
		if cfg.SaveInterval > 0 && st.Rollout%cfg.SaveInterval == 0 && st.Rollout < cfg.NumRollout {
			if err := save(); err != nil {
				return err
			}
		}
	}

	// --- final evaluation, checkpoint and figures
	if err := evaluate(); err != nil {
		return err
	}
	if err := save(); err != nil {
		return err
	}
	if err := run.Figures(filepath.Base(cfg.Save), steps); err != nil {
		log.Printf("figures: %v", err)
	}
	log.Printf("done: %d rollouts, %d optimizer steps in %s; run folder %s", st.Rollout, st.Step, time.Since(runStart).Round(time.Second), cfg.Save)
	return nil
}

// evalBatch is the number of sequences evaluated at once.
func evalBatch(cfg Config) int {
	if cfg.SamplingBatchSize > 0 {
		return cfg.SamplingBatchSize
	}
	return max(cfg.Samples(), 16)
}

// arithTrainSize is the number of generated training tasks (prompt_data arith).
const arithTrainSize = 20000

func klCoef(cfg Config) float64 {
	if !cfg.UseKLLoss {
		return 0
	}
	return cfg.KLLossCoef
}

func modelName(cfg Config) string {
	if cfg.TinyModel != "" {
		return "random " + cfg.TinyModel
	}
	return cfg.HFCheckpoint
}

// differingKey names the first knob, other than those a resumed run may
// change, whose value differs between a and b ("" when none).
func differingKey(a, b Config) string {
	free := map[string]bool{"num_rollout": true, "eval_interval": true, "save_interval": true, "keep_ckpts": true, "backend": true}
	va, vb := reflect.ValueOf(a), reflect.ValueOf(b)
	t := va.Type()
	for i := 0; i < t.NumField(); i++ {
		k := yamlKey(t.Field(i))
		if !free[k] && !reflect.DeepEqual(va.Field(i).Interface(), vb.Field(i).Interface()) {
			return k
		}
	}
	return ""
}

// promptStream hands out training problems in a seeded order, epoch after
// epoch; (epoch, pos) is its whole state.
type promptStream struct {
	problems   []Problem
	shuffle    bool
	seed       uint64
	epoch, pos int
	order      []int
}

func newPromptStream(problems []Problem, shuffle bool, seed uint64, epoch, pos int) *promptStream {
	s := &promptStream{problems: problems, shuffle: shuffle, seed: seed, epoch: epoch, pos: pos}
	s.order = s.orderOf(epoch)
	return s
}

func (s *promptStream) orderOf(epoch int) []int {
	order := make([]int, len(s.problems))
	for i := range order {
		order[i] = i
	}
	if s.shuffle {
		r := rand.New(rand.NewPCG(s.seed, uint64(epoch)))
		r.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
	}
	return order
}

func (s *promptStream) next() Problem {
	if s.pos >= len(s.order) {
		s.epoch, s.pos = s.epoch+1, 0
		s.order = s.orderOf(s.epoch)
	}
	p := s.problems[s.order[s.pos]]
	s.pos++
	return p
}

// rolloutStats sums what one rollout's samples did.
type rolloutStats struct {
	n, correct, errors, truncated int
	rewardSum, rewardSq           float64
	lenSum                        int
	lenMax                        int
	toolCalls, toolErrors         int
	toolNoOutput                  int
}

func (r *rolloutStats) add(s rollout.Sample, rw Reward) {
	r.n++
	if rw.Correct {
		r.correct++
	}
	if rw.Err != nil {
		r.errors++
	}
	if s.Finish == metrics.FinishLength {
		r.truncated++
	}
	r.rewardSum += rw.Value
	r.rewardSq += rw.Value * rw.Value
	r.lenSum += len(s.IDs)
	r.lenMax = max(r.lenMax, len(s.IDs))
	r.toolCalls += s.ToolCalls
	r.toolErrors += s.ToolErrors
	r.toolNoOutput += s.NoOutput
}

func (r *rolloutStats) rewardMean() float64     { return r.rewardSum / float64(max(r.n, 1)) }
func (r *rolloutStats) accuracy() float64       { return float64(r.correct) / float64(max(r.n, 1)) }
func (r *rolloutStats) lenMean() float64        { return float64(r.lenSum) / float64(max(r.n, 1)) }
func (r *rolloutStats) toolsPerSample() float64 { return float64(r.toolCalls) / float64(max(r.n, 1)) }

func (r *rolloutStats) metrics(step int, ss StepStats, gradNorm, lr float64) metrics.StepMetrics {
	mean := r.rewardMean()
	variance := math.Max(r.rewardSq/float64(max(r.n, 1))-mean*mean, 0)
	m := metrics.StepMetrics{
		Version: metrics.StepMetricsVersion, Step: step, Samples: r.n,
		RewardMean: mean, RewardStd: math.Sqrt(variance), Accuracy: r.accuracy(),
		ResponseLenMean: r.lenMean(), ResponseLenMax: r.lenMax,
		TruncationRate:     float64(r.truncated) / float64(max(r.n, 1)),
		ToolCallsPerSample: r.toolsPerSample(),
		Loss:               ss.Loss, GradNorm: gradNorm, LR: lr,
	}
	if r.toolCalls > 0 {
		m.ToolErrorRate = float64(r.toolErrors) / float64(r.toolCalls)
	}
	if ss.Tokens > 0 {
		m.ClipFraction = ss.ClipTokens / ss.Tokens
		m.Entropy = math.Max(ss.EntropySum/ss.Tokens, 0)
	}
	return m
}
