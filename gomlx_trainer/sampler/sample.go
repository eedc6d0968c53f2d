package sampler

import (
	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/shapes"
	. "github.com/gomlx/gomlx/core/graph" //nolint:revive // GoMLX's graph DSL reads best dot-imported
)

// bisectSteps is how many halvings the top-k and top-p threshold searches make:
// 40 halvings of a float32 logit range pin the threshold to within float32
// resolution, so the kept set is exact except for exact ties.
const bisectSteps = 40

// mode is the part of the sampling options that changes the graph (each mode
// is compiled once); temperature, k and p themselves are inputs.
type mode struct {
	greedy bool
	topK   bool
	topP   bool
}

// pick chooses one token per row from float32 logits [b, vocab] and returns its
// id [b] (int32) and its log-probability [b] under log_softmax(logits/temperature)
// (log_softmax(logits) when greedy). Row i's noise comes from key[i] (see
// noise), so a row's draw depends on its seed, its position and its logits
// only: not on the other rows of the batch.
//
// Sampling is the Gumbel-max trick: argmax(logits/T + Gumbel noise) over the
// kept tokens is a draw from softmax(logits/T) restricted to them. Top-k keeps
// the tokens whose scaled logit is at least the k-th largest; top-p then keeps
// the fewest most likely tokens whose probability (renormalised after top-k)
// sums to at least p. Both thresholds are found by bisection, since there is no
// sort op.
func pick(m mode, logits, temperature, topK, topP, key *Node) (ids, logProbs *Node) {
	g := logits.Graph()
	if m.greedy {
		ids = ArgMax(logits, -1, dtypes.Int32)
		return ids, chosen(LogSoftmax(logits, -1), ids)
	}
	scaled := Div(logits, temperature)
	logp := LogSoftmax(scaled, -1)
	keepMask := kept(m, logits, temperature, topK, topP)
	u := noise(key, logits.Shape().Dimensions[1])
	gumbel := Neg(Log(Neg(Log(u))))
	noisy := Add(scaled, gumbel)
	if keepMask != nil {
		noisy = Where(keepMask, noisy, Scalar(g, dtypes.Float32, -1e30))
	}
	ids = ArgMax(noisy, -1, dtypes.Int32)
	return ids, chosen(logp, ids)
}

// noise returns uniform draws [b, vocab] in (0, 1) from key [b] (uint32, the
// row's seed and position hashed, see DrawKey): draw [i, v] is a hash of
// key[i] and v, a counter-based generator, so a token's draw is the same in
// whatever batch, order or process its sequence is sampled.
func noise(key *Node, vocab int) *Node {
	g := key.Graph()
	b := key.Shape().Dimensions[0]
	col := fmix32Node(AddScalar(Iota(g, shapes.Make(dtypes.Uint32, 1, vocab), 1), 0x9e3779b9))
	row := Reshape(key, b, 1)
	h := fmix32Node(Add(fmix32Node(BitwiseXor(row, col)), row))
	bits := ConvertDType(BitwiseShiftRightLogicalScalar(h, 8), dtypes.Float32) // 24 bits, exact in float32
	return MulScalar(AddScalar(bits, 0.5), 1.0/(1<<24))
}

// fmix32Node is fmix32 in the graph (uint32 arithmetic wraps).
func fmix32Node(h *Node) *Node {
	h = BitwiseXor(h, BitwiseShiftRightLogicalScalar(h, 16))
	h = MulScalar(h, 0x85ebca6b)
	h = BitwiseXor(h, BitwiseShiftRightLogicalScalar(h, 13))
	h = MulScalar(h, 0xc2b2ae35)
	return BitwiseXor(h, BitwiseShiftRightLogicalScalar(h, 16))
}

// kept returns the mask [b, vocab] of the tokens that top-k and then top-p
// keep from logits [b, vocab] at temperature (see pick); nil when the mode
// keeps every token.
func kept(m mode, logits, temperature, topK, topP *Node) *Node {
	scaled := Div(logits, temperature)
	var keepMask *Node // nil keeps every token
	if m.topK {
		k := ConvertDType(topK, dtypes.Float32)
		lo := ReduceAndKeep(scaled, ReduceMin, -1)
		hi := ReduceAndKeep(scaled, ReduceMax, -1)
		for i := 0; i < bisectSteps; i++ {
			mid := MulScalar(Add(lo, hi), 0.5)
			count := ReduceAndKeep(ConvertDType(GreaterOrEqual(scaled, mid), dtypes.Float32), ReduceSum, -1)
			enough := GreaterOrEqual(count, k)
			lo = Where(enough, mid, lo)
			hi = Where(enough, hi, mid)
		}
		keepMask = GreaterOrEqual(scaled, lo)
	}
	if m.topP {
		probs := MaskedSoftmax(scaled, keepMask, -1)
		lo := ZerosLike(ReduceAndKeep(probs, ReduceMax, -1))
		hi := ReduceAndKeep(probs, ReduceMax, -1)
		for i := 0; i < bisectSteps; i++ {
			mid := MulScalar(Add(lo, hi), 0.5)
			mass := ReduceAndKeep(Where(GreaterOrEqual(probs, mid), probs, ZerosLike(probs)), ReduceSum, -1)
			enough := GreaterOrEqual(mass, topP)
			lo = Where(enough, mid, lo)
			hi = Where(enough, hi, mid)
		}
		top := GreaterOrEqual(probs, lo)
		if keepMask != nil {
			top = And(keepMask, top)
		}
		keepMask = top
	}
	return keepMask
}

// chosen returns values[b, ids[b]].
func chosen(values, ids *Node) *Node {
	vocab := values.Shape().Dimensions[1]
	return ReduceSum(Mul(values, OneHot(ids, vocab, values.DType())), -1)
}
