package qwen3

import (
	"fmt"
	"math"
	"slices"

	"github.com/gomlx/compute"
	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/shapes"
	. "github.com/gomlx/gomlx/core/graph" //nolint:revive // GoMLX's graph DSL reads best dot-imported
	"github.com/gomlx/gomlx/ml/model"

	"github.com/mathrl/mathrl/gomlx_trainer/gomlxfix"
)

// maskedScore is added to attention scores of keys a query may not see; it is
// finite so that a row with no visible key gives a uniform (ignored) row, not NaN.
const maskedScore = -1e30

// weight returns the graph value of a Hugging Face tensor's variable.
func weight(scope *model.Scope, g *Graph, name string) *Node {
	v := scope.Store().GetVariable(VariablePath(name))
	if v == nil {
		panic(fmt.Errorf("qwen3: weight %q not loaded", name))
	}
	return gomlxfix.VariableNode(v, g)
}

// linear applies a Hugging Face linear weight [out, in] to x's last axis.
func linear(x, w *Node) *Node {
	return gomlxfix.DotGeneralMatmul(x, []int{x.Rank() - 1}, nil, w, []int{1}, nil)
}

// rmsNorm normalises x's last axis in float32, as transformers does, rounds the
// result to x's dtype and scales it by w, rounding the product to x's dtype:
// transformers' bfloat16 values. The product is taken in float32 (exact for
// two bfloat16 numbers, so that its rounding is the bfloat16 product) because
// w's gradient is a sum over every other axis of x, every position and head,
// in the product's dtype, and XLA sums bfloat16 in bfloat16
// (TestBFloat16NormWeightGradient). It uses 1/Sqrt rather than Rsqrt so that
// it differentiates on every backend.
func rmsNorm(x, w *Node, eps float64) *Node {
	xf := ConvertDType(x, dtypes.Float32)
	variance := ReduceAndKeep(Square(xf), ReduceMean, -1)
	normed := ConvertDType(ConvertDType(Div(xf, Sqrt(AddScalar(variance, eps))), x.DType()), dtypes.Float32)
	return ConvertDType(Mul(ExpandLeftToRank(ConvertDType(w, dtypes.Float32), x.Rank()), normed), x.DType())
}

// ropeTables returns cos and sin [batch, seq, headDim] (in dtype) for int32
// positions [batch, seq]: angle(p, i) = p * theta^(-2i/headDim), repeated for
// both halves of the head as transformers' default RoPE does.
func ropeTables(cfg Config, positions *Node, dtype dtypes.DType) (cos, sin *Node) {
	g := positions.Graph()
	half := cfg.HeadDim / 2
	inv := make([]float32, half)
	for i := range inv {
		// transformers computes this in float32: 1 / theta^(float32(2i)/dim).
		inv[i] = float32(1 / math.Pow(cfg.RopeTheta, float64(float32(2*i)/float32(cfg.HeadDim))))
		if cfg.RopeBF16 {
			inv[i] = toBF16(inv[i]).Float32()
		}
	}
	invFreq := Reshape(Const(g, inv), 1, 1, half)
	angles := Mul(InsertAxes(ConvertDType(positions, dtypes.Float32), -1), invFreq) // [b, s, half]
	angles = Concatenate([]*Node{angles, angles}, -1)                               // [b, s, headDim]
	return ConvertDType(Cos(angles), dtype), ConvertDType(Sin(angles), dtype)
}

// applyRope rotates x [batch, seq, heads, headDim] by the tables [batch, seq, headDim].
func applyRope(x, cos, sin *Node) *Node {
	half := x.Shape().Dimensions[3] / 2
	x1 := Slice(x, AxisRange(), AxisRange(), AxisRange(), AxisRange(0, half))
	x2 := Slice(x, AxisRange(), AxisRange(), AxisRange(), AxisRange(half))
	rotated := Concatenate([]*Node{Neg(x2), x1}, -1)
	cos, sin = InsertAxes(cos, 2), InsertAxes(sin, 2)
	return Add(Mul(x, cos), Mul(rotated, sin))
}

