package memplan

import (
	"errors"
	"fmt"
	"io"

	"github.com/gomlx/compute/dtypes"

	"github.com/mathrl/mathrl/gomlx_trainer/layout"
	"github.com/mathrl/mathrl/gomlx_trainer/qwen3"
)

// ErrDoesNotFit is returned (wrapped) by callers whose plan is over its limit.
var ErrDoesNotFit = errors.New("memplan: the recipe does not fit")

// Recipe holds the numbers of a GRPO recipe (grpo.Config) that decide its
// memory, under the recipe's key names.
type Recipe struct {
	DType           dtypes.DType  // dtype
	GlobalBatch     int           // global_batch_size: sequences per optimizer step
	MicroBatch      int           // micro_batch_size; 0: the whole global batch
	MaxTokens       int           // max_tokens_per_micro_batch; > 0: rows per micro-batch = MaxTokens / padded length (at least 1)
	PromptLen       int           // rollout_max_prompt_len
	ResponseLen     int           // rollout_max_response_len
	RolloutSamples  int           // rollout_batch_size × n_samples_per_prompt
	SamplingBatch   int           // sampling_batch_size; 0: a whole rollout (evaluation: max(rollout, 16))
	EvalResponseLen int           // eval_max_response_len; 0: no evaluation
	Tools           bool          // use_tools: tool outputs are appended in chunks
	LogProbChunk    int           // logprob_chunk
	RecomputeLayers bool          // recompute_layers
	Reference       bool          // a frozen reference policy: use_kl_loss with a non-zero kl_loss_coef, or advantage_estimator flowrl
	TeacherParams   int64         // parameters of an in-process distillation teacher (teacher, teacher_engine builtin); 0: none
	RolloutSampler  *qwen3.Config // the shape of the model that samples the training rollouts when it is not the policy (distill_mode sft: the teacher); nil: the policy
	FusedAttention  bool          // the training step's attention is fused (see FusedAttention)
	Devices         int           // num_devices; 0 or 1: one device
	Sharding        string        // sharding: layout.Replicate, Data or FSDP
	State           State         // how the optimizer keeps its state (grpo.Config.OptimizerState)
}

// fsdp reports whether the recipe shards its state over several devices.
func (rc Recipe) fsdp() bool { return rc.Devices > 1 && rc.Sharding == layout.FSDP }

// devices is the recipe's device count, at least 1.
func (rc Recipe) devices() int { return max(rc.Devices, 1) }

// SeqLen is the padded length of the longest training sequence: prompt plus
// response, padded as grpo packs a batch (layout.PadLength).
func (rc Recipe) SeqLen() int { return layout.PadLength(rc.PromptLen + rc.ResponseLen) }

// Rows is the number of sequences in a micro-batch of the longest sequences.
func (rc Recipe) Rows() int {
	switch {
	case rc.MaxTokens > 0:
		return max(rc.MaxTokens/rc.SeqLen(), 1)
	case rc.MicroBatch > 0:
		return rc.MicroBatch
	}
	return rc.GlobalBatch
}

// step is the training step of a micro-batch of rows longest sequences.
func (rc Recipe) step(rows int) Step {
	return Step{DType: rc.DType, Rows: rows, SeqLen: rc.SeqLen(), LogProbChunk: rc.LogProbChunk,
		RecomputeLayers: rc.RecomputeLayers, Reference: rc.Reference, FusedAttention: rc.FusedAttention,
		Devices: rc.Devices, FSDP: rc.fsdp(), State: rc.State, TeacherParams: rc.TeacherParams}
}

// rollout and eval are the sampling sessions of batch sequences.
func (rc Recipe) rollout(batch int) Session {
	return Session{DType: rc.DType, Batch: batch, PromptLen: rc.PromptLen, ResponseLen: rc.ResponseLen,
		AppendChunks: rc.Tools, Training: true, Reference: rc.Reference,
		Devices: rc.Devices, FSDP: rc.fsdp(), State: rc.State, TeacherParams: rc.TeacherParams, Sampler: rc.RolloutSampler}
}

