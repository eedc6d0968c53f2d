package qwen3

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gomlx/compute"
	"github.com/gomlx/compute/dtypes"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/ml/model"

	"github.com/mathrl/mathrl/gomlx_trainer/backend/backendtest"
)

// bigVocab is a one-layer model whose vocabulary is past oneHotVocab (so
// targets are picked with a gather) and whose head is its own lm_head.
var bigVocab = Config{VocabSize: 5000, Hidden: 32, Intermediate: 64, Layers: 1, Heads: 2, KVHeads: 1, HeadDim: 16,
	RMSNormEps: 1e-6, RopeTheta: 10000, MaxPositions: 64, EOSTokenIDs: []int{2}, DType: "float32"}

// optionModels are the models the ModelOptions tests run on: the tiny
// checkpoint and bigVocab with random weights.
func optionModels(t *testing.T) map[string]*Model {
	t.Helper()
	dir, _ := loadReference(t)
	tiny, err := Load(dir, dtypes.Float32)
	if err != nil {
		t.Fatal(err)
	}
	big, err := NewRandom(bigVocab, dtypes.Float32, 7)
	if err != nil {
		t.Fatal(err)
	}
	return map[string]*Model{"tiny": tiny, "big-vocab": big}
}

// logProbsAndGrads runs TargetLogProbsOf on ids and targets [2, 11] and returns
// the log-probs, the entropies and the gradients of Σ a·logp + Σ c·entropy
// (a and c differ at every position) with respect to every weight, in
// cfg.Tensors() order, all flattened.
func logProbsAndGrads(t *testing.T, b compute.Backend, m *Model, opts ModelOptions) [][]float32 {
	t.Helper()
	rng := rand.New(rand.NewPCG(1, 2))
	ids, targets := make([][]int32, 2), make([][]int32, 2)
	a, c := make([][]float32, 2), make([][]float32, 2)
	for r := range ids {
		for range 11 {
			ids[r] = append(ids[r], int32(rng.IntN(m.Config.VocabSize)))
			targets[r] = append(targets[r], int32(rng.IntN(m.Config.VocabSize)))
			a[r] = append(a[r], float32(rng.NormFloat64()))
			c[r] = append(c[r], float32(rng.NormFloat64()))
		}
	}
	exec := model.MustNewExec(b, m.Store, func(scope *model.Scope, in []*Node) []*Node {
		logp, entropy := TargetLogProbsOf(scope, m.Config, in[0], in[1], 0.7, opts)
		loss := Add(ReduceAllSum(Mul(in[2], logp)), ReduceAllSum(Mul(in[3], entropy)))
		var ws []*Node
		for _, spec := range m.Config.Tensors() {
			ws = append(ws, weight(scope, in[0].Graph(), spec.Name))
		}
		return append([]*Node{logp, entropy}, Gradient(loss, ws...)...)
	})
	out, err := exec.Call(ids, targets, a, c)
	if err != nil {
		t.Fatal(err)
	}
	res := make([][]float32, len(out))
	for i, o := range out {
		if res[i], err = Float32s(o); err != nil {
			t.Fatal(err)
		}
	}
	return res
}

// TestModelOptionsSameValues checks that chunked log-probs and rematerialised
// layers give the plain graph's log-probs, entropies and weight gradients,
// within 1e-5 of each tensor's largest magnitude.
func TestModelOptionsSameValues(t *testing.T) {
	b := backendtest.New(t)
	for name, m := range optionModels(t) {
		want := logProbsAndGrads(t, b, m, ModelOptions{})
		labels := []string{"logp", "entropy"}
		for _, spec := range m.Config.Tensors() {
			labels = append(labels, "d "+spec.Name)
		}
		for _, opts := range []ModelOptions{
			{LogProbChunk: 1}, {LogProbChunk: 4}, {LogProbChunk: 11}, {LogProbChunk: 64},
			{Remat: true}, {Remat: true, LogProbChunk: 3},
		} {
			got := logProbsAndGrads(t, b, m, opts)
			for i := range want {
				if d := maxDiff(got[i], want[i]); d > 1e-5*math.Max(1, maxAbs(want[i])) {
					t.Errorf("%s %+v: %s differs by %g (largest magnitude %g)", name, opts, labels[i], d, maxAbs(want[i]))
				}
			}
		}
	}
}