// attention is grouped-query attention. q: [b, t, heads, hd]; k, v: [b, s, kvHeads, hd]
// or, with headsFirst, [b, kvHeads, s, hd] (the cache's layout); visible: bool
// [b, t, s], true where query t may attend to key s. Scores come out of their
// product in float32, unrounded, as in flash attention (scores of 30 would be
// off by up to 0.06 in bfloat16, 6% of a probability), and the softmax is
// computed in float32; the probabilities are rounded to q's dtype for their
// product with v. Returns [b, t, heads*hd].
func attention(cfg Config, q, k, v, visible *Node, headsFirst bool) *Node {
	b, t := q.Shape().Dimensions[0], q.Shape().Dimensions[1]
	seqAxis, headAxis := 1, 2
	if headsFirst {
		seqAxis, headAxis = 2, 1
	}
	s := k.Shape().Dimensions[seqAxis]
	groups := cfg.Heads / cfg.KVHeads
	qg := Reshape(q, b, t, cfg.KVHeads, groups, cfg.HeadDim)
	scores := gomlxfix.DotGeneralMatmulF32(qg, []int{4}, []int{0, 2}, k, []int{3}, []int{0, headAxis}) // [b, kv, t, g, s]
	scores.AssertDims(b, cfg.KVHeads, t, groups, s)
	scores = MulScalar(scores, 1/math.Sqrt(float64(cfg.HeadDim)))
	mask := BroadcastToDims(Reshape(visible, b, 1, t, 1, s), b, cfg.KVHeads, t, groups, s)
	scores = Where(mask, scores, Scalar(q.Graph(), dtypes.Float32, maskedScore))
	probs := ConvertDType(Softmax(scores, -1), q.DType())
	out := gomlxfix.DotGeneralMatmul(probs, []int{4}, []int{0, 1}, v, []int{seqAxis}, []int{0, headAxis}) // [b, kv, t, g, hd]
	out = TransposeAllAxes(out, 0, 2, 1, 3, 4)                                                            // [b, t, kv, g, hd]
	return Reshape(out, b, t, cfg.Heads*cfg.HeadDim)
}

// causalAttention is attention of q [b, t, heads, hd] over k and v
// [b, t, kvHeads, hd] with the causal mask, as the backend's fused attention
// where it has one for these operands (XLA on CUDA lowers it, and its
// gradient, to cuDNN's flash attention in bfloat16 and float16, which never
// holds [b, heads, t, t] scores), else as attention. Returns [b, t, heads*hd].
// HiddenWith calls it where gomlxfix.FusedAttention says the fused op pays.
func causalAttention(cfg Config, q, k, v *Node) *Node {
	g := q.Graph()
	b, t := q.Shape().Dimensions[0], q.Shape().Dimensions[1]
	decomposed := func() *Node { return attention(cfg, q, k, v, causal(g, b, t), false) }
	ops := g.Backend().Capabilities().Operations
	if !ops[compute.OpTypeFusedScaledDotProductAttention] {
		return decomposed()
	}
	fused := func() *Node {
		out, _ := BackendFusedScaledDotProductAttention(q, k, v, compute.AttentionAxesLayoutBSHD,
			&compute.ScaledDotProductAttentionConfig{Causal: true}) // scale 1/sqrt(hd), as attention's
		return Reshape(out, b, t, cfg.Heads*cfg.HeadDim)
	}
	out, _ := InternalFusedOpCaller(fused, decomposed, !ops[compute.OpTypeFusedScaledDotProductAttentionVJP])
	return out
}

// kvFunc receives a layer's new keys and values [b, t, kvHeads, hd] and returns the
// keys and values to attend to, [b, s, kvHeads, hd] or, with headsFirst,
// [b, kvHeads, s, hd], with the visibility mask [b, t, s]. A nil mask means
// causal self-attention over the layer's own keys and values (causalAttention).
type kvFunc func(layer int, k, v *Node) (keys, values, visible *Node, headsFirst bool)

