package bench

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/gomlx/compute"
	"github.com/gomlx/compute/dtypes"
	. "github.com/gomlx/gomlx/core/graph" //nolint:revive // GoMLX's graph DSL reads best dot-imported
	mlmodel "github.com/gomlx/gomlx/ml/model"

	"github.com/mathrl/mathrl/gomlx_trainer/gomlxfix"
	"github.com/mathrl/mathrl/gomlx_trainer/grpo"
	"github.com/mathrl/mathrl/gomlx_trainer/qwen3"
	"github.com/mathrl/mathrl/gomlx_trainer/sampler"
)

// Options says what to measure.
type Options struct {
	Batch       int     // training: sequences per step
	SeqLen      int     // training: tokens per sequence
	DecodeBatch int     // decoding: prompts decoded together; 0: Batch
	PromptLen   int     // decoding: prompt tokens; 0: SeqLen
	NewTokens   int     // decoding: tokens generated per sequence
	Temperature float64 // decoding: 0 is greedy
	TrainSteps  int     // timed training steps (after one that compiles)
	Train       bool    // measure the training step
	Decode      bool    // measure decoding
	// SkipWholeCache leaves out the second decoding run, with the whole cache
	// allocated from the start.
	SkipWholeCache bool
	Seed           uint64             // token ids are drawn from this seed
	Model          qwen3.ModelOptions // how the training graph is built (fused or decomposed attention, ...)
	// Roofline, when set, is the machine's limits the rates are read against
	// (MFU, MBU); nil: the rates alone.
	Roofline *Roofline
	// AdamW is the training step's optimizer (grpo.ApplyAdamW, as the GRPO
	// trainer applies it) and LR its learning rate; a zero LR takes both from
	// TrainerAdamW.
	AdamW grpo.AdamWConfig
	LR    float64
}

// TrainerAdamW returns the GRPO trainer's default AdamW settings and learning
// rate (grpo.Default).
func TrainerAdamW() (grpo.AdamWConfig, float64) {
	d := grpo.Default()
	return grpo.AdamWConfig{Beta1: d.AdamBeta1, Beta2: d.AdamBeta2, Eps: d.AdamEps, WeightDecay: d.WeightDecay,
		ClipNorm: d.ClipGrad}, d.LR
}

// withDefaults fills the zero fields that have defaults.
func (o Options) withDefaults() Options {
	if o.DecodeBatch == 0 {
		o.DecodeBatch = o.Batch
	}
	if o.PromptLen == 0 {
		o.PromptLen = o.SeqLen
	}
	if o.LR == 0 {
		o.AdamW, o.LR = TrainerAdamW()
	}
	return o
}

// validate checks the sizes of the parts to be measured, naming the field.
func (o Options) validate() error {
	bad := func(field string, v, least int) error {
		return fmt.Errorf("bench: %s %d, want >= %d", field, v, least)
	}
	switch {
	case o.Train && o.Batch < 1:
		return bad("batch", o.Batch, 1)
	case o.Train && o.SeqLen < 2:
		return bad("seq_len", o.SeqLen, 2)
	case o.Decode && o.DecodeBatch < 1:
		return bad("decode_batch", o.DecodeBatch, 1)
	case o.Decode && o.PromptLen < 1:
		return bad("prompt_len", o.PromptLen, 1)
	case o.Decode && o.NewTokens < 2:
		return bad("new_tokens", o.NewTokens, 2)
	case o.Temperature < 0:
		return fmt.Errorf("bench: temperature %g, want >= 0", o.Temperature)
	}
	return nil
}

