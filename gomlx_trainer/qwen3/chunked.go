package qwen3

import (
	"fmt"

	. "github.com/gomlx/gomlx/core/graph" //nolint:revive // GoMLX's graph DSL reads best dot-imported
	"github.com/gomlx/gomlx/ml/model"

	"github.com/mathrl/mathrl/gomlx_trainer/gomlxfix"
)

// TargetLogProbsChunked returns what TargetLogProbs returns for the logits of
// the final hidden states [batch, seq, hidden] (Hidden) — each target's
// log-probability and each position's entropy, [batch, seq] float32 — without
// any [batch, seq, vocab] tensor in the forward or the backward pass: chunk
// positions at a time go through the LM head, the log-softmax and the target
// pick, and each chunk's logits are computed again in the backward pass instead
// of being kept. Gradients flow to hidden and to the head's weight. The chunks
// run one after another, so at most one chunk's logits (and their backward
// temporaries) are alive at a time. It panics if chunk < 1.
func TargetLogProbsChunked(scope *model.Scope, cfg Config, hidden, targets *Node, temperature float64, chunk int) (logp, entropy *Node) {
	if chunk < 1 {
		panic(fmt.Errorf("qwen3: log-prob chunk %d, want at least 1", chunk))
	}
	gomlxfix.Install() // Slice's gradient on every backend
	b, t := hidden.Shape().Dim(0), hidden.Shape().Dim(1)
	hidden.AssertDims(b, t, cfg.Hidden)
	targets.AssertDims(b, t)
	w := headWeight(scope, cfg, hidden.Graph())
	gather := cfg.VocabSize > oneHotVocab
	seq := &rematSeq{}
	var lps, ents []*Node
	for start := 0; start < t; start += chunk {
		end := min(start+chunk, t)
		h := Slice(hidden, AxisRange(), AxisRange(start, end))
		tg := Slice(targets, AxisRange(), AxisRange(start, end))
		out := rematerialise(seq, func(in []*Node) []*Node {
			lp, ent := targetLogProbs(project(in[0], in[1]), tg, temperature, gather)
			return []*Node{lp, ent}
		}, h, w)
		lps, ents = append(lps, out[0]), append(ents, out[1])
	}
	logp, entropy = Concatenate(lps, 1), Concatenate(ents, 1)
	logp.AssertDims(b, t)
	entropy.AssertDims(b, t)
	return logp, entropy
}

// TargetLogProbsOf returns TargetLogProbs(Logits(scope, cfg, ids), targets,
// temperature), built as opts say: with the zero ModelOptions it is exactly
// that graph.
func TargetLogProbsOf(scope *model.Scope, cfg Config, ids, targets *Node, temperature float64, opts ModelOptions) (logp, entropy *Node) {
	return TargetLogProbsFromHidden(scope, cfg, HiddenWith(scope, cfg, ids, opts), targets, temperature, opts)
}

// TargetLogProbsFromHidden is TargetLogProbsOf from the hidden states h
// [batch, seq, hidden] that HiddenWith returns, for a caller that uses them
// too (FlowRL's log Z head): the same values, from the same forward pass.
func TargetLogProbsFromHidden(scope *model.Scope, cfg Config, h, targets *Node, temperature float64, opts ModelOptions) (logp, entropy *Node) {
	if opts.LogProbChunk > 0 {
		return TargetLogProbsChunked(scope, cfg, h, targets, temperature, opts.LogProbChunk)
	}
	return TargetLogProbs(head(scope, cfg, h), targets, temperature)
}
