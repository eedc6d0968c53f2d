package qwen3

import (
	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/shapes"
	. "github.com/gomlx/gomlx/core/graph" //nolint:revive // GoMLX's graph DSL reads best dot-imported
	"github.com/gomlx/gomlx/ml/model"
)

// TargetLogProbs returns, for logits [batch, seq, vocab] and targets [batch,
// seq] (the id that follows each position), the log-probability of each target
// and the entropy of each position's distribution, both [batch, seq] in
// float32. Logits are divided by temperature first (as the sampler does),
// unless it is 0 or 1. Vocabularies up to 4,096 ids pick the target with a
// one-hot product, larger ones with a gather (a [batch, seq, vocab] one-hot
// would double the memory of the logits); neither slices, so the gradient works
// on every backend.
func TargetLogProbs(logits, targets *Node, temperature float64) (logp, entropy *Node) {
	return targetLogProbs(logits, targets, temperature, logits.Shape().Dim(2) > oneHotVocab)
}

// oneHotVocab is the largest vocabulary for which TargetLogProbs picks targets
// with a one-hot product (cheap for byte-level vocabularies, and its gradient
// needs no scatter).
const oneHotVocab = 4096

func targetLogProbs(logits, targets *Node, temperature float64, gather bool) (logp, entropy *Node) {
	b, t, v := logits.Shape().Dim(0), logits.Shape().Dim(1), logits.Shape().Dim(2)
	targets.AssertDims(b, t)
	if logits.DType() != dtypes.Float32 && logits.DType() != dtypes.Float64 {
		logits = ConvertDType(logits, dtypes.Float32)
	}
	if temperature != 0 && temperature != 1 {
		logits = DivScalar(logits, temperature)
	}
	logSoftmax := LogSoftmax(logits, -1)
	if !gather {
		logp = ReduceSum(Mul(OneHot(targets, v, logits.DType()), logSoftmax), -1)
	} else {
		g := logits.Graph()
		index := Concatenate([]*Node{
			InsertAxes(Iota(g, shapes.Make(dtypes.Int32, b, t), 0), -1),
			InsertAxes(Iota(g, shapes.Make(dtypes.Int32, b, t), 1), -1),
			InsertAxes(ConvertDType(targets, dtypes.Int32), -1),
		}, -1) // [b, t, 3]
		logp = Gather(logSoftmax, index)
	}
	entropy = Neg(ReduceSum(Mul(Exp(logSoftmax), logSoftmax), -1))
	return logp, entropy
}

// TokenLogProbs returns, for token ids [batch, seq], the float32
// log-probability [batch, seq] of each token given the ones before it under
// log_softmax(logits / temperature); position 0 has no prediction and is 0.
// It is TargetLogProbs of the model's logits with the ids shifted by one.
// Right padding needs no mask; mask the result instead.
func TokenLogProbs(scope *model.Scope, cfg Config, ids *Node, temperature float64) *Node {
	return TokenLogProbsWith(scope, cfg, ids, temperature, ModelOptions{})
}

// TokenLogProbsWith is TokenLogProbs with the graph built as opts say
// (TargetLogProbsOf).
func TokenLogProbsWith(scope *model.Scope, cfg Config, ids *Node, temperature float64, opts ModelOptions) *Node {
	g := ids.Graph()
	b, t := ids.Shape().Dimensions[0], ids.Shape().Dimensions[1]
	if t == 1 {
		return Zeros(g, shapes.Make(dtypes.Float32, b, 1))
	}
	ids32 := ConvertDType(ids, dtypes.Int32)
	// next[b, i] = ids[b, i+1]; the last column is a placeholder that is dropped.
	next := Concatenate([]*Node{Slice(ids32, AxisRange(), AxisRange(1)), Zeros(g, shapes.Make(dtypes.Int32, b, 1))}, 1)
	logp, _ := TargetLogProbsOf(scope, cfg, ids, next, temperature, opts)
	return Concatenate([]*Node{Zeros(g, shapes.Make(dtypes.Float32, b, 1)), Slice(logp, AxisRange(), AxisRange(0, t-1))}, 1)
}