// Result holds the measurements; rates exclude compilation.
type Result struct {
	Params           int64   `json:"params"`
	Batch            int     `json:"batch"`
	SeqLen           int     `json:"seq_len"`
	DecodeBatch      int     `json:"decode_batch"`
	PromptLen        int     `json:"prompt_len"`
	NewTokens        int     `json:"new_tokens"`
	TrainCompileS    float64 `json:"train_compile_s,omitempty"`    // first step, compilation included
	TrainStepMS      float64 `json:"train_step_ms,omitempty"`      // mean of the timed steps
	TrainTokensPerS  float64 `json:"train_tokens_per_s,omitempty"` // batch*seq_len / step time
	DecodeCompileS   float64 `json:"decode_compile_s,omitempty"`   // warm-up session, compilation included
	PrefillMS        float64 `json:"prefill_ms,omitempty"`         // reading the prompts and sampling the first tokens
	DecodeStepMS     float64 `json:"decode_step_ms,omitempty"`     // one token for every sequence
	DecodeTokensPerS float64 `json:"decode_tokens_per_s,omitempty"`
	// DecodeWholeCacheStepMS is the baseline: a decode step with the cache
	// allocated at full capacity from the start (and attended over in full).
	DecodeWholeCacheStepMS float64 `json:"decode_whole_cache_step_ms,omitempty"`

	// The work of each part, its rate, and the rate's fraction of the
	// roofline (SetRates, ApplyRoofline; zero: not measured, or no roofline).
	TrainFLOPs       float64   `json:"train_flops,omitempty"`         // TrainFLOPs of a step
	TrainFLOPsPerS   float64   `json:"train_flops_per_s,omitempty"`   // train_flops / step time
	TrainMFU         float64   `json:"train_mfu,omitempty"`           // train_flops_per_s / the matmul peak
	PrefillFLOPs     float64   `json:"prefill_flops,omitempty"`       // PrefillFLOPs of the prompts
	PrefillFLOPsPerS float64   `json:"prefill_flops_per_s,omitempty"` // prefill_flops / prefill time
	PrefillMFU       float64   `json:"prefill_mfu,omitempty"`         // prefill_flops_per_s / the matmul peak
	DecodeStepBytes  float64   `json:"decode_step_bytes,omitempty"`   // MeanDecodeStepBytes
	DecodeBytesPerS  float64   `json:"decode_bytes_per_s,omitempty"`  // decode_step_bytes / step time
	DecodeMBU        float64   `json:"decode_mbu,omitempty"`          // decode_bytes_per_s / the copy bandwidth
	DecodeStepFLOPs  float64   `json:"decode_step_flops,omitempty"`   // MeanDecodeStepFLOPs
	DecodeFLOPsPerS  float64   `json:"decode_flops_per_s,omitempty"`  // decode_step_flops / step time
	DecodeMFU        float64   `json:"decode_mfu,omitempty"`          // decode_flops_per_s / the matmul peak
	Roofline         *Roofline `json:"roofline,omitempty"`            // the limits, in a run of one side
}

// SetRates fills r's work counts and rates for a model of cfg in dtype, from
// its sizes and the step times it holds (a part not measured keeps zeros).
func (r *Result) SetRates(cfg qwen3.Config, dtype dtypes.DType) {
	perS := func(work, ms float64) float64 {
		if !(ms > 0) {
			return 0
		}
		return work / (ms / 1000)
	}
	if r.TrainStepMS > 0 {
		r.TrainFLOPs = TrainFLOPs(cfg, r.Batch, r.SeqLen)
		r.TrainFLOPsPerS = perS(r.TrainFLOPs, r.TrainStepMS)
	}
	if r.PrefillMS > 0 {
		r.PrefillFLOPs = PrefillFLOPs(cfg, r.DecodeBatch, r.PromptLen)
		r.PrefillFLOPsPerS = perS(r.PrefillFLOPs, r.PrefillMS)
	}
	if r.DecodeStepMS > 0 {
		r.DecodeStepBytes = MeanDecodeStepBytes(cfg, dtype, r.DecodeBatch, r.PromptLen, r.NewTokens)
		r.DecodeBytesPerS = perS(r.DecodeStepBytes, r.DecodeStepMS)
		r.DecodeStepFLOPs = MeanDecodeStepFLOPs(cfg, r.DecodeBatch, r.PromptLen, r.NewTokens)
		r.DecodeFLOPsPerS = perS(r.DecodeStepFLOPs, r.DecodeStepMS)
	}
}