// TestChunkedGraphHasNoFullLogits builds the log-probs and their gradient
// and looks for any node as large as [batch, seq, vocab]: the plain graph has
// some, the chunked one must have none.
func TestChunkedGraphHasNoFullLogits(t *testing.T) {
	m, err := NewRandom(bigVocab, dtypes.Float32, 7)
	if err != nil {
		t.Fatal(err)
	}
	b := backendtest.New(t)
	const batch, seq = 2, 24 // more than the head's [vocab, hidden]
	full := batch * seq * bigVocab.VocabSize
	for _, tc := range []struct {
		opts ModelOptions
		want bool
	}{{ModelOptions{}, true}, {ModelOptions{LogProbChunk: 4}, false}, {ModelOptions{LogProbChunk: 8, Remat: true}, false}} {
		largest := 0
		exec := model.MustNewExec(b, m.Store, func(scope *model.Scope, ids, targets *Node) *Node {
			logp, entropy := TargetLogProbsOf(scope, m.Config, ids, targets, 1, tc.opts)
			loss := ReduceAllSum(Add(logp, entropy))
			grad := Gradient(loss, headWeight(scope, m.Config, ids.Graph()))[0]
			for _, n := range ids.Graph().Nodes() {
				largest = max(largest, n.Shape().Size())
			}
			return grad
		})
		ids := make([][]int32, batch)
		for r := range ids {
			ids[r] = make([]int32, seq)
		}
		if _, err := exec.Call(ids, ids); err != nil {
			t.Fatal(err)
		}
		if got := largest >= full; got != tc.want {
			t.Errorf("%+v: largest node has %d elements; [batch, seq, vocab] has %d", tc.opts, largest, full)
		}
	}
}

// TestRematKeepsNoActivations builds the gradient of the tiny model's
// log-probs and lists the forward values (other than weights) larger than a
// layer's input [batch, seq, hidden] that the backward pass reads: the plain
// graph reads many (attention scores, MLP activations, logits), the one with
// rematerialised layers still the logits, and with chunked log-probs too none.
func TestRematKeepsNoActivations(t *testing.T) {
	b := backendtest.New(t)
	cfg, err := NamedConfig("tiny")
	if err != nil {
		t.Fatal(err)
	}
	m, err := NewRandom(cfg, dtypes.Float32, 3)
	if err != nil {
		t.Fatal(err)
	}
	const batch, seq = 2, 32
	for _, tc := range []struct {
		opts ModelOptions
		want bool
	}{{ModelOptions{}, true}, {ModelOptions{Remat: true}, true}, {ModelOptions{Remat: true, LogProbChunk: 4}, false}} {
		var kept []string
		exec := model.MustNewExec(b, m.Store, func(scope *model.Scope, ids, targets *Node) *Node {
			logp, _ := TargetLogProbsOf(scope, cfg, ids, targets, 1, tc.opts)
			loss := ReduceAllSum(logp)
			grad := Gradient(loss, weight(scope, ids.Graph(), "model.layers.0.mlp.up_proj.weight"))[0]
			kept = keptForBackward(ids.Graph(), loss, batch*seq*cfg.Hidden)
			return grad
		})
		ids := randomIDs(batch, seq, cfg.VocabSize, 1)
		if _, err := exec.Call(ids, ids); err != nil {
			t.Fatal(err)
		}
		if got := len(kept) > 0; got != tc.want {
			t.Errorf("%+v: the backward pass reads %d forward values larger than %d elements: %v",
				tc.opts, len(kept), batch*seq*cfg.Hidden, kept)
		}
	}
}

// keptForBackward lists the nodes built before loss (the forward pass), other
// than parameters, with more than size elements, that a node built after it
// (the backward pass) takes as input.
func keptForBackward(g *Graph, loss *Node, size int) []string {
	seen := map[NodeId]bool{}
	var kept []string
	for _, n := range g.Nodes() {
		if n.Id() <= loss.Id() {
			continue
		}
		for _, in := range n.Inputs() {
			if in.Id() < loss.Id() && in.Type() != NodeTypeParameter && in.Shape().Size() > size && !seen[in.Id()] {
				seen[in.Id()] = true
				kept = append(kept, in.Type().String()+in.Shape().String())
			}
		}
	}
	return kept
}

func maxDiff(a, b []float32) float64 {
	d := 0.0
	for i := range a {
		d = math.Max(d, math.Abs(float64(a[i])-float64(b[i])))
	}
	return d
}

func maxAbs(a []float32) float64 {
	m := 0.0
	for _, v := range a {
		m = math.Max(m, math.Abs(float64(v)))
	}
	return m
}
