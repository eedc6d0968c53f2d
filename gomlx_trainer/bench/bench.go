package bench

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/gomlx/compute"
	. "github.com/gomlx/gomlx/core/graph" //nolint:revive // GoMLX's graph DSL reads best dot-imported
	mlmodel "github.com/gomlx/gomlx/ml/model"

	"github.com/mathrl/mathrl/gomlx_trainer/qwen3"
	"github.com/mathrl/mathrl/gomlx_trainer/sampler"
)

// Options says what to measure.
type Options struct {
	Batch      int                // sequences per step
	SeqLen     int                // training: tokens per sequence; decoding: prompt tokens
	NewTokens  int                // decoding: tokens generated per sequence
	TrainSteps int                // timed training steps (after one that compiles)
	PeakTFLOPS float64            // the device's dense peak for the dtype, for MFU; 0: no MFU
	Train      bool               // measure the training step
	Decode     bool               // measure decoding
	Seed       uint64             // token ids are drawn from this seed
	Model      qwen3.ModelOptions // how the training graph is built (fused or decomposed attention, ...)
}

// Result holds the measurements; rates exclude compilation.
type Result struct {
	Params           int64   `json:"params"`
	Batch            int     `json:"batch"`
	SeqLen           int     `json:"seq_len"`
	NewTokens        int     `json:"new_tokens"`
	TrainCompileS    float64 `json:"train_compile_s,omitempty"`    // first step, compilation included
	TrainStepMS      float64 `json:"train_step_ms,omitempty"`      // mean of the timed steps
	TrainTokensPerS  float64 `json:"train_tokens_per_s,omitempty"` // batch*seq_len / step time
	TrainMFU         float64 `json:"train_mfu,omitempty"`          // model FLOPs / step time / peak
	DecodeCompileS   float64 `json:"decode_compile_s,omitempty"`   // warm-up session, compilation included
	PrefillMS        float64 `json:"prefill_ms,omitempty"`         // reading the prompts and sampling the first tokens
	DecodeStepMS     float64 `json:"decode_step_ms,omitempty"`     // one token for every sequence
	DecodeTokensPerS float64 `json:"decode_tokens_per_s,omitempty"`
	// DecodeWholeCacheStepMS is the baseline: a decode step with the cache
	// allocated at full capacity from the start (and attended over in full).
	DecodeWholeCacheStepMS float64 `json:"decode_whole_cache_step_ms,omitempty"`
}

// WriteText writes r as a few lines of text: sizes, then the training step and
// decoding lines of the parts that were measured (a zero step time means not
// measured), with MFU when it was computed.
func (r Result) WriteText(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "params %.3g, batch %d, len %d, new tokens %d\n", float64(r.Params), r.Batch, r.SeqLen, r.NewTokens)
	if r.TrainStepMS > 0 {
		fmt.Fprintf(&b, "train step: %.1f ms, %.0f tokens/s", r.TrainStepMS, r.TrainTokensPerS)
		if r.TrainMFU > 0 {
			fmt.Fprintf(&b, ", MFU %.1f%%", 100*r.TrainMFU)
		}
		fmt.Fprintf(&b, " (first step %.1f s)\n", r.TrainCompileS)
	}
	if r.DecodeStepMS > 0 {
		fmt.Fprintf(&b, "decode: %.2f ms/step, %.0f tokens/s, prefill %.1f ms (warm-up %.1f s)\n",
			r.DecodeStepMS, r.DecodeTokensPerS, r.PrefillMS, r.DecodeCompileS)
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
	n := float64(cfg.Params())
	if !cfg.TieEmbeddings {
		n -= float64(cfg.VocabSize * cfg.Hidden)
	}
	perToken := 6*n + 12*float64(cfg.Layers*cfg.Heads*cfg.HeadDim*seqLen)
	return perToken * float64(batch*seqLen)
}

