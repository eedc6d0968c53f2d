package gomlxfix

import (
	"math/rand/v2"
	"testing"
	"time"

	. "github.com/gomlx/gomlx/pkg/core/graph"

	"github.com/mathrl/mathrl/gomlx_trainer/backend/backendtest"
)

// BenchmarkMLPGradient times the gradient of a two-layer MLP (the shape of a
// transformer's feed-forward block) with GoMLX's rules and with this package's,
// in the same run, and reports the speed-up as "speedup".
//
//	go test -run X -bench MLPGradient -benchtime 3x ./gomlx_trainer/gomlxfix/
func BenchmarkMLPGradient(b *testing.B) {
	backend := backendtest.New(b)
	rng := rand.New(rand.NewPCG(5, 6))
	x, w1, w2 := randTensor(rng, 64, 128), randTensor(rng, 128, 384), randTensor(rng, 384, 128)
	build := func() *Exec {
		return MustNewExec(backend, func(x, w1, w2 *Node) []*Node {
			h := Tanh(Dot(x, w1))
			loss := ReduceAllSum(Square(Dot(h, w2)))
			return Gradient(loss, w1, w2)
		})
	}
	timeIt := func(ours bool) time.Duration {
		var d time.Duration
		withRules(ours, func() {
			e := build()
			e.MustExec(x, w1, w2) // compile
			start := time.Now()
			for range b.N {
				e.MustExec(x, w1, w2)
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
