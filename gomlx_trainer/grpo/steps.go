package grpo

import (
	"context"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"time"

	"github.com/mathrl/mathrl/analysis/metrics"
	"github.com/mathrl/mathrl/gomlx_trainer/rollout"
)

// warmStart runs the supervised warm start if the state has not finished it,
// then resets the optimizer and saves a checkpoint. Interrupted, it saves
// first (see stop), so that --resume finishes the warm start.
func (t *trainer) warmStart(ctx context.Context) error {
	if t.st.SFTStep >= t.cfg.SFTSteps {
		return nil
	}
	if err := runWarmStart(ctx, t.cfg, &t.st, t.learner, t.proto, t.tools, t.train, t.log); err != nil {
		return t.stop(ctx, err)
	}
	if err := t.learner.resetOptimizer(); err != nil {
		return err
	}
	return t.save()
}

// save writes a checkpoint of the current step and prunes old ones.
func (t *trainer) save() error {
	t.st.Config, t.st.RNG = t.cfg, marshalRNG(t.rngSrc)
	t.st.DataEpoch, t.st.DataPosition = t.data.epoch, t.data.pos
	dir, start := filepath.Join(t.run.CkptDir(), CheckpointName(t.st.Step)), time.Now()
	t.log.Printf("saving checkpoint %s (%d parameters)", dir, t.learner.params())
	if err := t.learner.save(dir, t.tokJSON, t.st, t.marks); err != nil {
		return fmt.Errorf("grpo: checkpoint %s: %w", dir, err)
	}
	size, err := diskBytes(dir)
	if err != nil {
		return fmt.Errorf("grpo: checkpoint %s: %w", dir, err)
	}
	t.log.Printf("checkpoint %s: %s in %.1fs", dir, byteSize(size), time.Since(start).Seconds())
	return pruneCheckpoints(t.run.CkptDir(), t.cfg.KeepCkpts)
}

// evaluate samples the evaluation prompts, writes their samples and adds a
// line to eval.jsonl.
func (t *trainer) evaluate(ctx context.Context) error {
	if len(t.evalSet) == 0 {
		return nil
	}
	cfg, start := t.cfg, time.Now()
	t.log.Printf("eval at step %d: sampling %d prompts x %d", t.st.Step, len(t.evalSet), cfg.NSamplesPerEvalPrompt)
	t.marks.mark("eval step %d", t.st.Step)
	samples, err := Evaluate(ctx, t.smp, t.proto, t.tools, EvalOptions{
		ModelName: fmt.Sprintf("%s@step-%d", filepath.Base(cfg.Save), t.st.Step), Problems: t.evalSet,
		K: cfg.NSamplesPerEvalPrompt, Budget: cfg.EvalMaxResponseLen, Temperature: cfg.EvalTemperature,
		TopP: cfg.EvalTopP, Scorer: cfg.RMType, UseTools: cfg.UseTools, MaxTurns: cfg.MaxTurns,
		Seed: uint64(cfg.Seed), BatchSize: evalBatch(cfg), Progress: t.log.w,
	})
	if err != nil {
		return err
	}
	if err := writeSamples(filepath.Join(t.run.SamplesDir(), CheckpointName(t.st.Step)+".jsonl"), samples); err != nil {
		return err
	}
	sum, err := metrics.Summarize(samples, cfg.NSamplesPerEvalPrompt)
	if err != nil {
		return err
	}
	if err := t.run.AppendEval(metrics.EvalPoint{Step: t.st.Step, Rollout: t.st.Rollout, AvgAtK: sum.AvgAtK, PassAtK: sum.PassAtK,
		K: sum.K, Truncation: sum.TruncationRate, ToolCalls: sum.ToolCallsMean, Errors: sum.Errors}); err != nil {
		return err
	}
	t.log.Printf("eval at step %d: avg@%d %.3f, pass@%d %.3f, truncated %.3f, tool calls %.2f (%.0fs)",
		t.st.Step, sum.K, sum.AvgAtK, sum.K, sum.PassAtK, sum.TruncationRate, sum.ToolCallsMean, time.Since(start).Seconds())
	return nil
}

