package gomlxfix

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/gomlx/compute"
	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/shapes"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"

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
func gradients(t *testing.T, b compute.Backend, op func(l, r *Node) *Node, lhs, rhs, w *tensors.Tensor) [][]float32 {
	t.Helper()
	exec := MustNewExec(b, func(l, r, w *Node) []*Node {
		loss := ReduceAllSum(Mul(op(l, r), w))
		return Gradient(loss, l, r)
	})
	out, err := exec.Call(lhs, rhs, w)
	if err != nil {
		t.Fatal(err)
	}
	return [][]float32{flat(out[0]), flat(out[1])}
}

// basisGradients returns d/d(lhs, rhs) of sum(op(lhs, rhs) * w) from forward
// passes alone, so that no gradient rule is involved: op is linear in each
// operand, so the derivative by element i of lhs is that sum with lhs = e_i
// (the i-th unit tensor), and likewise for rhs.
func basisGradients(t *testing.T, b compute.Backend, op func(l, r *Node) *Node, lhs, rhs, w *tensors.Tensor) [][]float32 {
	t.Helper()
	exec := MustNewExec(b, func(l, r, w *Node) *Node { return ReduceAllSum(Mul(op(l, r), w)) })
	at := func(l, r *tensors.Tensor) float32 { return flat(exec.MustCall(l, r, w)[0])[0] }
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
		{"matmul 2d (Dot)", []int{3, 4}, []int{4, 5}, []int{3, 5}, func(l, r *Node) *Node { return Dot(l, r).Product() }, false},
		{"matrix-vector (Dot)", []int{3, 4}, []int{4}, []int{3}, func(l, r *Node) *Node { return Dot(l, r).Product() }, false},
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

// TestSliceGradientNeedsNoWorkaround checks GoMLX's own Slice gradient (it
// pads with zeros) on the test backend: v0.26's Go backend had no Pad.
func TestSliceGradientNeedsNoWorkaround(t *testing.T) {
	b := backendtest.New(t)
	rng := rand.New(rand.NewPCG(3, 4))
	x := randTensor(rng, 4, 6)
	w := randTensor(rng, 2, 3)
	exec := MustNewExec(b, func(x, w *Node) *Node {
		s := Slice(x, AxisRange(1, 3), AxisRange(2, 5))
		return Gradient(ReduceAllSum(Mul(s, w)), x)[0]
	})
	got := flat(exec.MustCall(x, w)[0])
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

// TestRsqrtStillHasNoGradient pins down why the model normalises with 1/Sqrt:
// GoMLX builds no gradient for Rsqrt. When this test fails, GoMLX has one.
func TestRsqrtStillHasNoGradient(t *testing.T) {
	b := backendtest.New(t)
	_, err := NewExec(b, func(x *Node) *Node { return Gradient(ReduceAllSum(Rsqrt(x)), x)[0] })
	if err == nil {
		_, err = CallOnce(b, func(x *Node) *Node { return Gradient(ReduceAllSum(Rsqrt(x)), x)[0] },
			tensors.FromFlatDataAndDimensions([]float32{0.25, 1}, 2))
	}
	if err == nil {
		t.Fatal("GoMLX now differentiates Rsqrt: the model's rmsNorm may use it")
	}
	t.Logf("GoMLX: %v", firstLine(err.Error()))
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// productCases are DotGenerals in every layout the model uses, at sizes small
// enough for the Go backend's small-product kernels.
var productCases = []struct {
	name     string
	lhs, rhs []int
	lc, lb   []int
	rc, rb   []int
}{
	{"linear with [out,in] weight", []int{16, 64}, []int{300, 64}, []int{1}, nil, []int{1}, nil},
	{"matmul [k,n]", []int{16, 64}, []int{64, 160}, []int{1}, nil, []int{0}, nil},
	{"attention scores over a heads-first cache", []int{4, 1, 2, 2, 16}, []int{4, 2, 32, 16}, []int{4}, []int{0, 2}, []int{3}, []int{0, 1}},
	{"attention output", []int{4, 2, 1, 2, 32}, []int{4, 2, 32, 16}, []int{4}, []int{0, 1}, []int{2}, []int{0, 1}},
	{"two contracting axes out of order", []int{3, 4, 5}, []int{5, 2, 4}, []int{2, 1}, nil, []int{0, 2}, nil},
	{"batch axes not leading", []int{4, 2, 3}, []int{3, 5, 2}, []int{2}, []int{1}, []int{0}, []int{2}},
}

// TestDotGeneralMatmulIsDotGeneral compares DotGeneralMatmul with
// graph.DotGeneral in float32 (same axes, same values within rounding), and
// both in bfloat16 with the float32 product: DotGeneralMatmul must stay within
// bfloat16's rounding; GoMLX's own result is logged, since its small-product
// kernel for the [n,k] layout is wrong in bfloat16 in a GOEXPERIMENT=simd
// build (see the package documentation).
func TestDotGeneralMatmulIsDotGeneral(t *testing.T) {
	b := backendtest.New(t)
	rng := rand.New(rand.NewPCG(7, 8))
	for _, tc := range productCases {
		t.Run(tc.name, func(t *testing.T) {
			lhs, rhs := randTensor(rng, tc.lhs...), randTensor(rng, tc.rhs...)
			res := MustExecOnceN(b, func(l, r *Node) []*Node {
				bf := func(x *Node) *Node { return ConvertDType(x, dtypes.BFloat16) }
				f32 := func(x *Node) *Node { return ConvertDType(x, dtypes.Float32) }
				return []*Node{
					DotGeneral(l, tc.lc, tc.lb, r, tc.rc, tc.rb),
					DotGeneralMatmul(l, tc.lc, tc.lb, r, tc.rc, tc.rb),
					f32(DotGeneralMatmul(bf(l), tc.lc, tc.lb, bf(r), tc.rc, tc.rb)),
					f32(DotGeneral(bf(l), tc.lc, tc.lb, bf(r), tc.rc, tc.rb)),
				}
			}, lhs, rhs)
			want, got := flat(res[0]), flat(res[1])
			if !slices.Equal(res[0].Shape().Dimensions, res[1].Shape().Dimensions) {
				t.Fatalf("shape %v, DotGeneral's %v", res[1].Shape(), res[0].Shape())
			}
			k := 1
			for _, a := range tc.lc {
				k *= tc.lhs[a]
			}
			scale := math.Sqrt(float64(k)) // a sum of k products of unit normals
			for i := range want {
				if d := math.Abs(float64(got[i] - want[i])); d > 1e-5*scale {
					t.Fatalf("float32 value %d: %g, DotGeneral gives %g", i, got[i], want[i])
				}
			}
			// bfloat16 keeps 8 significant bits: each product's rounding is
			// about 2^-8 relative, so the sum's error is a few 2^-8·sqrt(k).
			worst := func(xs []float32) float64 {
				w := 0.0
				for i := range want {
					w = math.Max(w, math.Abs(float64(xs[i]-want[i]))/scale)
				}
				return w
			}
			if e := worst(flat(res[2])); e > 0.05 {
				t.Errorf("bfloat16: error %.3g of sqrt(k), want at most 0.05", e)
			}
			t.Logf("bfloat16 error relative to sqrt(k): DotGeneralMatmul %.3g, GoMLX's DotGeneral %.3g", worst(flat(res[2])), worst(flat(res[3])))
		})
	}
}

// TestGoBackendRunsDynamicUpdateSlice records that GoMLX's Go backend
// (compute v0.1.14) runs DynamicUpdateSlice, which v0.28.2's did not: it
// writes a [1, 3] row into a [4, 3] zero matrix at a row given at run time and
// compares the result with the matrix written on the host. The key/value cache
// still writes its slots with Where and a one-hot mask (qwen3.Extend), as on
// v0.28.2, until writing them with DynamicUpdateSlice is measured on both
// backends (docs/gomlx.md).
func TestGoBackendRunsDynamicUpdateSlice(t *testing.T) {
	b := backendtest.New(t)
	if b.String() != "go" {
		t.Skipf("backend %s: the test is of the Go backend", b.String())
	}
	if !b.Capabilities().Operations[compute.OpTypeDynamicUpdateSlice] {
		t.Fatal("the Go backend does not list DynamicUpdateSlice")
	}
	exec := MustNewExec(b, func(row, at *Node) *Node {
		return DynamicUpdateSlice(Zeros(row.Graph(), shapes.Make(dtypes.Float32, 4, 3)), row, []*Node{at, ScalarZero(row.Graph(), dtypes.Int32)})
	})
	got := exec.MustCall([][]float32{{1, 2, 3}}, int32(2))[0].Value().([][]float32)
	want := [][]float32{{0, 0, 0}, {0, 0, 0}, {1, 2, 3}, {0, 0, 0}}
	if !slices.EqualFunc(got, want, slices.Equal[[]float32]) {
		t.Errorf("DynamicUpdateSlice at row 2 = %v, want %v", got, want)
	}
}

// TestDotGeneralMatmulF32 checks, on bfloat16 operands, that DotGeneralMatmulF32
// returns float32 and equals the float32 product of the same values (each
// product of two bfloat16 numbers is exact in float32), and that its gradients
// are bfloat16 and equal those of ConvertDType(DotGeneralMatmul(...), Float32),
// which rounds the adjoint at the same place.
func TestDotGeneralMatmulF32(t *testing.T) {
	b := backendtest.New(t)
	Install()
	rng := rand.New(rand.NewPCG(5, 6))
	for _, tc := range []struct {
		name           string
		lhs, rhs, out  []int
		lc, lb, rc, rb []int
	}{
		{"linear with [out,in] weight", []int{2, 3, 16}, []int{40, 16}, []int{2, 3, 40}, []int{2}, nil, []int{1}, nil},
		{"attention scores", []int{2, 5, 2, 3, 8}, []int{2, 2, 7, 8}, []int{2, 2, 5, 3, 7}, []int{4}, []int{0, 2}, []int{3}, []int{0, 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lhs, rhs, w := randTensor(rng, tc.lhs...), randTensor(rng, tc.rhs...), randTensor(rng, tc.out...)
			before := fallbacks.Load()
			res := MustExecOnceN(b, func(l, r, w *Node) []*Node {
				lb, rb := ConvertDType(l, dtypes.BFloat16), ConvertDType(r, dtypes.BFloat16)
				f32 := DotGeneralMatmulF32(lb, tc.lc, tc.lb, rb, tc.rc, tc.rb)
				if f32.DType() != dtypes.Float32 {
					t.Fatalf("result in %s, want Float32", f32.DType())
				}
				exact := DotGeneralMatmul(ConvertDType(lb, dtypes.Float32), tc.lc, tc.lb, ConvertDType(rb, dtypes.Float32), tc.rc, tc.rb)
				rounded := ConvertDType(DotGeneralMatmul(lb, tc.lc, tc.lb, rb, tc.rc, tc.rb), dtypes.Float32)
				grads := Gradient(ReduceAllSum(Mul(f32, w)), lb, rb)
				oldGrads := Gradient(ReduceAllSum(Mul(rounded, w)), lb, rb)
				if grads[0].DType() != dtypes.BFloat16 || grads[1].DType() != dtypes.BFloat16 {
					t.Fatalf("gradients in %s and %s, want BFloat16", grads[0].DType(), grads[1].DType())
				}
				out := []*Node{f32, exact}
				for _, g := range append(grads, oldGrads...) {
					out = append(out, ConvertDType(g, dtypes.Float32))
				}
				return out
			}, lhs, rhs, w)
			if n := fallbacks.Load() - before; n != 0 {
				t.Fatalf("%d gradients fell back to GoMLX's rule", n)
			}
			got, want := flat(res[0]), flat(res[1])
			for i := range want {
				if d := math.Abs(float64(got[i] - want[i])); d > 1e-5*(1+math.Abs(float64(want[i]))) {
					t.Fatalf("value %d: %g, float32 product %g", i, got[i], want[i])
				}
			}
			for k := range 2 {
				if g, old := flat(res[2+k]), flat(res[4+k]); !slices.Equal(g, old) {
					t.Errorf("operand %d: gradient differs from ConvertDType(DotGeneralMatmul)'s", k)
				}
			}
		})
	}
}

// TestGatherGradientSumsInFloat32 checks the rule Install sets for Gather: the
// gradient of a bfloat16 operand is the float32 sum of the adjoints, rounded
// once. Rows 0 and 1 are gathered 2,000 and 1,000 times with an adjoint of 1,
// so their gradients are those counts (exact in bfloat16); a sum kept in
// bfloat16, as both backends keep a bfloat16 scatter's, stops at 256, where
// bfloat16's spacing becomes 2 and 256+1 rounds back to 256.
func TestGatherGradientSumsInFloat32(t *testing.T) {
	b := backendtest.New(t)
	Install()
	const n = 3000
	ids := make([]int32, n)
	for i := range ids {
		ids[i] = int32(i % 3 / 2) // two thirds row 0, one third row 1
	}
	before := fallbacks.Load()
	res := MustExecOnceN(b, func(emb, ids *Node) []*Node {
		rows := Gather(ConvertDType(emb, dtypes.BFloat16), InsertAxes(ids, -1)) // [n, 2]
		g := Gradient(ReduceAllSum(ConvertDType(rows, dtypes.Float32)), emb)[0]
		return []*Node{g}
	}, tensors.FromFlatDataAndDimensions([]float32{1, 2, 3, 4, 5, 6}, 3, 2), tensors.FromFlatDataAndDimensions(ids, n))
	if n := fallbacks.Load() - before; n != 0 {
		t.Fatalf("%d gradients fell back to GoMLX's rule", n)
	}
	want := []float32{2000, 2000, 1000, 1000, 0, 0} // exact in bfloat16
	if got := flat(res[0]); !slices.Equal(got, want) {
		t.Errorf("gradient %v, want the counts %v", got, want)
	}
}

// TestUnusedParameterCreatedLast runs a graph with a parameter created after
// the last node its output needs, and never read: compute v0.1.2's Go backend
// indexed out of range on it, which grpo.masterValue works around by reading
// a weight's parameter before its float32 master update writes it
// (docs/precision-and-memory.md).
func TestUnusedParameterCreatedLast(t *testing.T) {
	b := backendtest.New(t)
	g := NewGraph(b, "unused_parameter_created_last")
	x := Parameter(g, "x", shapes.Make(dtypes.Float32, 3))
	out := MulScalar(x, 2)
	Parameter(g, "unused", shapes.Make(dtypes.Float32, 2))
	if err := g.Compile(out); err != nil {
		t.Fatal(err)
	}
	var got []float32
	var runErr error
	func() {
		defer func() {
			if r := recover(); r != nil {
				runErr, _ = r.(error)
				if runErr == nil {
					t.Fatalf("%s: running the graph panicked: %v", b.String(), r)
				}
			}
		}()
		got = g.Run([]float32{1, 2, 3}, []float32{7, 8})[0].Value().([]float32)
	}()
	if runErr != nil {
		t.Fatalf("%s: running the graph: %v", b.String(), runErr)
	}
	if want := []float32{2, 4, 6}; len(got) != 3 || got[0] != want[0] || got[1] != want[1] || got[2] != want[2] {
		t.Errorf("%s: 2x = %v, want %v", b.String(), got, want)
	}
}
