package bench

import (
	"fmt"
	"testing"

	"github.com/gomlx/compute"
	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"

	"github.com/mathrl/mathrl/gomlx_trainer/backend/backendtest"
	"github.com/mathrl/mathrl/gomlx_trainer/gomlxfix"
)

// Qwen3-0.6B's head: a tied [vocabulary, hidden] weight.
const headVocab, headHidden = 151936, 1024

// headLayouts are ways to build the head's x·wT on rows hidden states, the
// model's first (gomlxfix.DotGeneralMatmul): GoMLX's DotGeneral as it is, the
// weight first with the result transposed, the weight transposed first, and
// the vocabulary split into 8 products.
var headLayouts = []struct {
	name string
	fn   func(x, w *graph.Node) *graph.Node
}{
	{"model", func(x, w *graph.Node) *graph.Node {
		return gomlxfix.DotGeneralMatmul(x, []int{1}, nil, w, []int{1}, nil)
	}},
	{"dotgeneral", func(x, w *graph.Node) *graph.Node { return graph.DotGeneral(x, []int{1}, nil, w, []int{1}, nil) }},
	{"weight-first", func(x, w *graph.Node) *graph.Node {
		return graph.Transpose(graph.DotGeneral(w, []int{1}, nil, x, []int{1}, nil), 0, 1)
	}},
	{"transposed-weight", func(x, w *graph.Node) *graph.Node { return graph.Dot(x, graph.Transpose(w, 0, 1)).Product() }},
	{"vocabulary-in-8", func(x, w *graph.Node) *graph.Node {
		parts := make([]*graph.Node, 8)
		n := headVocab / 8
		for i := range parts {
			parts[i] = graph.DotGeneral(x, []int{1}, nil, graph.Slice(w, graph.AxisRange(i*n, (i+1)*n)), []int{1}, nil)
		}
		return graph.Concatenate(parts, 1)
	}},
}

// headInputGrads are ways to build the head's input gradient g·w of a
// training step's 2,048 tokens: the model's, GoMLX's DotGeneral, and the
// vocabulary contraction split into 8 products summed.
var headInputGrads = []struct {
	name string
	fn   func(g, w *graph.Node) *graph.Node
}{
	{"model", func(g, w *graph.Node) *graph.Node {
		return gomlxfix.DotGeneralMatmul(g, []int{1}, nil, w, []int{0}, nil)
	}},
	{"dotgeneral", func(g, w *graph.Node) *graph.Node { return graph.DotGeneral(g, []int{1}, nil, w, []int{0}, nil) }},
	{"vocabulary-in-8", func(g, w *graph.Node) *graph.Node {
		n := headVocab / 8
		var sum *graph.Node
		for i := range 8 {
			gc := graph.Slice(g, graph.AxisRange(), graph.AxisRange(i*n, (i+1)*n))
			p := graph.DotGeneral(gc, []int{1}, nil, graph.Slice(w, graph.AxisRange(i*n, (i+1)*n)), []int{0}, nil)
			if sum == nil {
				sum = p
			} else {
				sum = graph.Add(sum, p)
			}
		}
		return sum
	}},
}

// BenchmarkHeadLayouts times the head's product in each of headLayouts at a
// decode step's 16 and 64 rows, summed to a scalar as MeasureProducts does.
// On XLA's CPU compiler the four whole products are one dot after its layout
// passes and time alike; the split one pays for its slices:
//
//	MATHRL_TEST_BACKEND=xla-cpu go test ./gomlx_trainer/bench -run '^$' -bench HeadLayouts
func BenchmarkHeadLayouts(b *testing.B) {
	be := backendtest.New(b)
	w := matrix([2]int{headVocab, headHidden}, dtypes.Float32, 2)
	for _, rows := range []int{16, 64} {
		x := matrix([2]int{rows, headHidden}, dtypes.Float32, 1)
		for _, l := range headLayouts {
			b.Run(fmt.Sprintf("rows=%d/%s", rows, l.name), func(b *testing.B) {
				benchmarkProduct(b, be, l.fn, x, w, 2*float64(rows*headVocab*headHidden))
			})
		}
	}
}

// BenchmarkHeadInputGrad times the head's input gradient of 2,048 tokens in
// each of headInputGrads:
//
//	MATHRL_TEST_BACKEND=xla-cpu go test ./gomlx_trainer/bench -run '^$' -bench HeadInputGrad -benchtime 3x
func BenchmarkHeadInputGrad(b *testing.B) {
	be := backendtest.New(b)
	w := matrix([2]int{headVocab, headHidden}, dtypes.Float32, 2)
	g := matrix([2]int{2048, headVocab}, dtypes.Float32, 3)
	for _, l := range headInputGrads {
		b.Run(l.name, func(b *testing.B) {
			benchmarkProduct(b, be, l.fn, g, w, 2*2048*float64(headVocab*headHidden))
		})
	}
}

// benchmarkProduct compiles fn's product of x and y summed to a scalar, calls
// it once, then times b.N calls and reports their FLOP/s.
func benchmarkProduct(b *testing.B, be compute.Backend, fn func(x, y *graph.Node) *graph.Node, x, y *tensors.Tensor, flops float64) {
	exec := graph.MustNewExec(be, func(x, y *graph.Node) *graph.Node { return graph.ReduceAllSum(fn(x, y)) })
	defer exec.Finalize()
	call := func() {
		out := exec.MustExec(x, y)
		out[0].MustConstFlatData(func(any) {})
		out[0].FinalizeAll()
	}
	call() // compiles
	b.ResetTimer()
	for range b.N {
		call()
	}
	b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
}