// rolloutBatch is one rollout on its way through the loop.
type rolloutBatch struct {
	problems     []Problem        // rollout_batch_size problems
	prompts      [][]int          // one per sample: n_samples_per_prompt copies of each problem's prompt
	samples      []rollout.Sample // one per prompt
	gen          rollout.Stats    // generation and tool times
	seconds      float64          // wall time of the sampling
	rewards      []float64        // one per sample, set by score
	stats        rolloutStats     // set by score
	scoreSeconds float64          // wall time of the scoring
	drawn        int              // prompt groups drawn (more than problems' rollout_batch_size with dynamic sampling's further draws)
	mismatch     mismatchStats    // set by correct, before the first update
	step         int              // optimizer steps the sampling policy had taken, set by rollout
	verdicts     []Reward         // one per sample, set by score
	kept         []int            // the sample behind each sequence, set by sequences
	trained      []Sequence       // the sequences as the loss took them (after correct), set by optimize
	trainSteps   []int            // the optimizer step of each of trained, set by optimize
}

// sample draws the next groups prompts that fit rollout_max_prompt_len and
// generates n_samples_per_prompt responses to each, sampling_batch_size
// sequences at a time.
func (t *trainer) sample(ctx context.Context, groups int) (*rolloutBatch, error) {
	cfg, start := t.cfg, time.Now()
	r := &rolloutBatch{drawn: groups}
	for skipped := 0; len(r.problems) < groups; {
		p := t.data.next()
		ids, err := t.proto.PromptIDs(p.Text)
		if err != nil {
			return nil, err
		}
		if len(ids) > cfg.RolloutMaxPromptLen {
			if skipped++; skipped >= len(t.train) {
				return nil, fmt.Errorf("grpo: no training prompt fits rollout_max_prompt_len %d (e.g. %s: %d tokens)", cfg.RolloutMaxPromptLen, p.ID, len(ids))
			}
			continue
		}
		r.problems = append(r.problems, p)
		for range cfg.NSamplesPerPrompt {
			r.prompts = append(r.prompts, ids)
		}
	}
	chunk := cfg.SamplingBatchSize
	if chunk <= 0 {
		chunk = len(r.prompts)
	}
	seed := t.rng.Uint64()
	ph := t.log.phase(fmt.Sprintf("rollout %d", t.st.Rollout+1), len(r.prompts), chunk, cfg.RolloutMaxResponseLen)
	for c := 0; c < len(r.prompts); c += chunk {
		t.marks.mark("sample rollout %d, data %d.%d, sequence %d", t.st.Rollout+1, t.data.epoch, t.data.pos, c)
		part, stats, err := generate(ctx, t.smp, t.proto, t.tools, r.prompts[c:min(c+chunk, len(r.prompts))], genOptions{
			budget: cfg.RolloutMaxResponseLen, temperature: cfg.RolloutTemperature, topP: cfg.RolloutTopP,
			topK: cfg.RolloutTopK, useTools: cfg.UseTools, maxTurns: cfg.MaxTurns, concurrency: cfg.ToolConcurrency,
			seed: seed + uint64(c), toolDeadlineS: toolDeadline(cfg.ToolTimeout).Seconds(), progress: ph.batch(),
		})
		if err != nil {
			return nil, err
		}
		r.samples = append(r.samples, part...)
		r.gen.GenerateSeconds += stats.GenerateSeconds
		r.gen.ToolSeconds += stats.ToolSeconds
		r.gen.SampledTokens += stats.SampledTokens
	}
	r.seconds = time.Since(start).Seconds()
	return r, nil
}