// eval is the evaluation's session: the policy samples it.
func (rc Recipe) eval(batch int) Session {
	s := rc.rollout(batch)
	s.ResponseLen, s.Sampler = rc.EvalResponseLen, nil
	return s
}

// samplingBatches are the rollout's and evaluation's sequences per session.
func (rc Recipe) samplingBatches() (rollout, eval int) {
	if rc.SamplingBatch > 0 {
		return rc.SamplingBatch, rc.SamplingBatch
	}
	return rc.RolloutSamples, max(rc.RolloutSamples, 16)
}

// Report is a recipe's memory plan.
type Report struct {
	Rules            Rules
	Devices          int       // devices the training step spreads over (the figures are the first one's)
	Sharding         string    // how: layout.Data or FSDP, with Devices > 1
	FusedAttention   bool      // the training step's attention is fused
	Limit            int64     // bytes the device may use
	SeqLen, Rows     int       // the micro-batch planned: Rows sequences of SeqLen tokens
	Train            Breakdown // peak of a training step
	Rollout          Breakdown // peak of a rollout's sampling session
	Eval             Breakdown // peak of an evaluation session (no terms: no evaluation)
	RolloutBatch     int       // sequences per rollout session
	EvalBatch        int       // sequences per evaluation session
	MaxRows          int       // largest micro-batch of SeqLen-token sequences that fits (0: none)
	MaxRowsPlain     int       // the same without recompute_layers
	MaxRowsRecompute int       // the same with recompute_layers
	MaxSamplingBatch int       // largest sampling_batch_size whose sessions fit (0: none)
	// MaxSamplingBatchKept is MaxSamplingBatch with the optimizer state kept
	// on the device while sampling (offload_train off), for comparison.
	MaxSamplingBatchKept int
	Host                 int64 // host memory the optimizer's offloaded state takes (Host)
}

// Plan predicts the peaks of a recipe on a model of shape cfg under rules r,
// and the largest micro-batch and sampling batch that fit in limit bytes.
func Plan(cfg qwen3.Config, rc Recipe, limit int64, r Rules) Report {
	rb, eb := rc.samplingBatches()
	rep := Report{Rules: r, Devices: rc.devices(), Sharding: rc.Sharding, FusedAttention: rc.FusedAttention, Limit: limit, SeqLen: rc.SeqLen(), Rows: rc.Rows(), RolloutBatch: rb, EvalBatch: eb}
	rep.Train = TrainStep(cfg, rc.step(rep.Rows), r)
	rep.Rollout = Sampling(cfg, rc.rollout(rb), r)
	if rc.EvalResponseLen > 0 {
		rep.Eval = Sampling(cfg, rc.eval(eb), r)
	}
	rep.MaxRows = maxRows(cfg, rc, limit, r)
	plain, recompute := rc, rc
	plain.RecomputeLayers, recompute.RecomputeLayers = false, true
	rep.MaxRowsPlain, rep.MaxRowsRecompute = maxRows(cfg, plain, limit, r), maxRows(cfg, recompute, limit, r)
	rep.MaxSamplingBatch = maxSamplingBatch(cfg, rc, limit, r)
	kept := rc
	kept.State.OffloadTrain = false
	rep.MaxSamplingBatchKept = maxSamplingBatch(cfg, kept, limit, r)
	rep.Host = Host(cfg, rc.DType, rc.State)
	return rep
}

// maxSamplingBatch is the largest sampling batch whose rollout and
// evaluation sessions fit in limit bytes (0: none).
func maxSamplingBatch(cfg qwen3.Config, rc Recipe, limit int64, r Rules) int {
	return largest(max(rc.RolloutSamples, 16), func(n int) bool {
		ok := Sampling(cfg, rc.rollout(n), r).Total() <= limit
		return ok && (rc.EvalResponseLen == 0 || Sampling(cfg, rc.eval(n), r).Total() <= limit)
	})
}

// maxRows is the largest micro-batch of the longest sequences whose training
// step fits in limit bytes, at most the global batch, a multiple of the
// devices (0: none).
func maxRows(cfg qwen3.Config, rc Recipe, limit int64, r Rules) int {
	n := rc.devices()
	return n * largest(max(rc.GlobalBatch/n, 1), func(k int) bool {
		return TrainStep(cfg, rc.step(k*n), r).Total() <= limit
	})
}

