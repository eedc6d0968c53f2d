package gomlxfix

import (
	"math/rand/v2"
	"testing"
	"time"

	. "github.com/gomlx/gomlx/core/graph"

	"github.com/mathrl/mathrl/gomlx_trainer/backend/backendtest"
)

// BenchmarkMLPGradient times the gradient of a two-layer MLP (the shape of a
// transformer's feed-forward block, weights [out, in] as Hugging Face stores
// them) built with GoMLX's DotGeneral and gradient rule, and with
// DotGeneralMatmul and this package's rule, in the same run, and reports the
// speed-up as "speedup".
//
//	go test -run X -bench MLPGradient -benchtime 3x ./gomlx_trainer/gomlxfix/
func BenchmarkMLPGradient(b *testing.B) {
	backend := backendtest.New(b)
	rng := rand.New(rand.NewPCG(5, 6))
	x, w1, w2 := randTensor(rng, 64, 128), randTensor(rng, 384, 128), randTensor(rng, 128, 384)
	build := func(ours bool) *Exec {
		linear := func(x, w *Node) *Node { return DotGeneral(x, []int{1}, nil, w, []int{1}, nil) }
		if ours {
			linear = func(x, w *Node) *Node { return DotGeneralMatmul(x, []int{1}, nil, w, []int{1}, nil) }
		}
		return MustNewExec(backend, func(x, w1, w2 *Node) []*Node {
			h := Tanh(linear(x, w1))
			loss := ReduceAllSum(Square(linear(h, w2)))
			return Gradient(loss, w1, w2)
		})
	}
	timeIt := func(ours bool) time.Duration {
		var d time.Duration
		withRules(ours, func() {
			e := build(ours)
			e.MustCall(x, w1, w2) // compile
			start := time.Now()
			for range b.N {
				e.MustCall(x, w1, w2)
			}
			d = time.Since(start)
		})
		return d
	}
	base := timeIt(false)
	fixed := timeIt(true)
	b.ReportMetric(float64(base)/float64(b.N)/1e6, "gomlx-ms/op")
	b.ReportMetric(float64(fixed)/float64(b.N)/1e6, "gomlxfix-ms/op")
	b.ReportMetric(float64(base)/float64(fixed), "speedup")
}

// withRules runs fn with either GoMLX's original rules or this package's in
// GoMLX's rule table, then puts ours back: the benchmark needs GoMLX's rules as
// its baseline in the same run (the tests never swap rules).
func withRules(ours bool, fn func()) {
	Install()
	saved := map[NodeType]VJP{}
	for k := range original {
		saved[k] = VJPRegistration[k]
		if !ours {
			VJPRegistration[k] = original[k]
		}
	}
	defer func() {
		for k, v := range saved {
			VJPRegistration[k] = v
		}
	}()
	fn()
}

// BenchmarkDecodeProducts times the matrix products of one decoding step of
// the tiny model (batch 16: a projection with a [out, in] weight, and the
// attention scores and output over a heads-first cache of 128 slots) with
// graph.DotGeneral and with DotGeneralMatmul, in the same run, and reports
// the speed-up as "speedup".
//
//	go test -run X -bench DecodeProducts -benchtime 200x ./gomlx_trainer/gomlxfix/
func BenchmarkDecodeProducts(b *testing.B) {
	backend := backendtest.New(b)
	rng := rand.New(rand.NewPCG(9, 10))
	h, w := randTensor(rng, 16, 64), randTensor(rng, 300, 64)
	q, k, v := randTensor(rng, 16, 1, 2, 2, 16), randTensor(rng, 16, 2, 128, 16), randTensor(rng, 16, 2, 128, 16)
	build := func(dot func(lhs *Node, lc, lb []int, rhs *Node, rc, rb []int) *Node) *Exec {
		return MustNewExec(backend, func(h, w, q, k, v *Node) []*Node {
			scores := dot(q, []int{4}, []int{0, 2}, k, []int{3}, []int{0, 1}) // [b, kv, t, g, s]
			return []*Node{dot(h, []int{1}, nil, w, []int{1}, nil), dot(scores, []int{4}, []int{0, 1}, v, []int{2}, []int{0, 1})}
		})
	}
	timeIt := func(e *Exec) time.Duration {
		e.MustCall(h, w, q, k, v) // compile
		start := time.Now()
		for range b.N {
			e.MustCall(h, w, q, k, v)
		}
		return time.Since(start)
	}
	base := timeIt(build(DotGeneral))
	fixed := timeIt(build(DotGeneralMatmul))
	b.ReportMetric(float64(base)/float64(b.N)/1e3, "gomlx-us/op")
	b.ReportMetric(float64(fixed)/float64(b.N)/1e3, "gomlxfix-us/op")
	b.ReportMetric(float64(base)/float64(fixed), "speedup")
}
