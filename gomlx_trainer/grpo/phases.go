package grpo

import (
	"context"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"time"

	"github.com/mathrl/mathrl/analysis/metrics"
	"github.com/mathrl/mathrl/gomlx_trainer/backend"
	"github.com/mathrl/mathrl/gomlx_trainer/toolloop"
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
	t.st.Config = t.cfg
	t.st.RNG, t.st.DataEpoch, t.st.DataPosition = t.resumePoint()
	dir, start := filepath.Join(t.run.CkptDir(), CheckpointName(t.st.Step)), time.Now()
	t.log.Printf("saving checkpoint %s (%d parameters)", dir, t.learner.params())
	var extra []extraFile
	if t.prm != nil {
		extra = append(extra, extraFile{prmFile, t.prm.variables()})
	}
	if err := t.learner.save(dir, t.tokJSON, t.st, t.marks, extra...); err != nil {
		return fmt.Errorf("grpo: checkpoint %s: %w", dir, err)
	}
	size, err := diskBytes(dir)
	if err != nil {
		return fmt.Errorf("grpo: checkpoint %s: %w", dir, err)
	}
	t.log.Printf("checkpoint %s: %s in %.1fs", dir, byteSize(size), time.Since(start).Seconds())
	return pruneCheckpoints(t.run.CkptDir(), t.cfg.KeepCkpts)
}

// offloadForSampling moves the learner's optimizer state to host memory
// before a sampling phase (offload_train), so that the key/value cache has
// its memory; the next step brings it back. async_rollouts samples while the
// steps run, so there the state stays.
func (t *trainer) offloadForSampling() error {
	if !t.cfg.OffloadTrain || t.cfg.AsyncRollouts {
		return nil
	}
	return t.learner.OffloadState()
}

