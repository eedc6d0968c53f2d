package qwen3

import (
	"math"
	"testing"

	. "github.com/gomlx/gomlx/core/graph"

	"github.com/mathrl/mathrl/gomlx_trainer/backend/backendtest"
)

func TestTargetLogProbs(t *testing.T) {
	backend := backendtest.New(t)
	logits := [][][]float32{
		{{1, 2, 0.5}, {-1, 0, 3}},
		{{0.2, 0.2, 0.2}, {5, -5, 0}},
	}
	targets := [][]int32{{1, 2}, {0, 1}}
	for _, temp := range []float64{1, 0.7} {
		res := MustExecOnceN(backend, func(l, tg *Node) []*Node {
			lp, ent := TargetLogProbs(l, tg, temp)
			return []*Node{lp, ent}
		}, logits, targets)
		lp := res[0].Value().([][]float32)
		ent := res[1].Value().([][]float32)
		for b := range logits {
			for p := range logits[b] {
				// log-softmax by hand
				var z float64
				for _, x := range logits[b][p] {
					z += math.Exp(float64(x) / temp)
				}
				want := float64(logits[b][p][targets[b][p]])/temp - math.Log(z)
				var h float64
				for _, x := range logits[b][p] {
					q := math.Exp(float64(x)/temp) / z
					h -= q * math.Log(q)
				}
				if !near(float64(lp[b][p]), want, 1e-5) {
					t.Errorf("T=%v logp[%d][%d] = %v, want %v", temp, b, p, lp[b][p], want)
				}
				if !near(float64(ent[b][p]), h, 1e-5) {
					t.Errorf("T=%v entropy[%d][%d] = %v, want %v", temp, b, p, ent[b][p], h)
				}
			}
		}
	}
}

// TestTargetLogProbsGatherPath checks that the gather used for large
// vocabularies gives the one-hot path's values and gradients.
func TestTargetLogProbsGatherPath(t *testing.T) {
	backend := backendtest.New(t)
	logits := [][][]float32{{{1, 2, 0.5, -1}, {-1, 0, 3, 0.2}}, {{0.2, 0.1, 0.2, 4}, {5, -5, 0, 1}}}
	targets := [][]int32{{1, 2}, {3, 0}}
	run := func(gather bool) ([][]float32, [][][]float32) {
		res := MustExecOnceN(backend, func(l, tg *Node) []*Node {
			lp, _ := targetLogProbs(l, tg, 0.8, gather)
			w := Const(l.Graph(), [][]float32{{1, 2}, {3, 4}})
			return []*Node{lp, Gradient(ReduceAllSum(Mul(w, lp)), l)[0]}
		}, logits, targets)
		return res[0].Value().([][]float32), res[1].Value().([][][]float32)
	}
	lpHot, gradHot := run(false)
	lpGather, gradGather := run(true)
	for b := range lpHot {
		for p := range lpHot[b] {
			if !near(float64(lpHot[b][p]), float64(lpGather[b][p]), 1e-6) {
				t.Errorf("logp[%d][%d]: one-hot %v, gather %v", b, p, lpHot[b][p], lpGather[b][p])
			}
			for v := range gradHot[b][p] {
				if !near(float64(gradHot[b][p][v]), float64(gradGather[b][p][v]), 1e-6) {
					t.Errorf("grad[%d][%d][%d]: one-hot %v, gather %v", b, p, v, gradHot[b][p][v], gradGather[b][p][v])
				}
			}
		}
	}
}

func near(a, b, tol float64) bool {
	return math.Abs(a-b) <= tol*(1+math.Abs(b))
}