// ApplyRoofline sets r's fractions of roof: the train step's and the
// prefill's FLOP/s over roof's matmul peak for dtype (float32 or bfloat16),
// decoding's bytes/s over its copy bandwidth and its FLOP/s over the matmul
// peak. A limit roof lacks, or a rate not measured, leaves its fraction zero.
func (r *Result) ApplyRoofline(roof *Roofline, dtype string) {
	peak, _ := roof.Peak(dtype)
	r.TrainMFU = fraction(r.TrainFLOPsPerS, peak)
	r.PrefillMFU = fraction(r.PrefillFLOPsPerS, peak)
	r.DecodeMBU = fraction(r.DecodeBytesPerS, roof.CopyBytesPerS)
	r.DecodeMFU = fraction(r.DecodeFLOPsPerS, peak)
}

// DecodeBound is the fraction of its roofline a decode step reaches and the
// limit that binds it: a step can take no less than the longer of its bytes
// over the copy bandwidth and its FLOPs over the matmul peak, so the fraction
// is the larger of DecodeMBU and DecodeMFU. Small batches are bound by the
// bandwidth, large ones by the matmul peak.
func (r Result) DecodeBound() (float64, string) {
	if r.DecodeMFU > r.DecodeMBU {
		return r.DecodeMFU, "the matmul peak"
	}
	return r.DecodeMBU, "the copy bandwidth"
}