// largest returns the largest n in [1, hi] for which fits holds, assuming fits
// holds up to some n and no further; 0 when fits(1) is false.
func largest(hi int, fits func(int) bool) int {
	lo := 0 // fits(lo), or lo = 0
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if fits(mid) {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return lo
}

// Fits reports whether the training step and every sampling session fit.
func (rep Report) Fits() bool {
	return rep.Train.Total() <= rep.Limit && rep.Rollout.Total() <= rep.Limit && rep.Eval.Total() <= rep.Limit
}

// WriteTo writes the report as tables of GiB, one per phase, then the largest
// batches that fit and the verdict.
func (rep Report) WriteTo(w io.Writer) (int64, error) {
	cw := &countingWriter{w: w}
	attention := "decomposed ([B, heads, T, T] scores)"
	if rep.FusedAttention {
		attention = "fused (flash: no [B, heads, T, T] scores)"
	}
	fmt.Fprintf(cw, "memory plan (%s rules), device limit %s; training attention %s\n", rep.Rules, FormatGiB(rep.Limit), attention)
	if rep.Devices > 1 {
		fmt.Fprintf(cw, "%d devices, sharding %s: the figures are the first device's (it also runs the sampler)\n", rep.Devices, rep.Sharding)
	}
	title := fmt.Sprintf("training step: micro-batch of %d x %d tokens", rep.Rows, rep.SeqLen)
	if rep.Devices > 1 {
		title += fmt.Sprintf(", %d rows per device", rep.Rows/rep.Devices)
	}
	rep.table(cw, title, rep.Train)
	rep.table(cw, fmt.Sprintf("rollout sampling: %d sequences", rep.RolloutBatch), rep.Rollout)
	if len(rep.Eval.Terms) > 0 {
		rep.table(cw, fmt.Sprintf("evaluation sampling: %d sequences", rep.EvalBatch), rep.Eval)
	}
	fmt.Fprintf(cw, "\nlargest micro-batch at %d tokens: %d (%d tokens); without recompute_layers %d, with it %d\n",
		rep.SeqLen, rep.MaxRows, rep.MaxRows*rep.SeqLen, rep.MaxRowsPlain, rep.MaxRowsRecompute)
	fmt.Fprintf(cw, "largest sampling batch: %d", rep.MaxSamplingBatch)
	if rep.MaxSamplingBatchKept != rep.MaxSamplingBatch {
		fmt.Fprintf(cw, " (%d with the optimizer state kept on the device while sampling)", rep.MaxSamplingBatchKept)
	}
	fmt.Fprintln(cw)
	if rep.Host > 0 {
		fmt.Fprintf(cw, "host memory of the offloaded optimizer (master, moments, a copy of the weights): %s\n", FormatGiB(rep.Host))
	}
	verdict := "FITS"
	if !rep.Fits() {
		verdict = "DOES NOT FIT"
	}
	fmt.Fprintf(cw, "verdict: %s\n", verdict)
	return cw.n, cw.err
}

// table writes one breakdown: its terms, total and dominant term.
func (rep Report) table(w io.Writer, title string, b Breakdown) {
	fmt.Fprintf(w, "\n%s (peak in %s)\n", title, b.Phase)
	total := b.Total()
	for _, t := range b.Terms {
		fmt.Fprintf(w, "  %-22s %9.2f GiB %4.0f%%\n", t.Name, float64(t.Bytes)/GiB, 100*float64(t.Bytes)/float64(total))
	}
	status := "fits"
	if total > rep.Limit {
		status = "over the limit"
	}
	fmt.Fprintf(w, "  %-22s %9.2f GiB  %s\n", "total", float64(total)/GiB, status)
	fmt.Fprintf(w, "  dominant term: %s\n", b.Largest().Name)
}

// countingWriter counts the bytes written and keeps the first error, after
// which it writes nothing.
type countingWriter struct {
	w   io.Writer
	n   int64
	err error
}

func (c *countingWriter) Write(p []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	n, err := c.w.Write(p)
	c.n += int64(n)
	c.err = err
	return n, err
}
