package qwen3

import (
	"math"

	"math/rand/v2"
	"testing"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/dtypes/bfloat16"
	"github.com/gomlx/compute/shapes"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"

	"github.com/mathrl/mathrl/gomlx_trainer/backend/backendtest"
	"github.com/mathrl/mathrl/gomlx_trainer/gomlxfix"
)

// bf16Normal draws n values N(0, std²) rounded to bfloat16, so that a float32
// and a bfloat16 graph start from the same numbers.
func bf16Normal(rng *rand.Rand, n int, std float64) []float32 {
	out := make([]float32, n)
	for i := range out {
		out[i] = toBF16(float32(rng.NormFloat64() * std)).Float32()
	}
	return out
}

// tensorIn holds vals (already exact in bfloat16) as a dtype tensor of dims.
func tensorIn(vals []float32, dtype dtypes.DType, dims ...int) *tensors.Tensor {
	t := tensors.FromShape(shapes.Make(dtype, dims...))
	switch dtype {
	case dtypes.Float32:
		tensors.MustMutableFlatData(t, func(flat []float32) { copy(flat, vals) })
	case dtypes.BFloat16:
		tensors.MustMutableFlatData(t, func(flat []bfloat16.BFloat16) {
			for i, v := range vals {
				flat[i] = toBF16(v)
			}
		})
	}
	return t
}

// zipfIDs draws [rows, cols] ids below vocab with probability ∝ (id+1)^-1.1,
// as token frequencies fall: a few ids take a large share of the tokens.
func zipfIDs(rows, cols, vocab int, seed uint64) [][]int32 {
	z := rand.NewZipf(rand.New(rand.NewPCG(seed, 3)), 1.1, 1, uint64(vocab-1))
	ids := make([][]int32, rows)
	for r := range ids {
		for range cols {
			ids[r] = append(ids[r], int32(z.Uint64()))
		}
	}
	return ids
}

// roundToBF16 rounds each of m's float32 weights to bfloat16 (and keeps them
// float32), so that m computes in float32 on the weights of the bfloat16 model
// with the same seed.
func roundToBF16(t *testing.T, m *Model) *Model {
	t.Helper()
	for _, spec := range m.Config.Tensors() {
		v, err := m.Weight(spec.Name).Value()
		if err != nil {
			t.Fatal(err)
		}
		vals, err := Float32s(v)
		if err != nil {
			t.Fatal(err)
		}
		for i := range vals {
			vals[i] = toBF16(vals[i]).Float32()
		}
		m.setWeight(spec.Name, tensorIn(vals, dtypes.Float32, spec.Shape...))
	}
	return m
}

// flat returns each tensor's values as float32.
func flat(t *testing.T, out []*tensors.Tensor) [][]float32 {
	t.Helper()
	res := make([][]float32, len(out))
	for i, o := range out {
		v, err := Float32s(o)
		if err != nil {
			t.Fatal(err)
		}
		res[i] = v
	}
	return res
}

// TestBFloat16AttentionScores runs attention (the sampler's cached attention,
// and the training graph's where there is no fused attention) on bfloat16 q, k
// and v and on the same values in float32, in both key layouts, with scaled
// scores of standard deviation 6 (a peaked attention, as trained models have).
// The scores must come out of their product unrounded: rounded to bfloat16
// before scaling, they moved each probability by up to 6%, and the output by
// 1.08e-2 of its largest value on both backends (Go and XLA's CPU compiler,
// either layout); in float32, what is left is the rounding of the
// probabilities and of the output to bfloat16, 3.13e-3 on both. The bound sits
// between the two.
func TestBFloat16AttentionScores(t *testing.T) {
	b := backendtest.New(t)
	cfg := Config{Heads: 4, KVHeads: 2, HeadDim: 16}
	const batch, seq = 2, 32
	rng := rand.New(rand.NewPCG(4, 1))
	qDims, kvDims := []int{batch, seq, cfg.Heads, cfg.HeadDim}, []int{batch, seq, cfg.KVHeads, cfg.HeadDim}
	q := bf16Normal(rng, batch*seq*cfg.Heads*cfg.HeadDim, 2.5)
	k := bf16Normal(rng, batch*seq*cfg.KVHeads*cfg.HeadDim, 2.5)
	v := bf16Normal(rng, batch*seq*cfg.KVHeads*cfg.HeadDim, 1)
	for _, headsFirst := range []bool{false, true} {
		run := func(dtype dtypes.DType) []float32 {
			out := MustExecOnceN(b, func(q, k, v *Node) []*Node {
				if headsFirst {
					k, v = TransposeAllAxes(k, 0, 2, 1, 3), TransposeAllAxes(v, 0, 2, 1, 3)
				}
				att := attention(cfg, q, k, v, causal(q.Graph(), batch, seq), headsFirst)
				return []*Node{ConvertDType(att, dtypes.Float32)}
			}, tensorIn(q, dtype, qDims...), tensorIn(k, dtype, kvDims...), tensorIn(v, dtype, kvDims...))
			return flat(t, out)[0]
		}
		e := relativeToLargest(run(dtypes.BFloat16), run(dtypes.Float32))
		t.Logf("headsFirst %v: bf16 attention against float32, %.2e of the largest", headsFirst, e)
		if e > 6e-3 {
			t.Errorf("headsFirst %v: bf16 attention differs from float32 by %.2e of the largest, bound 6e-3", headsFirst, e)
		}
	}
}

