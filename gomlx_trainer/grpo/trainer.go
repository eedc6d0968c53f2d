package grpo

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"reflect"
	"slices"
	"time"

	"github.com/gomlx/compute"

	"github.com/mathrl/mathrl/analysis/metrics"
	"github.com/mathrl/mathrl/gomlx_trainer/engine"
	"github.com/mathrl/mathrl/gomlx_trainer/toolloop"
)

// TrainOptions are the parts of a run that are not recipe knobs.
type TrainOptions struct {
	Backend compute.Backend // where the graphs run
	// Resume continues from the newest intact checkpoint in <save>/ckpt,
	// passing over damaged ones (see VerifyCheckpoint); with no checkpoint
	// yet it starts the run, with only damaged ones it fails.
	Resume     bool
	Progress   io.Writer           // progress bar and log lines (nil: none)
	Tools      toolloop.ToolRunner // nil: a sandbox pool built from the config
	Provenance metrics.Provenance  // recorded in provenance.json
	// Reward scores the training samples (nil: the rm_type scorer), as slime's
	// --custom-rm-path does. Evaluations always use the rm_type scorer, so that
	// their numbers compare with `mathrl eval`.
	Reward RewardFunc
	// OnRollout, when set, is called after each rollout's optimizer steps
	// with what the rollout did.
	OnRollout func(RolloutLog)
	// PhaseMarks, when set, stops the run at each phase it enters, for crash
	// tests (see PhaseMarks).
	PhaseMarks *PhaseMarks
	// HostBackend runs the optimizer on the host CPU under
	// optimizer_cpu_offload (nil: opened as backend.NewHost does).
	HostBackend compute.Backend
}

// RolloutLog is what one rollout did: its samples, their rewards, the
// sequences its optimizer steps trained on (as the loss took them: old
// log-probs, masks and importance weights after correct) and the
// train.jsonl lines they wrote.
type RolloutLog struct {
	Rollout   int                   // 1 for the first rollout of the run
	Problems  []Problem             // rollout_batch_size problems
	Samples   []toolloop.Sample     // n_samples_per_prompt per problem, problem by problem
	Rewards   []float64             // one per sample
	Sequences []Sequence            // the samples kept (dynamic sampling), with their advantages and old log-probs (Learner.Step sets loss weights on its own copy)
	Steps     []metrics.StepMetrics // one per optimizer step
}

// ErrNonFinite is wrapped by Train's error when a loss or gradient norm is NaN
// or infinite; the last good checkpoint is left as it was.
var ErrNonFinite = errors.New("non-finite loss")

// Train runs GRPO as cfg says, in the run folder cfg.Save. It returns nil when
// every rollout is done, ctx's error after saving a checkpoint when ctx ends
// (Ctrl-C), and an error wrapping ErrNonFinite without saving when training
// diverges.
func Train(ctx context.Context, cfg Config, opt TrainOptions) error {
	t, err := newTrainer(cfg, opt)
	if err != nil {
		return err
	}
	defer t.close()

	// --- supervised warm start on generated traces (once, before GRPO)
	if err := t.warmStart(ctx); err != nil {
		return err
	}

	// --- GRPO: one rollout, then its optimizer steps, until num_rollout
	start := time.Now()
	for t.st.Rollout < cfg.NumRollout {
		if ctx.Err() != nil { // Ctrl-C: save, then stop
			return t.stop(ctx, ctx.Err())
		}

		// --- async_rollouts: this rollout's batch was drawn during the last one's optimizer steps
		b, drawn, err := t.awaitAhead()
		if err != nil {
			return t.stop(ctx, err)
		}

		// --- evaluation every eval_interval rollouts, and before the first
		if cfg.EvalInterval > 0 && t.st.Rollout%cfg.EvalInterval == 0 || t.st.Rollout == 0 {
			if err := t.evaluate(ctx); err != nil {
				return t.stop(ctx, err)
			}
		}

		// --- sample and score: n_samples_per_prompt completions of rollout_batch_size
		// prompts (and, with dynamic sampling's further draws, more groups)
		// the engine samples (this rollout, or with async_rollouts the next) from the policy as it is now
		if err := t.offloadForSampling(); err != nil {
			return t.stop(ctx, err)
		}
		if err := t.engine.Sync(ctx, t.st.Step); err != nil {
			return t.stop(ctx, err)
		}
		if !drawn {
			if b, err = t.drawBatch(ctx, t.st.Rollout+1, t.st.Step); err != nil {
				return t.stop(ctx, err)
			}
		}

		// --- async_rollouts: draw the next rollout's batch from these weights while this one trains
		if cfg.AsyncRollouts && t.st.Rollout+1 < cfg.NumRollout {
			t.drawAhead(ctx, t.st.Rollout+2, t.st.Step)
		}

		// --- advantages; dynamic sampling keeps the groups that differ
		kept, seqs := t.sequences(b)

		// --- what the steps train on: the policy's own samples with their corrections and advantages,
		// or under distill_mode sft the teacher's correct samples
		kept, trained, mm, err := t.trainingSequences(kept, seqs)
		if err != nil {
			return t.stop(ctx, err)
		}

		// --- optimize: global_batch_size samples per optimizer step, one train.jsonl line each
		begun := t.st.Step
		lines, trainSteps, err := t.optimize(b, trained, mm)
		if err != nil {
			return t.stop(ctx, err)
		}

		// --- token-level records of the batch every save_rollouts_every rollouts, the first and last included
		if err := t.writeRecords(b, begun, kept, trained, trainSteps); err != nil {
			return t.stop(ctx, err)
		}
		t.st.Rollout++
		t.report(b, trained, lines, start)

		// --- checkpoint every save_interval rollouts
		if cfg.SaveInterval > 0 && t.st.Rollout%cfg.SaveInterval == 0 && t.st.Rollout < cfg.NumRollout {
			if err := t.save(); err != nil {
				return err
			}
		}
	}

	// --- final evaluation, checkpoint and figures
	if err := t.evaluate(ctx); err != nil {
		return t.stop(ctx, err)
	}
	if err := t.save(); err != nil {
		return err
	}
	if len(t.steps) == 0 {
		t.log.Printf("no optimizer steps: no training figure")
	} else if err := t.run.Figures(filepath.Base(cfg.Save)); err != nil {
		t.log.Printf("figures: %v", err)
	}
	c := t.compiles.Total()
	t.log.Printf("done: %d rollouts, %d optimizer steps in %s; %d graphs compiled in %.1fs in all; run folder %s",
		t.st.Rollout, t.st.Step, time.Since(start).Round(time.Second), c.Graphs, c.Seconds, t.run.Abs())
	return nil
}