// decoder runs the embedding and every layer on ids [b, t] at int32 positions
// [b, t], and returns the final normalised hidden states [b, t, hidden]. With
// remat, each layer's activations are recomputed in the backward pass (kv must
// then not write anything, as Hidden's does not).
func decoder(scope *model.Scope, cfg Config, ids, positions *Node, kv kvFunc, remat bool) *Node {
	gomlxfix.Install()
	g := ids.Graph()
	b, t := ids.Shape().Dimensions[0], ids.Shape().Dimensions[1]
	emb := weight(scope, g, "model.embed_tokens.weight")
	dtype := emb.DType()
	x := embed(emb, ids) // [b, t, hidden]
	x.AssertDims(b, t, cfg.Hidden)
	cos, sin := ropeTables(cfg, positions, dtype)
	for i := 0; i < cfg.Layers; i++ {
		if remat {
			x = rematLayer(scope, cfg, i, x, cos, sin, kv)
		} else {
			w := func(name string) *Node { return weight(scope, g, layerWeight(i, name)) }
			x = decoderLayer(cfg, i, x, w, cos, sin, kv)
		}
		x.AssertDims(b, t, cfg.Hidden)
	}
	return rmsNorm(x, weight(scope, g, "model.norm.weight"), cfg.RMSNormEps)
}

// embed returns the rows of emb [vocab, hidden] for ids [b, t]: [b, t, hidden].
// Its gradient with respect to a bfloat16 emb is summed in float32
// (gomlxfix.Install's rule for Gather; TestBFloat16EmbeddingGradient).
func embed(emb, ids *Node) *Node {
	return Gather(emb, InsertAxes(ConvertDType(ids, dtypes.Int32), -1))
}

// layerTensors are the weights of a decoder layer, named after "model.layers.N.".
var layerTensors = []string{
	"input_layernorm", "self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj", "self_attn.q_norm",
	"self_attn.k_norm", "self_attn.o_proj", "post_attention_layernorm", "mlp.gate_proj", "mlp.up_proj", "mlp.down_proj",
}

// layerWeight returns the Hugging Face name of layer i's weight name.
func layerWeight(i int, name string) string { return fmt.Sprintf("model.layers.%d.%s.weight", i, name) }

// decoderLayer runs decoder layer i on x [b, t, hidden]; w returns the layer's
// weight of a layerTensors name.
func decoderLayer(cfg Config, i int, x *Node, w func(string) *Node, cos, sin *Node, kv kvFunc) *Node {
	b, t := x.Shape().Dimensions[0], x.Shape().Dimensions[1]
	eps := cfg.RMSNormEps
	h := rmsNorm(x, w("input_layernorm"), eps)
	q := Reshape(linear(h, w("self_attn.q_proj")), b, t, cfg.Heads, cfg.HeadDim)
	k := Reshape(linear(h, w("self_attn.k_proj")), b, t, cfg.KVHeads, cfg.HeadDim)
	v := Reshape(linear(h, w("self_attn.v_proj")), b, t, cfg.KVHeads, cfg.HeadDim)
	q = applyRope(rmsNorm(q, w("self_attn.q_norm"), eps), cos, sin)
	k = applyRope(rmsNorm(k, w("self_attn.k_norm"), eps), cos, sin)
	keys, values, visible, headsFirst := kv(i, k, v)
	var att *Node
	if visible == nil {
		att = causalAttention(cfg, q, keys, values)
	} else {
		att = attention(cfg, q, keys, values, visible, headsFirst)
	}
	x = Add(x, linear(att, w("self_attn.o_proj")))
	h = rmsNorm(x, w("post_attention_layernorm"), eps)
	gate := linear(h, w("mlp.gate_proj"))
	up := linear(h, w("mlp.up_proj"))
	return Add(x, linear(Mul(Mul(gate, Sigmoid(gate)), up), w("mlp.down_proj")))
}

// rematLayer is decoderLayer with its activations recomputed in the backward
// pass (rematerialise): only x is kept from the forward pass. GoMLX's own
// gradient checkpointing (Node.Checkpoint at each layer's input) recomputes
// only what depends on x, and so keeps every layer's causal mask and
// transposed weights for the backward (BenchmarkRematPeakMemory,
// TestRematKeepsNoActivations); rematerialise recomputes the whole layer.
func rematLayer(scope *model.Scope, cfg Config, i int, x, cos, sin *Node, kv kvFunc) *Node {
	inputs := []*Node{x}
	for _, name := range layerTensors {
		inputs = append(inputs, weight(scope, x.Graph(), layerWeight(i, name)))
	}
	f := func(in []*Node) []*Node {
		w := func(name string) *Node { return in[1+slices.Index(layerTensors, name)] }
		return []*Node{decoderLayer(cfg, i, in[0], w, cos, sin, kv)}
	}
	return rematerialise(nil, f, inputs...)[0]
}