// score sets the rewards of r's samples (with the overlong penalty, when
// overlong_buffer_len is set) and sums up what they did.
func (t *trainer) score(r *rolloutBatch) {
	start := time.Now()
	cfg := t.cfg
	r.rewards = make([]float64, len(r.samples))
	r.verdicts = make([]Reward, len(r.samples))
	for i, s := range r.samples {
		rw := t.reward(s.Text, r.problems[i/cfg.NSamplesPerPrompt].Answer, s.ToolCalls)
		rw.Value += OverlongPenalty(len(s.IDs), cfg.RolloutMaxResponseLen, cfg.OverlongBufferLen, cfg.OverlongPenaltyFactor)
		r.rewards[i], r.verdicts[i] = rw.Value, rw
		r.stats.add(s, rw)
	}
	r.scoreSeconds = time.Since(start).Seconds()
}

// sequences turns r's samples into training sequences with their
// advantages; with dynamic sampling, groups whose rewards are all equal are
// left out, and at most rollout_batch_size groups are kept. With
// mask_truncated, responses cut at the length limit keep their place in the
// advantages but not in the loss.
func (t *trainer) sequences(r *rolloutBatch) []Sequence {
	cfg := t.cfg
	g := cfg.NSamplesPerPrompt
	groups := KeepGroups(r.rewards, g)
	if !cfg.DynamicSampling {
		groups = groups[:0]
		for k := range len(r.problems) {
			groups = append(groups, k)
		}
	}
	groups = groups[:min(len(groups), cfg.RolloutBatchSize)]
	var kept []int // sample indices
	var rewards []float64
	var tokens []int
	for _, k := range groups {
		for i := k * g; i < (k+1)*g; i++ {
			kept = append(kept, i)
			rewards = append(rewards, r.rewards[i])
			tokens = append(tokens, int(sum(r.samples[i].Mask)))
		}
	}
	r.kept = kept
	if len(kept) == 0 {
		return nil
	}
	adv := Advantages(cfg.AdvantageEstimator, rewards, g, tokens, cfg.AdvantageEps, !cfg.DisableGRPOStdNormalization)
	seqs := make([]Sequence, len(kept))
	for j, i := range kept {
		s := r.samples[i]
		mask := s.Mask
		if cfg.MaskTruncated && s.Finish == metrics.FinishLength {
			mask = make([]float32, len(s.Mask))
		}
		seqs[j] = Sequence{Prompt: r.prompts[i], Response: s.IDs, Mask: mask, LogProbs: s.LogProbs, Advantage: adv[j]}
	}
	return seqs
}

func sum(x []float32) float64 {
	var s float64
	for _, v := range x {
		s += float64(v)
	}
	return s
}

// optimize takes the optimizer steps of one rollout, global_batch_size
// sequences each, and appends one train.jsonl line per step.
func (t *trainer) optimize(seqs []Sequence, r *rolloutBatch) ([]metrics.StepMetrics, error) {
	cfg := t.cfg
	n := max(len(seqs)/cfg.GlobalBatchSize, 1)
	if len(seqs) == 0 {
		t.log.Printf("rollout %d: every group had equal rewards; no update", t.st.Rollout+1)
		return nil, nil
	}
	seqs, mm, err := t.correct(seqs)
	if err != nil {
		return nil, err
	}
	r.mismatch, r.trained, r.trainSteps = mm, seqs, make([]int, len(seqs))
	var lines []metrics.StepMetrics
	for k := range n {
		start := time.Now()
		part := seqs[k*len(seqs)/n : (k+1)*len(seqs)/n]
		lr := LearningRate(t.st.Step, cfg.LRWarmupIters, cfg.LR)
		t.marks.mark("step %d", t.st.Step+1)
		ss, gradNorm, err := t.learner.Step(part, StepOptions{PerTokenLoss: cfg.CalculatePerTokenLoss,
			MicroBatch: cfg.MicroBatchSize, MaxTokens: cfg.MaxTokensPerMicroBatch, LR: lr})
		if errors.Is(err, ErrNonFinite) {
			return nil, fmt.Errorf("grpo: step %d: %w; stopping, the last good checkpoint is kept in %s", t.st.Step+1, err, t.run.CkptDir())
		}
		if err != nil {
			return nil, err
		}
		t.st.Step++
		for j := k * len(seqs) / n; j < (k+1)*len(seqs)/n; j++ {
			r.trainSteps[j] = t.st.Step
		}
		m := t.stepMetrics(r, part, len(seqs), n, ss, gradNorm, lr)
		m.TrainSeconds = time.Since(start).Seconds()
		t.steps = append(t.steps, m)
		if err := t.run.AppendStep(m); err != nil {
			return nil, err
		}
		lines = append(lines, m)
	}
	return lines, nil
}