// stop ends the run on err. When ctx has ended (Ctrl-C) it first saves a
// checkpoint, whatever phase err came from (an evaluation, a rollout's
// sampling, the optimizer steps, the final evaluation), so that --resume loses
// none of the work done, and returns ctx's error. When no rollout worker is
// left (engine.ErrNoWorker, from the sync before a rollout or an evaluation)
// it saves too. Any other error, a diverged step among them, is returned as
// it is, with no save.
func (t *trainer) stop(ctx context.Context, err error) error {
	// a checkpoint saved now records the state before the draw that is out (see ahead)
	t.dropAhead()
	if errors.Is(err, engine.ErrNoWorker) { // raised before the rollout or evaluation draws anything
		if serr := t.save(); serr != nil {
			return serr
		}
		return fmt.Errorf("grpo: stopped after step %d (checkpoint saved): %w", t.st.Step, err)
	}
	if ctx.Err() == nil || errors.Is(err, ErrNonFinite) {
		return err
	}
	if serr := t.save(); serr != nil {
		return serr
	}
	return fmt.Errorf("grpo: interrupted after step %d (checkpoint saved): %w", t.st.Step, ctx.Err())
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

// klCoef is the weight of the recipe's KL penalty: kl_loss_coef with
// use_kl_loss, else 0.
func klCoef(cfg Config) float64 {
	if !cfg.UseKLLoss {
		return 0
	}
	return cfg.KLLossCoef
}

// needsReference reports whether the recipe's run keeps a frozen reference
// policy (a copy of the initial one) next to the policy: for the KL penalty
// (a non-zero klCoef), for FlowRL, whose residual holds log π_ref, and for
// implicit process rewards, which are log-ratios against it. The trainer
// loads it and `mathrl plan` counts its weights by this one rule.
func needsReference(cfg Config) bool {
	return klCoef(cfg) != 0 || cfg.AdvantageEstimator == "flowrl" || cfg.ProcessReward == "implicit"
}

// trainingSequences prepares a rollout's kept sequences for its optimizer
// steps: their old log-probs recomputed by the training graph (unless
// use_rollout_logprobs), TIS weights, sequence mask and mismatch (correct);
// FlowRL's reference log-probs and log Z; on-policy distillation's and
// implicit process rewards' per-token advantages. Under distill_mode sft,
// where the teacher sampled, they are its correct samples (imitationSequences).
// kept are the batch's indices of seqs; it returns those of the sequences
// returned.
func (t *trainer) trainingSequences(kept []int, seqs []Sequence) ([]int, []Sequence, mismatchStats, error) {
	if t.cfg.distillSFT() {
		kept, seqs = imitationSequences(kept, seqs)
		return kept, seqs, mismatchStats{}, nil
	}
	trained, mm, err := t.correct(seqs)
	if err != nil {
		return nil, nil, mm, err
	}
	if t.cfg.AdvantageEstimator == "flowrl" && len(trained) > 0 {
		if trained, err = t.flowPartition(trained); err != nil {
			return nil, nil, mm, err
		}
	}
	if trained, err = t.distill(trained); err != nil {
		return nil, nil, mm, err
	}
	trained, err = t.processAdvantages(trained)
	return kept, trained, mm, err
}

func modelName(cfg Config) string {
	if cfg.TinyModel != "" {
		return "random " + cfg.TinyModel
	}
	return cfg.HFCheckpoint
}

// resumeFree are the knobs a resumed run may change: how long it runs, how
// often it evaluates, saves and writes records, how many checkpoints it
// keeps, where it computes (the backend, its devices and how they share
// the step: a checkpoint holds whole tensors, and checkpoints written before
// num_devices and sharding existed read them as 0 and "") and where and when
// it samples (the engines sample the same tokens from the same seeds; a
// resumed run samples its first rollout from the checkpoint's weights with
// or without async_rollouts; the servers' API key is never saved), and which
// servers serve the teacher (teacher_urls; the teacher itself may not
// change). Any other must equal the checkpoint's.
var resumeFree = []string{"num_rollout", "eval_interval", "save_interval", "keep_ckpts", "backend", "num_devices", "sharding",
	"save_rollouts_every", "save_rollouts_groups", "rollout_engine", "rollout_engine_urls", "weights_dir", "async_rollouts",
	"rollout_engine_api_key", "teacher_urls"}

// differingKey names the first knob, other than resumeFree, whose value
// differs between a and b ("" when none).
func differingKey(a, b Config) string {
	va, vb := reflect.ValueOf(a), reflect.ValueOf(b)
	t := va.Type()
	for i := 0; i < t.NumField(); i++ {
		k := yamlKey(t.Field(i))
		if !slices.Contains(resumeFree, k) && !reflect.DeepEqual(va.Field(i).Interface(), vb.Field(i).Interface()) {
			return k
		}
	}
	return ""
}