// WriteText writes r as a few lines of text: sizes, the roofline if any, then
// the training step and decoding lines of the parts that were measured (a zero
// step time means not measured), each with its rate and, against a roofline,
// the rate's fraction of it.
func (r Result) WriteText(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "params %.3g, batch %d, len %d, new tokens %d", float64(r.Params), r.Batch, r.SeqLen, r.NewTokens)
	if r.DecodeBatch != r.Batch || r.PromptLen != r.SeqLen {
		fmt.Fprintf(&b, ", decode batch %d, prompt len %d", r.DecodeBatch, r.PromptLen)
	}
	b.WriteString("\n")
	if r.Roofline != nil {
		if err := r.Roofline.WriteText(&b); err != nil {
			return err
		}
	}
	of := func(f float64, limit string) string {
		if !(f > 0) {
			return ""
		}
		return fmt.Sprintf(", %s of %s", percent(f), limit)
	}
	if r.TrainStepMS > 0 {
		fmt.Fprintf(&b, "train step: %.1f ms, %.0f tokens/s, %s%s (first step %.1f s)\n", r.TrainStepMS,
			r.TrainTokensPerS, rate(r.TrainFLOPsPerS, "FLOP"), of(r.TrainMFU, "the matmul peak"), r.TrainCompileS)
	}
	if r.DecodeStepMS > 0 {
		fmt.Fprintf(&b, "decode: %.2f ms/step, %.0f tokens/s, %s%s, %s%s; prefill %.1f ms, %s%s (warm-up %.1f s)\n",
			r.DecodeStepMS, r.DecodeTokensPerS, rate(r.DecodeBytesPerS, "B"), of(r.DecodeMBU, "the copy bandwidth"),
			rate(r.DecodeFLOPsPerS, "FLOP"), of(r.DecodeMFU, "the matmul peak"),
			r.PrefillMS, rate(r.PrefillFLOPsPerS, "FLOP"), of(r.PrefillMFU, "the matmul peak"), r.DecodeCompileS)
		if f, limit := r.DecodeBound(); f > 0 {
			fmt.Fprintf(&b, "decode is bound by %s: %s of its roofline\n", limit, percent(f))
		}
	}
	if r.DecodeWholeCacheStepMS > 0 && r.DecodeStepMS > 0 {
		fmt.Fprintf(&b, "decode with the whole cache from the start (baseline): %.2f ms/step, %.2fx the time\n",
			r.DecodeWholeCacheStepMS, r.DecodeWholeCacheStepMS/r.DecodeStepMS)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// TrainFLOPs is the model FLOPs of one training step: 6 per parameter per token
// (forward and backward matmuls; the embedding lookup excluded unless tied, when
// it is the head) plus attention's 12 * layers * heads * headDim * seqLen per
// token, as in PaLM's MFU.
func TrainFLOPs(cfg qwen3.Config, batch, seqLen int) float64 {
	perToken := 6*multiplied(cfg) + 12*float64(cfg.Layers*cfg.Heads*cfg.HeadDim*seqLen)
	return perToken * float64(batch*seqLen)
}

// multiplied is the number of weights a token's forward pass multiplies by:
// every parameter but the embedding table, which is looked up, unless the
// head is tied to it (then the table counts once, as the head).
func multiplied(cfg qwen3.Config) float64 {
	n := float64(cfg.Params())
	if !cfg.TieEmbeddings {
		n -= float64(cfg.VocabSize * cfg.Hidden)
	}
	return n
}

// PrefillFLOPs is the model FLOPs of reading batch prompts of promptLen
// tokens: the forward third of TrainFLOPs' count for every prompt token (2 per
// weight multiplied, and 4 * layers * heads * headDim * promptLen for
// attention's two products), except that the head (vocab x hidden weights)
// runs at each prompt's last token only, where the sampler's prefill (and
// transformers' generate) computes logits.
func PrefillFLOPs(cfg qwen3.Config, batch, promptLen int) float64 {
	head := float64(cfg.VocabSize * cfg.Hidden)
	perToken := 2*(multiplied(cfg)-head) + 4*float64(cfg.Layers*cfg.Heads*cfg.HeadDim*promptLen)
	return perToken*float64(batch*promptLen) + 2*head*float64(batch)
}

// DecodeStepBytes is the bytes a decode step of batch sequences must read from
// memory when each sequence attends over context cached positions (its new
// token's included): every weight the step multiplies by, at dtype's size (the
// whole model but an untied embedding table, of which it reads only the batch
// rows looked up), and the key/value cache at that length
// (qwen3.Config.CacheShapes). What it writes, the new cache slots and the
// logits, and the activations are left out (about 10 MB for Qwen3-0.6B at
// batch 16, beside 0.6 to 1.2 GB).
func DecodeStepBytes(cfg qwen3.Config, dtype dtypes.DType, batch, context int) float64 {
	weights := multiplied(cfg)
	if !cfg.TieEmbeddings {
		weights += float64(batch * cfg.Hidden)
	}
	var cache int64
	for _, s := range cfg.CacheShapes(batch, context, dtype) {
		cache += s.ByteSize()
	}
	return weights*float64(dtype.Size()) + float64(cache)
}

// DecodeStepFLOPs is the model FLOPs of a decode step of batch sequences
// each attending over context cached positions: 2 per weight multiplied
// (the head included) per sequence, and attention's two products,
// 4 * layers * heads * headDim * context per sequence.
func DecodeStepFLOPs(cfg qwen3.Config, batch, context int) float64 {
	perToken := 2*multiplied(cfg) + 4*float64(cfg.Layers*cfg.Heads*cfg.HeadDim*context)
	return perToken * float64(batch)
}

// MeanDecodeStepFLOPs is DecodeStepFLOPs averaged over the timed decode steps,
// as MeanDecodeStepBytes: linear in the context, so the mean of the first and
// the last step.
func MeanDecodeStepFLOPs(cfg qwen3.Config, batch, promptLen, newTokens int) float64 {
	return (DecodeStepFLOPs(cfg, batch, promptLen+1) + DecodeStepFLOPs(cfg, batch, promptLen+newTokens-1)) / 2
}

// MeanDecodeStepBytes is DecodeStepBytes averaged over the timed decode steps
// of prompts of promptLen tokens and newTokens new ones: the prefill gives the
// first token, then step i (1 to newTokens-1) attends over promptLen+i
// positions. The bytes grow linearly with the context, so the mean is that of
// the first and the last step.
func MeanDecodeStepBytes(cfg qwen3.Config, dtype dtypes.DType, batch, promptLen, newTokens int) float64 {
	return (DecodeStepBytes(cfg, dtype, batch, promptLen+1) + DecodeStepBytes(cfg, dtype, batch, promptLen+newTokens-1)) / 2
}

// Run measures m on b, writing progress lines to log. The training step
// updates m's weights and adds AdamW's moments to its store.
func Run(b compute.Backend, m *qwen3.Model, opts Options, log io.Writer) (Result, error) {
	opts = opts.withDefaults()
	if err := opts.validate(); err != nil {
		return Result{}, err
	}
	res := Result{Params: m.Config.Params(), Batch: opts.Batch, SeqLen: opts.SeqLen, DecodeBatch: opts.DecodeBatch,
		PromptLen: opts.PromptLen, NewTokens: opts.NewTokens}
	rng := rand.New(rand.NewPCG(opts.Seed, 1))
	if opts.Train {
		ids := make([][]int32, opts.Batch)
		for i := range ids {
			ids[i] = make([]int32, opts.SeqLen)
			for j := range ids[i] {
				ids[i][j] = int32(rng.IntN(m.Config.VocabSize))
			}
		}
		if err := trainBench(b, m, opts, ids, &res, log); err != nil {
			return res, err
		}
	}
	if opts.Decode {
		prompts := make([][]int, opts.DecodeBatch)
		for i := range prompts {
			prompts[i] = make([]int, opts.PromptLen)
			for j := range prompts[i] {
				prompts[i][j] = rng.IntN(m.Config.VocabSize)
			}
		}
		if err := decodeBench(b, m, opts, prompts, &res, log); err != nil {
			return res, err
		}
	}
	res.SetRates(m.Config, m.DType)
	if opts.Roofline != nil {
		dt, err := dtypeName(m.DType)
		if err != nil {
			return res, err
		}
		res.Roofline = opts.Roofline
		res.ApplyRoofline(opts.Roofline, dt)
	}
	return res, nil
}

// trainStep builds the training step: the mean token log-probability of ids
// (the graph built as opts.Model says), its gradient for every trainable
// weight, and the GRPO trainer's AdamW update (grpo.ApplyAdamW) at the
// learning rate given as the second input. It returns the loss.
func trainStep(b compute.Backend, m *qwen3.Model, opts Options) (*mlmodel.Exec, error) {
	if err := grpo.CreateUpdateState(m.Store, grpo.TrainableVariables(m.Store), opts.AdamW.Precision); err != nil {
		return nil, fmt.Errorf("bench: optimizer state: %w", err)
	}
	return mlmodel.NewExec(b, m.Store, func(scope *mlmodel.Scope, ids, lr *Node) *Node {
		loss := Neg(ReduceAllMean(qwen3.TokenLogProbsWith(scope, m.Config, ids, 1, opts.Model)))
		vars := grpo.TrainableVariables(scope.Store())
		nodes := make([]*Node, len(vars))
		for i, v := range vars {
			nodes[i] = gomlxfix.VariableNode(v, ids.Graph())
		}
		grpo.ApplyAdamW(scope.Store(), vars, Gradient(loss, nodes...), lr, opts.AdamW)
		return loss
	})
}

// trainBench times trainStep: one call that compiles, then opts.TrainSteps.
func trainBench(b compute.Backend, m *qwen3.Model, opts Options, ids [][]int32, res *Result, log io.Writer) error {
	exec, err := trainStep(b, m, opts)
	if err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	lr := float32(opts.LR)
	step := func() error {
		out, err := exec.Call(ids, lr)
		if err != nil {
			return fmt.Errorf("bench: train step: %w", err)
		}
		out[0].MustConstFlatData(func(any) {}) // wait for the result
		return nil
	}
	t0 := time.Now()
	if err := step(); err != nil {
		return err
	}
	res.TrainCompileS = time.Since(t0).Seconds()
	fmt.Fprintf(log, "train: first step (with compilation) %.1f s\n", res.TrainCompileS)
	steps := max(opts.TrainSteps, 1)
	t0 = time.Now()
	for range steps {
		if err := step(); err != nil {
			return err
		}
	}
	sec := time.Since(t0).Seconds() / float64(steps)
	res.TrainStepMS = sec * 1000
	res.TrainTokensPerS = float64(opts.Batch*opts.SeqLen) / sec
	fmt.Fprintf(log, "train: %.1f ms/step, %.0f tokens/s\n", res.TrainStepMS, res.TrainTokensPerS)
	return nil
}

// decodeBench times decoding as the sampler decodes (the cache grows with the
// sequences, so each step attends over about the used part) and, unless
// opts.SkipWholeCache, in the same run with the cache allocated at full
// capacity from the start, as a baseline.
func decodeBench(b compute.Backend, m *qwen3.Model, opts Options, prompts [][]int, res *Result, log io.Writer) error {
	s := sampler.New(b, m)
	so := sampler.Options{MaxNewTokens: opts.NewTokens, Temperature: opts.Temperature, StopIDs: []int{}, Seed: opts.Seed,
		MaxChunk: max(sampler.DefaultMaxChunk, opts.PromptLen)}
	d, err := timeDecode(s, prompts, so)
	if err != nil {
		return err
	}
	res.DecodeCompileS, res.PrefillMS, res.DecodeStepMS = d.warmUpS, d.prefillMS, d.stepMS
	res.DecodeTokensPerS = float64(len(prompts)) / (d.stepMS / 1000)
	fmt.Fprintf(log, "decode: warm-up (with compilation) %.1f s; prefill %.1f ms, %.2f ms/step, %.0f tokens/s\n",
		d.warmUpS, res.PrefillMS, res.DecodeStepMS, res.DecodeTokensPerS)
	if opts.SkipWholeCache {
		return nil
	}
	so.FullCache = true
	whole, err := timeDecode(s, prompts, so)
	if err != nil {
		return err
	}
	res.DecodeWholeCacheStepMS = whole.stepMS
	fmt.Fprintf(log, "decode with the whole cache allocated from the start: %.2f ms/step (%.2fx the time)\n",
		whole.stepMS, whole.stepMS/d.stepMS)
	return nil
}

type decodeTimes struct{ warmUpS, prefillMS, stepMS float64 }

// timeDecode runs a warm-up session (compiling every graph the timed one
// uses), then times the prefill (Start, which reads the prompts, and the
// first step, which samples the first tokens) and the decode steps of a
// second one.
func timeDecode(s *sampler.Sampler, prompts [][]int, so sampler.Options) (decodeTimes, error) {
	var d decodeTimes
	t0 := time.Now()
	if _, err := s.Generate(context.Background(), prompts, so); err != nil {
		return d, err
	}
	d.warmUpS = time.Since(t0).Seconds()
	t0 = time.Now()
	ss, err := s.Start(prompts, so)
	if err != nil {
		return d, err
	}
	defer ss.Close()
	if _, err := ss.Step(); err != nil {
		return d, err
	}
	d.prefillMS = time.Since(t0).Seconds() * 1000
	t0 = time.Now()
	steps := 0
	for {
		more, err := ss.Step()
		if err != nil {
			return d, err
		}
		steps++
		if !more {
			break
		}
	}
	d.stepMS = time.Since(t0).Seconds() * 1000 / float64(steps)
	return d, nil
}