// stepMetrics is the train.jsonl line of the optimizer step just taken on
// part, one of the rollout's n steps on its kept sequences (times and counts
// of the rollout are shared out evenly between the steps).
func (t *trainer) stepMetrics(r *rolloutBatch, part []Sequence, kept, n int, ss StepStats, gradNorm, lr float64) metrics.StepMetrics {
	m := r.stats.metrics(t.st.Step, ss, gradNorm, lr)
	per := float64(n)
	m.RolloutSeconds = math.Max(r.seconds-r.gen.ToolSeconds, 0) / per
	m.ToolSeconds = r.gen.ToolSeconds / per
	m.ScoreSeconds = r.scoreSeconds / per
	if r.gen.GenerateSeconds > 0 {
		m.TokensPerSecond = float64(r.gen.SampledTokens) / r.gen.GenerateSeconds
	}
	if klCoef(t.cfg) != 0 && ss.Tokens > 0 {
		kl := ss.KLSum / ss.Tokens
		m.KL = &kl
	}
	tokens := 0
	for _, q := range part {
		tokens += len(q.Prompt) + len(q.Response)
	}
	// model FLOPs (matmuls only, 2 per weight per token forward, 6 forward+backward)
	params := float64(t.learner.params())
	m.Extra = map[string]float64{
		"rollout": float64(t.st.Rollout + 1), "kept_samples": float64(kept), "scorer_errors": float64(r.stats.errors),
		"train_tokens": float64(tokens), "sampled_tokens": float64(r.gen.SampledTokens) / per,
		"train_flops": 6 * params * float64(tokens), "rollout_flops": 2 * params * float64(r.gen.SampledTokens) / per,
	}
	if t.cfg.DynamicSampling {
		m.Extra["groups_drawn"] = float64(r.drawn)
		m.Extra["groups_kept"] = float64(kept / t.cfg.NSamplesPerPrompt)
	}
	if mm := r.mismatch; mm.measured {
		m.Extra["train_rollout_logprob_abs_diff"] = mm.meanAbsDiff
		m.Extra["train_rollout_logprob_abs_diff_max"] = mm.maxAbsDiff
		if t.cfg.UseTIS {
			m.Extra["tis_weight_mean"] = mm.isWeightMean
		}
		if t.cfg.TISSeqMaskHigh > 0 {
			m.Extra["tis_seq_masked"] = float64(mm.maskedSeqs)
		}
	}
	if r.stats.toolCalls > 0 {
		// calls that ran cleanly but printed nothing: what the demo's GRPO unlearns
		m.Extra["tool_no_output_rate"] = float64(r.stats.toolNoOutput) / float64(r.stats.toolCalls)
	}
	return m
}

// report writes the rollout's progress line and now and then a sample, and
// hands the rollout to the OnRollout hook.
func (t *trainer) report(r *rolloutBatch, seqs []Sequence, lines []metrics.StepMetrics, start time.Time) {
	s := r.stats
	t.log.Bar(t.st.Rollout, t.cfg.NumRollout, time.Since(start), fmt.Sprintf("step %d  reward %+.3f  acc %.3f  len %.0f  tools %.2f",
		t.st.Step, s.rewardMean(), s.accuracy(), s.lenMean(), s.toolsPerSample()))
	if len(r.samples) > 0 {
		t.log.Sample(r.problems[0].Text, r.samples[0].Text, r.rewards[0])
	}
	if t.onRollout != nil {
		t.onRollout(RolloutLog{Rollout: t.st.Rollout, Problems: r.problems, Samples: r.samples, Rewards: r.rewards, Sequences: seqs, Steps: lines})
	}
}