// TestBFloat16Logits feeds the same hidden states (scaled so that logits have
// a standard deviation of 5) to the head of a bfloat16 model and of the same
// weights in float32 (the tied tiny checkpoint, stored in bfloat16; bigVocab,
// untied, with the gather path, rounded to bfloat16), through TargetLogProbs of
// head and through TargetLogProbsChunked, and compares the log-probs and
// entropies (in nats) and the gradient of Σ c·logp with respect to the head's
// weight, which must stay in the weight's dtype.
//
// Measured with the logits rounded to bfloat16 before the log-softmax:
// log-probs off by 5.66e-2 nats (tiny) and 4.66e-2 (bigVocab), entropies by
// 3.78e-2 and 5.21e-2, head gradients by 1.42e-2 and 1.05e-2 of their largest,
// on both backends, except XLA's plain head of bigVocab, whose compiler had
// folded the conversion into the product (1.91e-6 nats, gradient 2.72e-3).
// With float32 logits: 0 nats on the Go backend, at most 1.91e-6 on XLA, and
// head gradients (rounded to bfloat16) 1.75e-3 to 2.72e-3 of their largest on
// both.
func TestBFloat16Logits(t *testing.T) {
	b := backendtest.New(t)
	dir, _ := loadReference(t)
	models := map[string]func(dtypes.DType) *Model{
		"tiny-qwen3-hf": func(dtype dtypes.DType) *Model { // stored in bfloat16: the same weights in both dtypes
			m, err := Load(dir, dtype)
			if err != nil {
				t.Fatal(err)
			}
			return m
		},
		"big-vocab": func(dtype dtypes.DType) *Model {
			m, err := NewRandom(bigVocab, dtype, 7)
			if err != nil {
				t.Fatal(err)
			}
			if dtype == dtypes.Float32 {
				m = roundToBF16(t, m)
			}
			return m
		},
	}
	const batch, seq, chunk = 2, 16, 8
	for name, newModel := range models {
		// Hidden states scaled so that logits have a standard deviation of 5
		// (the largest near 25), as a trained model's do.
		m := newModel(dtypes.Float32)
		cfg := m.Config
		w, err := m.Weight(headName(cfg)).Value()
		if err != nil {
			t.Fatal(err)
		}
		wv, err := Float32s(w)
		if err != nil {
			t.Fatal(err)
		}
		rms := 0.0
		for _, v := range wv {
			rms += float64(v) * float64(v)
		}
		rms = math.Sqrt(rms / float64(len(wv)))
		rng := rand.New(rand.NewPCG(5, 2))
		hidden := bf16Normal(rng, batch*seq*cfg.Hidden, 5/(math.Sqrt(float64(cfg.Hidden))*rms))
		targets := randomIDs(batch, seq, cfg.VocabSize, 3)
		coef := bf16Normal(rng, batch*seq, 1)
		run := func(dtype dtypes.DType) [][]float32 {
			m := newModel(dtype)
			exec := model.MustNewExec(b, m.Store, func(scope *model.Scope, in []*Node) []*Node {
				w := headWeight(scope, cfg, in[0].Graph())
				full, fullEnt := TargetLogProbs(head(scope, cfg, in[0]), in[1], 1)
				chunked, chunkedEnt := TargetLogProbsChunked(scope, cfg, in[0], in[1], 1, chunk)
				out := []*Node{full, fullEnt, chunked, chunkedEnt}
				for _, logp := range []*Node{full, chunked} {
					grad := Gradient(ReduceAllSum(Mul(in[2], logp)), w)[0]
					if grad.DType() != m.DType {
						t.Errorf("%s: head weight's gradient in %s, want %s", name, grad.DType(), m.DType)
					}
					out = append(out, ConvertDType(grad, dtypes.Float32))
				}
				return out
			})
			return flat(t, exec.MustCall(tensorIn(hidden, dtype, batch, seq, cfg.Hidden), targets,
				tensorIn(coef, dtypes.Float32, batch, seq)))
		}
		want, got := run(dtypes.Float32), run(dtypes.BFloat16)
		for i, path := range []string{"TargetLogProbs(head)", "TargetLogProbsChunked"} {
			lp, ent, grad := maxDiff(got[2*i], want[2*i]), maxDiff(got[2*i+1], want[2*i+1]), relativeToLargest(got[4+i], want[4+i])
			t.Logf("%s %s: log-probs %.2e nats, entropies %.2e nats, head gradient %.2e of its largest", name, path, lp, ent, grad)
			if lp > 1e-4 || ent > 1e-4 || grad > 6e-3 {
				t.Errorf("%s %s: bf16 against float32: log-probs %.2e nats, entropies %.2e nats (bound 1e-4), head gradient %.2e (bound 6e-3)",
					name, path, lp, ent, grad)
			}
		}
	}
}

