package gomlxfix

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gomlx/gomlx/backends"
	. "github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/tensors"

	"github.com/mathrl/mathrl/gomlx_trainer/backend/backendtest"
)

func randTensor(rng *rand.Rand, dims ...int) *tensors.Tensor {
	n := 1
	for _, d := range dims {
		n *= d
	}
	data := make([]float32, n)
	for i := range data {
		data[i] = float32(rng.NormFloat64())
	}
	return tensors.FromFlatDataAndDimensions(data, dims...)
}

func flat(t *tensors.Tensor) []float32 {
	var out []float32
	tensors.MustConstFlatData(t, func(f []float32) { out = append(out, f...) })
	return out
}

// gradients returns d/d(lhs, rhs) of sum(op(lhs, rhs) * w).
func gradients(t *testing.T, b backends.Backend, op func(l, r *Node) *Node, lhs, rhs, w *tensors.Tensor) [][]float32 {
	t.Helper()
	exec := MustNewExec(b, func(l, r, w *Node) []*Node {
		loss := ReduceAllSum(Mul(op(l, r), w))
		return Gradient(loss, l, r)
	})
	out, err := exec.Exec(lhs, rhs, w)
	if err != nil {
		t.Fatal(err)
	}
	return [][]float32{flat(out[0]), flat(out[1])}
}

// basisGradients returns d/d(lhs, rhs) of sum(op(lhs, rhs) * w) from forward
// passes alone, so that no gradient rule is involved: op is linear in each
// operand, so the derivative by element i of lhs is that sum with lhs = e_i
// (the i-th unit tensor), and likewise for rhs.
func basisGradients(t *testing.T, b backends.Backend, op func(l, r *Node) *Node, lhs, rhs, w *tensors.Tensor) [][]float32 {
	t.Helper()
	exec := MustNewExec(b, func(l, r, w *Node) *Node { return ReduceAllSum(Mul(op(l, r), w)) })
	at := func(l, r *tensors.Tensor) float32 { return flat(exec.MustExec(l, r, w)[0])[0] }
	unit := func(like *tensors.Tensor, i int) *tensors.Tensor {
		data := make([]float32, like.Shape().Size())
		data[i] = 1
		return tensors.FromFlatDataAndDimensions(data, like.Shape().Dimensions...)
	}
	out := [][]float32{make([]float32, lhs.Shape().Size()), make([]float32, rhs.Shape().Size())}
	for i := range out[0] {
		out[0][i] = at(unit(lhs, i), rhs)
	}
	for i := range out[1] {
		out[1][i] = at(lhs, unit(rhs, i))
	}
	return out
}

// TestDotGradientsMatchForwardPasses checks the matmul-based gradients of
// Dot, DotGeneral and Einsum against derivatives taken from forward passes.
func TestDotGradientsMatchForwardPasses(t *testing.T) {
	b := backendtest.New(t)
	rng := rand.New(rand.NewPCG(1, 2))
	cases := []struct {
		name       string
		lhs, rhs   []int
		out        []int
		op         func(l, r *Node) *Node
		usesReduce bool
	}{
		{"matmul 2d (Dot)", []int{3, 4}, []int{4, 5}, []int{3, 5}, func(l, r *Node) *Node { return Dot(l, r) }, false},
		{"matrix-vector (Dot)", []int{3, 4}, []int{4}, []int{3}, func(l, r *Node) *Node { return Dot(l, r) }, false},
		{"linear with [out,in] weight", []int{2, 3, 6}, []int{5, 6}, []int{2, 3, 5}, func(l, r *Node) *Node {
			return DotGeneral(l, []int{2}, nil, r, []int{1}, nil)
		}, false},
		{"batched matmul", []int{2, 3, 4}, []int{2, 4, 5}, []int{2, 3, 5}, func(l, r *Node) *Node {
			return DotGeneral(l, []int{2}, []int{0}, r, []int{1}, []int{0})
		}, false},
		{"attention scores bthd,bshd->bhts", []int{2, 3, 4, 5}, []int{2, 6, 4, 5}, []int{2, 4, 3, 6}, func(l, r *Node) *Node {
			return Einsum("bthd,bshd->bhts", l, r)
		}, false},
		{"two contracting axes out of order", []int{3, 4, 5}, []int{5, 2, 4}, []int{3, 2}, func(l, r *Node) *Node {
			return DotGeneral(l, []int{2, 1}, nil, r, []int{0, 2}, nil)
		}, false},
		{"batch axes not leading", []int{4, 2, 3}, []int{3, 5, 2}, []int{2, 4, 5}, func(l, r *Node) *Node {
			return DotGeneral(l, []int{2}, []int{1}, r, []int{0}, []int{2})
		}, false},
		{"outer product, no contraction", []int{3}, []int{4}, []int{3, 4}, func(l, r *Node) *Node {
			return DotGeneral(l, nil, nil, r, nil, nil)
		}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			lhs, rhs, w := randTensor(rng, tc.lhs...), randTensor(rng, tc.rhs...), randTensor(rng, tc.out...)
			var want, got [][]float32
			want = basisGradients(t, b, tc.op, lhs, rhs, w)
			Install()
			before := fallbacks.Load()
			got = gradients(t, b, tc.op, lhs, rhs, w)
			if n := fallbacks.Load() - before; n != 0 {
				t.Fatalf("%d gradients fell back to GoMLX's rule: unexported fields not readable", n)
			}
			for k := range want {
				if len(got[k]) != len(want[k]) {
					t.Fatalf("operand %d: %d values, want %d", k, len(got[k]), len(want[k]))
				}
				for i := range want[k] {
					if d := math.Abs(float64(got[k][i] - want[k][i])); d > 1e-4*(1+math.Abs(float64(want[k][i]))) {
						t.Fatalf("operand %d value %d: %g, forward passes give %g", k, i, got[k][i], want[k][i])
					}
				}
			}
		})
	}
}