// evaluate samples the evaluation prompts, writes their samples and adds a
// line to eval.jsonl.
func (t *trainer) evaluate(ctx context.Context) error {
	if len(t.evalSet) == 0 {
		return nil
	}
	if err := t.offloadForSampling(); err != nil {
		return err
	}
	if err := t.engine.Sync(ctx, t.st.Step); err != nil {
		return err
	}
	cfg, start := t.cfg, time.Now()
	t.log.Printf("eval at step %d: sampling %d prompts x %d", t.st.Step, len(t.evalSet), cfg.NSamplesPerEvalPrompt)
	t.marks.mark("eval step %d", t.st.Step)
	samples, err := Evaluate(ctx, t.engine, t.proto, t.tools, EvalOptions{
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

// draw is what sampling some prompt groups once produced: n_samples_per_prompt
// samples of each problem, problem by problem.
type draw struct {
	problems      []Problem            // one per group
	prompts       [][]int              // one per sample: its problem's prompt
	samples       []toolloop.Sample    // one per prompt
	gen           toolloop.Stats       // generation and tool times
	sampleSeconds float64              // wall time of the sampling
	compiled      backend.CompileStats // graphs the in-process engine compiled while sampling
}

// plus is d followed by o's groups.
func (d draw) plus(o draw) draw {
	d.problems = append(d.problems, o.problems...)
	d.prompts = append(d.prompts, o.prompts...)
	d.samples = append(d.samples, o.samples...)
	d.gen.GenerateSeconds += o.gen.GenerateSeconds
	d.gen.ToolSeconds += o.gen.ToolSeconds
	d.gen.SampledTokens += o.gen.SampledTokens
	d.sampleSeconds += o.sampleSeconds
	d.compiled = d.compiled.Add(o.compiled)
	return d
}

// scores are the rewards of a draw's samples and what the samples did.
type scores struct {
	rewards      []float64 // one per sample, the overlong penalty included
	verdicts     []Reward  // one per sample
	stats        batchStats
	scoreSeconds float64 // wall time of the scoring
}

// plus is s followed by o's samples.
func (s scores) plus(o scores) scores {
	s.rewards = append(s.rewards, o.rewards...)
	s.verdicts = append(s.verdicts, o.verdicts...)
	s.stats.merge(o.stats)
	s.scoreSeconds += o.scoreSeconds
	return s
}

// batch is the scored samples of one rollout, every draw of it (see
// drawBatch): what the later steps of the loop read.
type batch struct {
	draw
	scores
	step int // optimizer steps the sampling policy had taken: its weights' version
}

// sample draws the next groups prompts that fit rollout_max_prompt_len and
// generates n_samples_per_prompt responses to each, sampling_batch_size
// sequences at a time, for rollout (numbered from 1).
func (t *trainer) sample(ctx context.Context, rollout, groups int) (draw, error) {
	cfg, start := t.cfg, time.Now()
	compiledBefore, _ := t.compiled()
	var d draw
	for skipped := 0; len(d.problems) < groups; {
		p := t.data.next()
		ids, err := t.proto.PromptIDs(p.Text)
		if err != nil {
			return draw{}, err
		}
		if len(ids) > cfg.RolloutMaxPromptLen {
			if skipped++; skipped >= len(t.train) {
				return draw{}, fmt.Errorf("grpo: no training prompt fits rollout_max_prompt_len %d (e.g. %s: %d tokens)", cfg.RolloutMaxPromptLen, p.ID, len(ids))
			}
			continue
		}
		d.problems = append(d.problems, p)
		for range cfg.NSamplesPerPrompt {
			d.prompts = append(d.prompts, ids)
		}
	}
	chunk := cfg.SamplingBatchSize
	if chunk <= 0 {
		chunk = len(d.prompts)
	}
	seed := t.rng.Uint64()
	ph := t.log.phase(fmt.Sprintf("rollout %d", rollout), len(d.prompts), chunk, cfg.RolloutMaxResponseLen)
	for c := 0; c < len(d.prompts); c += chunk {
		t.marks.mark("sample rollout %d, data %d.%d, sequence %d", rollout, t.data.epoch, t.data.pos, c)
		part, stats, err := generate(ctx, t.rolloutEngine(), t.proto, t.tools, d.prompts[c:min(c+chunk, len(d.prompts))], genOptions{
			budget: cfg.RolloutMaxResponseLen, temperature: cfg.RolloutTemperature, topP: cfg.RolloutTopP,
			topK: cfg.RolloutTopK, useTools: cfg.UseTools, maxTurns: cfg.MaxTurns, concurrency: cfg.ToolConcurrency,
			seed: seed + uint64(c), toolDeadlineS: toolDeadline(cfg.ToolTimeout).Seconds(), progress: ph.batch(),
		})
		if err != nil {
			return draw{}, err
		}
		d = d.plus(draw{samples: part, gen: stats})
	}
	d.sampleSeconds = time.Since(start).Seconds()
	compiled, _ := t.compiled()
	d.compiled = compiled.Sub(compiledBefore)
	return d, nil
}

// score returns the rewards of d's samples (with the overlong penalty, when
// overlong_buffer_len is set) and sums up what they did.
func (t *trainer) score(d draw) scores {
	start := time.Now()
	cfg := t.cfg
	s := scores{rewards: make([]float64, len(d.samples)), verdicts: make([]Reward, len(d.samples))}
	for i, smp := range d.samples {
		rw := t.reward(smp.Text, d.problems[i/cfg.NSamplesPerPrompt].Answer, smp.ToolCalls)
		rw.Value += OverlongPenalty(len(smp.IDs), cfg.RolloutMaxResponseLen, cfg.OverlongBufferLen, cfg.OverlongPenaltyFactor)
		s.rewards[i], s.verdicts[i] = rw.Value, rw
		s.stats.add(smp, rw)
	}
	s.scoreSeconds = time.Since(start).Seconds()
	return s
}

// sequences turns b's samples into training sequences with their advantages,
// and returns the sample behind each sequence (kept) and the sequences; with
// dynamic sampling, groups whose rewards are all equal are left out, and at
// most rollout_batch_size groups are kept. With mask_truncated, responses cut
// at the length limit keep their place in the advantages but not in the loss.
func (t *trainer) sequences(b batch) (kept []int, seqs []Sequence) {
	cfg := t.cfg
	g := cfg.NSamplesPerPrompt
	groups := KeepGroups(b.rewards, g)
	if !cfg.DynamicSampling {
		groups = groups[:0]
		for k := range len(b.problems) {
			groups = append(groups, k)
		}
	}
	groups = groups[:min(len(groups), cfg.RolloutBatchSize)]
	var rewards []float64
	var tokens []int
	for _, k := range groups {
		for i := k * g; i < (k+1)*g; i++ {
			kept = append(kept, i)
			rewards = append(rewards, b.rewards[i])
			tokens = append(tokens, int(sum(b.samples[i].Mask)))
		}
	}
	if len(kept) == 0 {
		return kept, nil
	}
	adv := Advantages(cfg.AdvantageEstimator, rewards, g, tokens, cfg.AdvantageEps, !cfg.DisableGRPOStdNormalization)
	seqs = make([]Sequence, len(kept))
	for j, i := range kept {
		s := b.samples[i]
		mask := s.Mask
		if cfg.MaskTruncated && s.Finish == metrics.FinishLength {
			mask = make([]float32, len(s.Mask))
		}
		seqs[j] = Sequence{Prompt: b.prompts[i], Response: s.IDs, Mask: mask, LogProbs: s.LogProbs, Advantage: adv[j], Reward: b.rewards[i]}
	}
	return kept, seqs
}

func sum(x []float32) float64 {
	var s float64
	for _, v := range x {
		s += float64(v)
	}
	return s
}

// optimize takes the optimizer steps of one rollout on trained (the batch's
// sequences after correct, whose mismatch was mm), global_batch_size
// sequences each (stepParts), and appends one train.jsonl line per step,
// each with the clip fraction of the rollout's first step
// (first_step_clip_fraction, a rollout field). It returns the lines and the
// optimizer step that took each of trained.
func (t *trainer) optimize(b batch, trained []Sequence, mm mismatchStats) ([]metrics.StepMetrics, []int, error) {
	cfg := t.cfg
	if len(trained) == 0 && cfg.distillSFT() {
		t.log.Printf("rollout %d: the teacher answered no prompt correctly; no update", t.st.Rollout+1)
		return nil, nil, nil
	}
	if len(trained) == 0 {
		t.log.Printf("rollout %d: every group had equal rewards; no update", t.st.Rollout+1)
		return nil, nil, nil
	}
	parts := stepParts(trained, cfg.GlobalBatchSize)
	steps := make([]int, 0, len(trained))
	staleness := t.st.Step - b.step // optimizer steps between the sampling weights and this rollout's first update
	var lines []metrics.StepMetrics
	firstClip := 0.0 // the clip fraction of the rollout's first step
	for k, part := range parts {
		start := time.Now()
		_, compiledBefore := t.compiled()
		lr := LearningRate(t.st.Step, cfg.LRWarmupIters, cfg.LR)
		t.marks.mark("step %d", t.st.Step+1)
		o := t.stepOptions(lr)
		o.OnPolicy = k == 0 && !cfg.UseRolloutLogprobs // the weights correct recomputed the old log-probs with
		o.SFT = cfg.distillSFT()                       // the student's likelihood of the teacher's correct samples
		ss, gradNorm, err := t.learner.Step(part, o)
		if errors.Is(err, ErrNonFinite) {
			return nil, nil, fmt.Errorf("grpo: step %d: %w; stopping, the last good checkpoint is kept in %s", t.st.Step+1, err, t.run.CkptDir())
		}
		if err != nil {
			return nil, nil, err
		}
		t.st.Step++
		for range part {
			steps = append(steps, t.st.Step)
		}
		m := t.stepMetrics(b, mm, part, len(trained), len(parts), staleness, ss, gradNorm, lr)
		if k == 0 {
			firstClip = m.ClipFraction
		}
		m.Extra["first_step_clip_fraction"] = firstClip
		m.TrainSeconds = time.Since(start).Seconds()
		_, compiled := t.compiled()
		m.TrainCompileSeconds, m.TrainCompiles = compileFields(compiled.Sub(compiledBefore), 1)
		t.steps = append(t.steps, m)
		if err := t.run.AppendStep(m); err != nil {
			return nil, nil, err
		}
		lines = append(lines, m)
	}
	return lines, steps, nil
}

// stepParts cuts a rollout's kept sequences into those of its optimizer
// steps: len(seqs)/globalBatch runs of consecutive sequences (at least one),
// as even as the count allows.
func stepParts(seqs []Sequence, globalBatch int) [][]Sequence {
	n := max(len(seqs)/globalBatch, 1)
	parts := make([][]Sequence, n)
	for k := range n {
		parts[k] = seqs[k*len(seqs)/n : (k+1)*len(seqs)/n]
	}
	return parts
}

// stepOptions are the options of a GRPO optimizer step at learning rate lr;
// the log-probs correct recomputes are cut by the same ones. FlowRL's loss
// is a mean over sequences, whatever calculate_per_token_loss says.
func (t *trainer) stepOptions(lr float64) StepOptions {
	perToken := t.cfg.CalculatePerTokenLoss && t.cfg.AdvantageEstimator != "flowrl"
	return StepOptions{PerTokenLoss: perToken, MicroBatch: t.cfg.MicroBatchSize,
		MaxTokens: t.cfg.MaxTokensPerMicroBatch, LR: lr}
}

// stepMetrics is the train.jsonl line of the optimizer step just taken on
// part, one of the rollout's n steps on its kept sequences (times and counts
// of the batch b are shared out evenly between the steps; mm is the
// mismatch of the kept sequences, staleness the optimizer steps the policy
// had taken past b's weights when the rollout's first step began).
func (t *trainer) stepMetrics(b batch, mm mismatchStats, part []Sequence, kept, n, staleness int, ss StepStats, gradNorm, lr float64) metrics.StepMetrics {
	m := b.stats.metrics(t.st.Step, ss, gradNorm, lr)
	per := float64(n)
	m.RolloutSeconds = math.Max(b.sampleSeconds-b.gen.ToolSeconds, 0) / per
	m.ToolSeconds = b.gen.ToolSeconds / per
	m.ScoreSeconds = b.scoreSeconds / per
	if t.localRollouts { // servers compile out of sight
		m.RolloutCompileSeconds, m.RolloutCompiles = compileFields(b.compiled, per)
	}
	if b.gen.GenerateSeconds > 0 {
		m.TokensPerSecond = float64(b.gen.SampledTokens) / b.gen.GenerateSeconds
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
		"rollout": float64(t.st.Rollout + 1), "kept_samples": float64(kept), "scorer_errors": float64(b.stats.errors),
		"train_tokens": float64(tokens), "sampled_tokens": float64(b.gen.SampledTokens) / per,
		"train_flops": 6 * params * float64(tokens), "rollout_flops": 2 * params * float64(b.gen.SampledTokens) / per,
		"rollout_weight_version": float64(b.step), "rollout_staleness": float64(staleness),
	}
	if kl, ok := reverseKL(part); ok {
		m.Extra["distill_reverse_kl"] = kl // mean log π_student − log π_teacher over the step's sampled tokens
	}
	if t.cfg.distillSFT() {
		m.Extra["imitated_samples"] = float64(len(part)) // the teacher's correct samples this step trained on
	}
	if t.prmStats != nil { // the PRM's update on this rollout, the same on each of its steps
		m.Extra["prm_loss"], m.Extra["prm_accuracy"], m.Extra["prm_reward_mean"] = t.prmStats.loss, t.prmStats.accuracy, t.prmStats.rewardMean
	}
	if ss.Tokens > 0 {
		m.Extra["ratio_mean"] = ss.RatioSum / ss.Tokens // mean π/π_old over the step's sampled tokens (FlowRL: of the sequence ratios, per token)
	}
	if t.cfg.AdvantageEstimator == "flowrl" && !t.cfg.flowRLHead() && len(part) > 0 { // the head's log Z lives in the loss graph
		var z float64
		for _, q := range part {
			z += q.LogZ
		}
		m.Extra["flowrl_log_z_mean"] = z / float64(len(part))
	}
	if t.cfg.DynamicSampling {
		m.Extra["groups_drawn"] = float64(len(b.problems))
		m.Extra["groups_kept"] = float64(kept / t.cfg.NSamplesPerPrompt)
	}
	if mm.measured {
		m.Extra["train_rollout_logprob_abs_diff"] = mm.meanAbsDiff
		m.Extra["train_rollout_logprob_abs_diff_max"] = mm.maxAbsDiff
		if t.cfg.UseTIS {
			m.Extra["tis_weight_mean"] = mm.isWeightMean
		}
		if t.cfg.TISSeqMaskHigh > 0 {
			m.Extra["tis_seq_masked"] = float64(mm.maskedSeqs)
		}
	}
	if b.stats.toolCalls > 0 {
		// calls that ran cleanly but printed nothing: what the demo's GRPO unlearns
		m.Extra["tool_no_output_rate"] = float64(b.stats.toolNoOutput) / float64(b.stats.toolCalls)
	}
	return m
}

// compileFields are train.jsonl's seconds and count of the graphs c, shared
// out between n steps.
func compileFields(c backend.CompileStats, n float64) (seconds, graphs *float64) {
	s, g := c.Seconds/n, float64(c.Graphs)/n
	return &s, &g
}

// report writes the rollout's progress line and now and then a sample, and
// hands what the rollout did to the OnRollout hook.
func (t *trainer) report(b batch, seqs []Sequence, lines []metrics.StepMetrics, start time.Time) {
	s := b.stats
	t.log.Bar(t.st.Rollout, t.cfg.NumRollout, time.Since(start), fmt.Sprintf("step %d  reward %+.3f  acc %.3f  len %.0f  tools %.2f",
		t.st.Step, s.rewardMean(), s.accuracy(), s.lenMean(), s.toolsPerSample()))
	if len(b.samples) > 0 {
		t.log.Sample(b.problems[0].Text, b.samples[0].Text, b.rewards[0])
	}
	if t.onRollout != nil {
		t.onRollout(RolloutLog{Rollout: t.st.Rollout, Problems: b.problems, Samples: b.samples, Rewards: b.rewards, Sequences: seqs, Steps: lines})
	}
}