// headName is the Hugging Face name of the head's weight (headWeight).
func headName(cfg Config) string {
	if cfg.TieEmbeddings {
		return "model.embed_tokens.weight"
	}
	return "lm_head.weight"
}

// TestBFloat16NormWeightGradient takes the gradient of Σ c·rmsNorm(x, w) with
// respect to w (GoMLX's Gradient) for bfloat16 x and w and for the same values
// in float32, with the shapes of q_norm and k_norm (w [head_dim], summed over
// 4 x 256 positions and 4 heads: 4,096 rows) and of the layer norms and the
// final norm (w [hidden], 1,024 rows); every norm of the model is rmsNorm. It
// also checks that rmsNorm's bfloat16 values are transformers' (the product
// of w and the normalised x rounded to bfloat16, computed in bfloat16).
//
// Measured with the product in bfloat16, whose gradient is a bfloat16
// reduction: XLA 1.59e-2 and 1.47e-2 of the largest; the Go backend, which
// sums bfloat16 in float32, 3.85e-3 and 3.28e-3, and passes. With the product
// in float32: XLA 3.22e-3 and 2.22e-3, Go unchanged; what is left is the
// forward pass's rounding of the normalised x and of c to bfloat16.
func TestBFloat16NormWeightGradient(t *testing.T) {
	b := backendtest.New(t)
	for _, dims := range [][]int{{4, 256, 4, 16}, {4, 256, 64}} {
		rng := rand.New(rand.NewPCG(6, 3))
		n, width := 1, dims[len(dims)-1]
		for _, d := range dims {
			n *= d
		}
		x, c := bf16Normal(rng, n, 1), bf16Normal(rng, n, 1)
		w := bf16Normal(rng, width, 0.1)
		for i := range w {
			w[i] = toBF16(1 + w[i]).Float32()
		}
		run := func(dtype dtypes.DType) []float32 {
			out := MustExecOnceN(b, func(x, w, c *Node) []*Node {
				loss := ReduceAllSum(Mul(c, ConvertDType(rmsNorm(x, w, 1e-6), dtypes.Float32)))
				return []*Node{ConvertDType(Gradient(loss, w)[0], dtypes.Float32)}
			}, tensorIn(x, dtype, dims...), tensorIn(w, dtype, width), tensorIn(c, dtypes.Float32, dims...))
			return flat(t, out)[0]
		}
		e := relativeToLargest(run(dtypes.BFloat16), run(dtypes.Float32))
		t.Logf("%v: bf16 norm weight gradient against float32, %.2e of the largest", dims, e)
		if e > 8e-3 {
			t.Errorf("%v: bf16 norm weight gradient differs from float32 by %.2e of the largest, bound 8e-3", dims, e)
		}

		// transformers: weight * normed.to(input_dtype), in the input's dtype.
		values := flat(t, MustExecOnceN(b, func(x, w *Node) []*Node {
			xf := ConvertDType(x, dtypes.Float32)
			normed := Div(xf, Sqrt(AddScalar(ReduceAndKeep(Square(xf), ReduceMean, -1), 1e-6)))
			hf := Mul(ExpandLeftToRank(w, x.Rank()), ConvertDType(normed, dtypes.BFloat16))
			return []*Node{ConvertDType(rmsNorm(x, w, 1e-6), dtypes.Float32), ConvertDType(hf, dtypes.Float32)}
		}, tensorIn(x, dtypes.BFloat16, dims...), tensorIn(w, dtypes.BFloat16, width)))
		// The Go backend rounds where the graph says, so the two agree exactly;
		// XLA may keep float32 across a rounding (its default
		// xla_allow_excess_precision), differently in each: one bfloat16 step.
		ulps := 0.0
		if backendtest.IsXLA() {
			ulps = 1
		}
		for i, want := range values[1] {
			if d := math.Abs(float64(values[0][i] - want)); d > ulps*math.Abs(float64(want))/128 {
				t.Fatalf("%v: bf16 rmsNorm value %d is %g, transformers' bfloat16 product %g", dims, i, values[0][i], want)
			}
		}
	}
}