// TestDotGradientUsesMatmul checks that the new rule builds no broadcast outer
// product: no node in the gradient graph is larger than the operands and output.
func TestDotGradientUsesMatmul(t *testing.T) {
	b := backendtest.New(t)
	Install()
	g := NewGraph(b, "check")
	l := Parameter(g, "l", randTensor(rand.New(rand.NewPCG(1, 1)), 8, 16, 32).Shape())
	r := Parameter(g, "r", randTensor(rand.New(rand.NewPCG(1, 1)), 24, 32).Shape())
	out := DotGeneral(l, []int{2}, nil, r, []int{1}, nil)
	grads := Gradient(ReduceAllSum(out), l, r)
	limit := 8 * 16 * 32 // the largest of lhs (4096), rhs (768) and output (3072)
	seen := map[NodeId]bool{}
	var walk func(n *Node)
	walk = func(n *Node) {
		if seen[n.Id()] {
			return
		}
		seen[n.Id()] = true
		if n.Shape().Size() > limit {
			t.Errorf("gradient graph has node %s of %d elements (> %d): not a matmul", n.Type(), n.Shape().Size(), limit)
		}
		for _, in := range n.Inputs() {
			walk(in)
		}
	}
	for _, gr := range grads {
		walk(gr)
	}
}

func TestSliceGradientWithoutPad(t *testing.T) {
	b := backendtest.New(t)
	rng := rand.New(rand.NewPCG(3, 4))
	x := randTensor(rng, 4, 6)
	w := randTensor(rng, 2, 3)
	Install()
	exec := MustNewExec(b, func(x, w *Node) *Node {
		s := Slice(x, AxisRange(1, 3), AxisRange(2, 5))
		return Gradient(ReduceAllSum(Mul(s, w)), x)[0]
	})
	got := flat(exec.MustExec(x, w)[0])
	ws := flat(w)
	for i := 0; i < 4; i++ {
		for j := 0; j < 6; j++ {
			want := float32(0)
			if i >= 1 && i < 3 && j >= 2 && j < 5 {
				want = ws[(i-1)*3+(j-2)]
			}
			if got[i*6+j] != want {
				t.Fatalf("grad[%d,%d] = %g, want %g", i, j, got[i*6+j], want)
			}
		}
	}
}

func TestRsqrtGradientMatchesFiniteDifference(t *testing.T) {
	b := backendtest.New(t)
	Install()
	xs := []float32{0.25, 1, 2.5, 9}
	exec := MustNewExec(b, func(x *Node) *Node { return Gradient(ReduceAllSum(Rsqrt(x)), x)[0] })
	got := flat(exec.MustExec(tensors.FromFlatDataAndDimensions(xs, len(xs)))[0])
	for i, x := range xs {
		want := -0.5 * math.Pow(float64(x), -1.5)
		if math.Abs(float64(got[i])-want) > 1e-5*math.Abs(want) {
			t.Errorf("d/dx rsqrt(%g) = %g, want %g", x, got[i], want)
		}
	}
}