// Run measures m on b, writing progress lines to log.
func Run(b compute.Backend, m *qwen3.Model, opts Options, log io.Writer) (Result, error) {
	if opts.Batch < 1 || opts.SeqLen < 2 {
		return Result{}, fmt.Errorf("bench: batch %d and length %d, want >= 1 and >= 2", opts.Batch, opts.SeqLen)
	}
	res := Result{Params: m.Config.Params(), Batch: opts.Batch, SeqLen: opts.SeqLen, NewTokens: opts.NewTokens}
	rng := rand.New(rand.NewPCG(opts.Seed, 1))
	ids := make([][]int32, opts.Batch)
	prompts := make([][]int, opts.Batch)
	for i := range ids {
		ids[i] = make([]int32, opts.SeqLen)
		prompts[i] = make([]int, opts.SeqLen)
		for j := range ids[i] {
			id := rng.IntN(m.Config.VocabSize)
			ids[i][j], prompts[i][j] = int32(id), id
		}
	}
	if opts.Train {
		if err := trainBench(b, m, opts, ids, &res, log); err != nil {
			return res, err
		}
	}
	if opts.Decode {
		if err := decodeBench(b, m, opts, prompts, &res, log); err != nil {
			return res, err
		}
	}
	return res, nil
}

// trainBench times a step that computes the mean token log-probability (the
// graph built as opts.Model says), its gradient for every weight, and an SGD
// update (a real optimizer adds only
// elementwise work).
func trainBench(b compute.Backend, m *qwen3.Model, opts Options, ids [][]int32, res *Result, log io.Writer) error {
	const lr = 1e-6
	exec, err := mlmodel.NewExec(b, m.Store, func(ctx *mlmodel.Scope, ids *Node) *Node {
		loss := Neg(ReduceAllMean(qwen3.TokenLogProbsWith(ctx, m.Config, ids, 1, opts.Model)))
		var vars []*mlmodel.Variable
		var nodes []*Node
		for _, spec := range m.Config.Tensors() {
			v := m.Weight(spec.Name)
			vars = append(vars, v)
			nodes = append(nodes, v.NodeValue(ids.Graph()))
		}
		grads := Gradient(loss, nodes...)
		for i, v := range vars {
			v.SetNodeValue(Sub(nodes[i], MulScalar(grads[i], lr)))
		}
		return loss
	})
	if err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	step := func() error {
		out, err := exec.Call(ids)
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
	if opts.PeakTFLOPS > 0 {
		res.TrainMFU = TrainFLOPs(m.Config, opts.Batch, opts.SeqLen) / sec / (opts.PeakTFLOPS * 1e12)
	}
	fmt.Fprintf(log, "train: %.1f ms/step, %.0f tokens/s\n", res.TrainStepMS, res.TrainTokensPerS)
	return nil
}

// decodeBench times decoding twice in the same run: as the sampler decodes
// (the cache grows with the sequences, so each step attends over about the
// used part) and, as the baseline, with the cache allocated at full capacity
// from the start.
func decodeBench(b compute.Backend, m *qwen3.Model, opts Options, prompts [][]int, res *Result, log io.Writer) error {
	if opts.NewTokens < 2 {
		return fmt.Errorf("bench: new tokens %d, want >= 2", opts.NewTokens)
	}
	s := sampler.New(b, m)
	so := sampler.Options{MaxNewTokens: opts.NewTokens, Temperature: 1, StopIDs: []int{}, Seed: opts.Seed,
		MaxChunk: max(512, opts.SeqLen)}
	d, err := timeDecode(s, prompts, so)
	if err != nil {
		return err
	}
	res.DecodeCompileS, res.PrefillMS, res.DecodeStepMS = d.warmUpS, d.prefillMS, d.stepMS
	res.DecodeTokensPerS = float64(opts.Batch) / (d.stepMS / 1000)
	fmt.Fprintf(log, "decode: warm-up (with compilation) %.1f s; prefill %.1f ms, %.2f ms/step, %.0f tokens/s\n",
		d.warmUpS, res.PrefillMS, res.DecodeStepMS, res.DecodeTokensPerS)
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
// uses), then times the prefill step and the decode steps of a second one.
func timeDecode(s *sampler.Sampler, prompts [][]int, so sampler.Options) (decodeTimes, error) {
	var d decodeTimes
	t0 := time.Now()
	if _, err := s.Generate(context.Background(), prompts, so); err != nil {
		return d, err
	}
	d.warmUpS = time.Since(t0).Seconds()
	ss, err := s.Start(prompts, so)
	if err != nil {
		return d, err
	}
	defer ss.Close()
	t0 = time.Now()
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