// TestBFloat16EmbeddingGradient takes the gradient of Σ c·embed(emb, ids)
// with respect to emb (GoMLX's Gradient) for a bfloat16 emb [1024, 64] and
// the same values in float32, with 8 x 512 ids drawn from a Zipf law, so that
// the commonest ids' rows are sums over hundreds of tokens.
//
// Measured with GoMLX's gradient of Gather (a bfloat16 ScatterSum, which both
// backends accumulate in bfloat16): 2.50e-2 of the largest on both. With the
// scatter in float32 (gomlxfix.Install): 2.43e-3 on both, the rounding of c
// and of the result to bfloat16.
func TestBFloat16EmbeddingGradient(t *testing.T) {
	b := backendtest.New(t)
	gomlxfix.Install() // as decoder does
	const vocab, hidden, batch, seq = 1024, 64, 8, 512
	rng := rand.New(rand.NewPCG(7, 4))
	emb := bf16Normal(rng, vocab*hidden, 0.02)
	c := bf16Normal(rng, batch*seq*hidden, 1)
	ids := zipfIDs(batch, seq, vocab, 5)
	run := func(dtype dtypes.DType) []float32 {
		out := MustExecOnceN(b, func(emb, ids, c *Node) []*Node {
			loss := ReduceAllSum(Mul(c, ConvertDType(embed(emb, ids), dtypes.Float32)))
			return []*Node{ConvertDType(Gradient(loss, emb)[0], dtypes.Float32)}
		}, tensorIn(emb, dtype, vocab, hidden), ids, tensorIn(c, dtypes.Float32, batch, seq, hidden))
		return flat(t, out)[0]
	}
	e := relativeToLargest(run(dtypes.BFloat16), run(dtypes.Float32))
	t.Logf("bf16 embedding gradient against float32, %.2e of the largest", e)
	if e > 6e-3 {
		t.Errorf("bf16 embedding gradient differs from float32 by %.2e of the largest, bound 6e-3", e)
	}
}

// TestBFloat16ContractingAxes takes the gradient of Σ c·linear(x, w) (the
// MLP's gate and up projections, w [160, 64]) and of Σ c·project(x, w) (the
// tied head, w [300, 64]) with respect to w for bfloat16 x [4, 256, 64] and w,
// and for the same values in float32: each weight's gradient is a product
// contracting the batch and sequence axes together, 1,024 rows.
//
// Measured with the product built over two contracting axes (GoMLX's layout,
// or one axis made by reshaping their transpose): XLA 3.42e-2 and 3.90e-2 of
// the largest (its CPU compiler sums such a product in bfloat16; in the tiny
// model's whole gradient, gate_proj, up_proj and the tied embedding came out
// 1.1e-2 to 2.3e-2 off against the Go backend's 1.9e-3 to 4.5e-3), the Go
// backend 2.06e-3 and 1.94e-3. With the axes merged before the transpose
// (gomlxfix's matmul): 2.06e-3 and 1.94e-3 on both, the rounding of the
// result to bfloat16.
func TestBFloat16ContractingAxes(t *testing.T) {
	b := backendtest.New(t)
	gomlxfix.Install() // as decoder does
	const batch, seq, hidden = 4, 256, 64
	for name, c := range map[string]struct {
		out  int
		prod func(x, w *Node) *Node
	}{
		"linear": {160, linear},
		"head":   {300, project},
	} {
		rng := rand.New(rand.NewPCG(8, 5))
		x := bf16Normal(rng, batch*seq*hidden, 1)
		w := bf16Normal(rng, c.out*hidden, 0.1)
		coef := bf16Normal(rng, batch*seq*c.out, 1)
		run := func(dtype dtypes.DType) []float32 {
			out := MustExecOnceN(b, func(x, w, coef *Node) []*Node {
				loss := ReduceAllSum(Mul(coef, ConvertDType(c.prod(x, w), dtypes.Float32)))
				return []*Node{ConvertDType(Gradient(loss, w)[0], dtypes.Float32)}
			}, tensorIn(x, dtype, batch, seq, hidden), tensorIn(w, dtype, c.out, hidden),
				tensorIn(coef, dtypes.Float32, batch, seq, c.out))
			return flat(t, out)[0]
		}
		e := relativeToLargest(run(dtypes.BFloat16), run(dtypes.Float32))
		t.Logf("%s: bf16 weight gradient against float32, %.2e of the largest", name, e)
		if e > 6e-3 {
			t.Errorf("%s: bf16 weight gradient differs from float32 by %.2e of the largest, bound 6e-3", name, e)
		}
	}
}