// head maps hidden states [..., hidden] to float32 logits [..., vocab] with
// lm_head, or with the embedding when the embeddings are tied.
func head(scope *model.Scope, cfg Config, h *Node) *Node {
	return project(h, headWeight(scope, cfg, h.Graph()))
}

// headWeight returns lm_head's weight [vocab, hidden], or the embedding's when
// the embeddings are tied.
func headWeight(scope *model.Scope, cfg Config, g *Graph) *Node {
	name := "lm_head.weight"
	if cfg.TieEmbeddings {
		name = "model.embed_tokens.weight"
	}
	return weight(scope, g, name)
}

// project applies the head's weight w [vocab, hidden] to h [..., hidden] and
// returns float32 logits [..., vocab], summed in float32 and never rounded to
// the weights' dtype: a bfloat16 logit of 25 is off by up to 0.06, and so is
// every log-probability taken from it (TestBFloat16Logits). The gradients of h
// and w come in their own dtypes.
func project(h, w *Node) *Node {
	return gomlxfix.DotGeneralMatmulF32(h, []int{h.Rank() - 1}, nil, w, []int{1}, nil)
}

// causal returns the causal visibility mask [b, t, t] for self-attention.
func causal(g *Graph, b, t int) *Node {
	rows := Iota(g, shapes.Make(dtypes.Int32, b, t, t), 1)
	cols := Iota(g, shapes.Make(dtypes.Int32, b, t, t), 2)
	return LessOrEqual(cols, rows)
}

// Logits returns the float32 logits [batch, seq, vocab] for token ids [batch,
// seq] (any integer dtype), with causal attention and positions 0..seq-1. Rows
// padded on the right need no mask: padding never changes earlier positions.
func Logits(scope *model.Scope, cfg Config, ids *Node) *Node {
	return head(scope, cfg, Hidden(scope, cfg, ids))
}

// Hidden returns the final normalised hidden states [batch, seq, hidden] for ids
// [batch, seq] (causal attention, positions 0..seq-1).
func Hidden(scope *model.Scope, cfg Config, ids *Node) *Node {
	return HiddenWith(scope, cfg, ids, ModelOptions{})
}

// HiddenWith is Hidden built as opts say (opts.Remat and
// opts.DecomposedAttention matter here): the same values, with a backward pass
// that may hold less memory.
func HiddenWith(scope *model.Scope, cfg Config, ids *Node, opts ModelOptions) *Node {
	g := ids.Graph()
	b, t := ids.Shape().Dimensions[0], ids.Shape().Dimensions[1]
	positions := Iota(g, shapes.Make(dtypes.Int32, b, t), 1)
	var visible *Node // nil: causalAttention, the backend's fused attention
	if opts.DecomposedAttention || !gomlxfix.FusedAttention(g.Backend()) {
		visible = causal(g, b, t)
	}
	kv := func(_ int, k, v *Node) (*Node, *Node, *Node, bool) { return k, v, visible, false }
	return decoder(scope, cfg, ids, positions, kv, opts.Remat)
}

// LastLogits returns the float32 logits [batch, vocab] after each row's last
// real token, for right-padded ids [batch, seq] with lens [batch] real tokens
// (1 to seq). Only those rows of hidden states go through the head, which
// matters for a large vocabulary.
func LastLogits(scope *model.Scope, cfg Config, ids, lens *Node) *Node {
	g := ids.Graph()
	b, t := ids.Shape().Dimensions[0], ids.Shape().Dimensions[1]
	h := Hidden(scope, cfg, ids)
	isLast := Equal(Iota(g, shapes.Make(dtypes.Int32, b, t), 1),
		BroadcastToDims(InsertAxes(AddScalar(ConvertDType(lens, dtypes.Int32), -1), -1), b, t))
	last := gomlxfix.DotGeneralMatmul(ConvertDType(isLast, h.DType()), []int{1}, []int{0}, h, []int{1}, []int{0}) // [b, hidden]
	return head(scope, cfg, last)
}
