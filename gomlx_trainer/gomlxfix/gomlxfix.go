package gomlxfix

import (
	"reflect"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/gobackend"
	"github.com/gomlx/compute/shapes"
	"github.com/gomlx/gomlx/core/graph"
)

var once sync.Once

// original keeps GoMLX's rules, used when a node's fields cannot be read.
var original = map[graph.NodeType]graph.VJP{}

// Install replaces GoMLX's gradient rule for DotGeneral with one that builds
// each operand's gradient as one DotGeneralMatmul and a transpose, and its rule
// for Gather with one that sums a half-precision operand's gradient in float32
// (see the package documentation). It is safe to call many times and from
// many goroutines; only the first call changes anything. Call it before
// building any graph whose gradient is taken.
func Install() {
	once.Do(func() {
		for node, rule := range map[graph.NodeType]func(node, v *graph.Node) []*graph.Node{
			graph.NodeTypeDotGeneral: dotGeneralVJP,
			graph.NodeTypeGather:     gatherVJP,
		} {
			original[node] = graph.VJPRegistration[node]
			graph.VJPRegistration[node] = single(rule)
		}
	})
}

// DotGeneralMatmul is graph.DotGeneral computed in the matmul layout: one
// operand first, [batch..., cross..., contracting...], the other
// [batch..., contracting..., cross...], contracting and batch axes paired in
// the order given. Either operand may go first; the order chosen is the one
// that copies fewer elements into that layout (a transpose that would not move
// an axis is left out), counting the transpose of the result when the
// operands are swapped. The result is graph.DotGeneral's, axes and values
// alike. On XLA a transpose next to a dot folds into the dot; on GoMLX's Go
// backend it is a copy, which costs less than the Go backend's kernels for the
// other layout (see the package documentation).
func DotGeneralMatmul(lhs *graph.Node, lc, lb []int, rhs *graph.Node, rc, rb []int) *graph.Node {
	return dotGeneralMatmul(dtypes.InvalidDType, lhs, lc, lb, rhs, rc, rb)
}

// DotGeneralMatmulF32 is DotGeneralMatmul with a float32 result: the products
// of bfloat16 or float16 operands are summed in float32, as DotGeneralMatmul's
// are, and the sum is returned as it is instead of being rounded to the
// operands' dtype, so that a softmax or a log-softmax of it sees what the
// operands give. Neither operand is converted: the Go backend sums bfloat16
// products in float32 anyway, and XLA's dot takes bfloat16 operands with a
// float32 result. Its gradient rule (Install)
// rounds the float32 adjoint to the operands' dtype and then builds
// DotGeneralMatmul's two products: the backward pass of ConvertDType after
// DotGeneralMatmul, which this replaces, rounded the adjoint at the same
// place. For float32 operands it is DotGeneralMatmul.
func DotGeneralMatmulF32(lhs *graph.Node, lc, lb []int, rhs *graph.Node, rc, rb []int) *graph.Node {
	return dotGeneralMatmul(dtypes.Float32, lhs, lc, lb, rhs, rc, rb)
}

// dotGeneralMatmul is DotGeneralMatmul with the result in dtype out (the
// operands' own where out is dtypes.InvalidDType).
func dotGeneralMatmul(out dtypes.DType, lhs *graph.Node, lc, lb []int, rhs *graph.Node, rc, rb []int) *graph.Node {
	lx, rx := crossAxes(lhs.Rank(), lc, lb), crossAxes(rhs.Rank(), rc, rb)
	straight := copied(lhs, slices.Concat(lb, lx, lc)) + copied(rhs, slices.Concat(rb, rc, rx))
	swapped := copied(rhs, slices.Concat(rb, rx, rc)) + copied(lhs, slices.Concat(lb, lc, lx))
	if len(lx) > 0 && len(rx) > 0 {
		swapped += dimsSize(lhs, lb) * dimsSize(lhs, lx) * dimsSize(rhs, rx) // the result's size
	}
	if swapped < straight {
		// [batch..., rhs cross..., lhs cross...] back to [batch..., lhs cross..., rhs cross...]
		nb, nr := len(lb), len(rx)
		res := matmul(out, rhs, rc, rb, rx, lhs, lc, lb, lx)
		return permute(res, slices.Concat(iota(0, nb), iota(nb+nr, len(lx)), iota(nb, nr)))
	}
	return matmul(out, lhs, lc, lb, lx, rhs, rc, rb, rx)
}

// matmul returns DotGeneral(a, b) with a arranged as [batch..., cross ax...,
// contracting...] and b as [batch..., contracting..., cross bx...], its result
// in dtype out unless that is dtypes.InvalidDType. The contracting axes, and
// the cross axes of each operand, are merged into one axis (arrange), so that
// the product is [batch..., m, k] by [batch..., k, n]: XLA's CPU compiler sums
// a bfloat16 product over several contracting axes, or over one made by
// reshaping a transpose, in bfloat16 (a weight's gradient, summed over batch
// and sequence, came out 3.4e-2 of its largest off; qwen3's
// TestBFloat16ContractingAxes), and a plain [m, k] by [k, n] in float32, as
// the Go backend sums every bfloat16 product.
func matmul(out dtypes.DType, a *graph.Node, ac, ab, ax []int, b *graph.Node, bc, bb, bx []int) *graph.Node {
	batchDims := dimsOf(a, ab)
	aCross, bCross := dimsOf(a, ax), dimsOf(b, bx)
	a = arrange(a, ab, ax, ac)
	b = arrange(b, bb, bc, bx)
	nb := len(ab)
	na, nc := min(len(ax), 1), min(len(ac), 1)
	half := a.DType()
	if halfInFloat32(a) {
		a, b = graph.ConvertDType(a, dtypes.Float32), graph.ConvertDType(b, dtypes.Float32)
		if out == dtypes.InvalidDType {
			out = half
		}
	}
	dot := graph.Dot(a, b) // half-precision operands are summed in float32
	if out != dtypes.InvalidDType && out != a.DType() && a.DType() != dtypes.Float32 {
		dot = dot.WithOutputDType(out)
	}
	res := dot.General(iota(nb+na, nc), iota(0, nb), iota(nb, nc), iota(0, nb))
	switch {
	case half == a.DType():
	case out == dtypes.Float32:
		// A float32 result of half-precision operands keeps
		// DotGeneralMatmulF32's backward: its adjoint rounded to the
		// operands' dtype, as the gradient rule does for half operands.
		res = graph.IdentityWithCustomGradient(res, func(_, v *graph.Node) *graph.Node {
			return graph.ConvertDType(graph.ConvertDType(v, half), dtypes.Float32)
		})
	default:
		res = graph.ConvertDType(res, out)
	}
	if len(ax) <= 1 && len(bx) <= 1 {
		return res
	}
	return graph.Reshape(res, slices.Concat(batchDims, aCross, bCross)...)
}

// arrange returns x with its axes in the order batch, g1, g2, each group of
// g1 and g2 merged into one axis (an empty group stays absent). Axes that are
// neighbours, in order, in x and in their group are merged before the
// transpose, by a reshape that moves no data, so that a group made of
// neighbouring axes (batch and sequence, as a weight's gradient contracts)
// needs no reshape after a transpose.
func arrange(x *graph.Node, batch, g1, g2 []int) *graph.Node {
	groups := [][]int{}
	for _, a := range batch {
		groups = append(groups, []int{a})
	}
	groups = append(groups, g1, g2)
	// runs: maximal stretches of a group whose axes follow each other in x.
	var runs [][]int
	for _, g := range groups {
		for i, a := range g {
			if i > 0 && a == g[i-1]+1 {
				runs[len(runs)-1] = append(runs[len(runs)-1], a)
				continue
			}
			runs = append(runs, []int{a})
		}
	}
	// The runs tile x's axes; reshape x to one axis per run, in x's order.
	var dims []int // the result's: one per non-empty group
	for _, g := range groups {
		if len(g) > 0 {
			dims = append(dims, dimsSize(x, g))
		}
	}
	bySource := iota(0, len(runs))
	slices.SortFunc(bySource, func(i, j int) int { return runs[i][0] - runs[j][0] })
	reduced := make([]int, len(runs))
	order := make([]int, len(runs)) // the reduced x's axis of each run, in group order
	for k, i := range bySource {
		reduced[k] = dimsSize(x, runs[i])
		order[i] = k
	}
	if len(runs) != x.Rank() {
		x = graph.Reshape(x, reduced...)
	}
	x = permute(x, order)
	if len(dims) != len(runs) { // runs that the transpose brought together
		x = graph.Reshape(x, dims...)
	}
	return x
}

// dimsOf returns x's dimensions on axes.
func dimsOf(x *graph.Node, axes []int) []int {
	out := make([]int, len(axes))
	for i, a := range axes {
		out[i] = x.Shape().Dimensions[a]
	}
	return out
}

// dimsSize is the product of x's dimensions on axes.
func dimsSize(x *graph.Node, axes []int) int {
	n := 1
	for _, a := range axes {
		n *= x.Shape().Dimensions[a]
	}
	return n
}

// copied is the number of elements permute(x, order) copies: 0 for the identity.
func copied(x *graph.Node, order []int) int {
	if isIdentity(order) {
		return 0
	}
	return x.Shape().Size()
}

// permute returns x with its axes in the given order (axis i of the result is
// axis order[i] of x), or x itself when the order is the identity.
func permute(x *graph.Node, order []int) *graph.Node {
	if isIdentity(order) {
		return x
	}
	return graph.TransposeAllAxes(x, order...)
}

func isIdentity(order []int) bool {
	for i, a := range order {
		if i != a {
			return false
		}
	}
	return true
}

func single(fn func(node, v *graph.Node) []*graph.Node) graph.VJP {
	return func(node *graph.Node, vjps []*graph.Node, _ shapes.Shape) []*graph.Node { return fn(node, vjps[0]) }
}

// fallbacks counts the gradients built with GoMLX's rule because a node's
// fields could not be read (tests check it stays zero).
var fallbacks atomic.Int64

// fallback runs GoMLX's own rule for a node whose fields could not be read.
func fallback(node, v *graph.Node) []*graph.Node {
	fallbacks.Add(1)
	return originalVJP(node, v)
}

// originalVJP runs GoMLX's own rule for the node.
func originalVJP(node, v *graph.Node) []*graph.Node {
	rule := original[node.Type()]
	if rule == nil {
		panic("gomlxfix: no gradient rule for " + node.Type().String())
	}
	return rule(node, []*graph.Node{v}, node.Shape())
}

// dotGeneralVJP reads the node's axes and builds both gradients as matmuls.
func dotGeneralVJP(node, v *graph.Node) []*graph.Node {
	lhs, rhs := node.Inputs()[0], node.Inputs()[1]
	lc, ok1 := intsField(node, "lhsContractingAxes")
	lb, ok2 := intsField(node, "lhsBatchAxes")
	rc, ok3 := intsField(node, "rhsContractingAxes")
	rb, ok4 := intsField(node, "rhsBatchAxes")
	if !(ok1 && ok2 && ok3 && ok4) || !dotShapeMatches(node, lhs, rhs, lc, lb, rc, rb) {
		return fallback(node, v)
	}
	if v.DType() != lhs.DType() && lhs.DType() == rhs.DType() {
		v = graph.ConvertDType(v, lhs.DType()) // a DotGeneralMatmulF32 of half-precision operands
	}
	return matmulGrads(lhs, rhs, lc, lb, rc, rb, v)
}

// gatherVJP is GoMLX's gradient of Gather (a ScatterSum of the adjoint into
// zeros of the operand's shape) with the sum taken in float32 when the
// operand is bfloat16 or float16, and rounded once to the operand's dtype:
// XLA accumulates a half-precision scatter in that precision, so that an
// embedding row's gradient, a sum over every token of its id, came out 2.5e-2
// off for a frequent id (qwen3's TestBFloat16EmbeddingGradient). The forward
// pass is untouched; the backward pass holds a float32 buffer of the
// operand's shape instead of a half-precision one. Gathers other than
// Gather's (GatherSlices) keep GoMLX's rule.
func gatherVJP(node, v *graph.Node) []*graph.Node {
	operand, indices := node.Inputs()[0], node.Inputs()[1]
	if !operand.DType().IsHalfPrecision() {
		return originalVJP(node, v)
	}
	collapsed, ok1 := intsField(node, "collapsedSliceAxes")
	sizes, ok2 := intsField(node, "sliceSizes")
	if !ok1 || !ok2 {
		return fallback(node, v)
	}
	if !wholeRows(operand.Shape().Dimensions, collapsed, sizes) {
		return originalVJP(node, v)
	}
	zeros := graph.Zeros(node.Graph(), shapes.Make(dtypes.Float32, operand.Shape().Dimensions...))
	sum := graph.ScatterSum(zeros, indices, graph.ConvertDType(v, dtypes.Float32), false, false)
	return []*graph.Node{graph.ConvertDType(sum, operand.DType()), nil}
}

// wholeRows reports whether a gather of an operand with dims takes whole
// slices at indexed leading axes, as Gather does (GoMLX's own rule tests the
// same before it scatters): the first axes collapsed, each sliced one wide,
// every other axis taken whole.
func wholeRows(dims, collapsed, sizes []int) bool {
	if len(sizes) != len(dims) || len(collapsed) > len(dims) {
		return false
	}
	for axis, dim := range dims {
		if axis < len(collapsed) {
			if collapsed[axis] != axis || sizes[axis] != 1 {
				return false
			}
		} else if sizes[axis] != dim {
			return false
		}
	}
	return true
}

// crossAxes lists, ascending, the axes of an operand that are neither contracted nor batch.
func crossAxes(rank int, contracting, batch []int) []int {
	var out []int
	for a := 0; a < rank; a++ {
		if !slices.Contains(contracting, a) && !slices.Contains(batch, a) {
			out = append(out, a)
		}
	}
	return out
}

// dotShapeMatches checks that the axes read describe the node: its output must
// be [batch..., lhs cross..., rhs cross...].
func dotShapeMatches(node, lhs, rhs *graph.Node, lc, lb, rc, rb []int) bool {
	if len(lc) != len(rc) || len(lb) != len(rb) {
		return false
	}
	var dims []int
	for _, a := range lb {
		if a < 0 || a >= lhs.Rank() {
			return false
		}
		dims = append(dims, lhs.Shape().Dimensions[a])
	}
	for _, a := range crossAxes(lhs.Rank(), lc, lb) {
		dims = append(dims, lhs.Shape().Dimensions[a])
	}
	for _, a := range crossAxes(rhs.Rank(), rc, rb) {
		dims = append(dims, rhs.Shape().Dimensions[a])
	}
	return slices.Equal(dims, node.Shape().Dimensions)
}

// matmulGrads returns the gradients of DotGeneral(lhs, lc, lb, rhs, rc, rb) for
// the adjoint v, each as one matmul-layout DotGeneral and a transpose.
func matmulGrads(lhs, rhs *graph.Node, lc, lb, rc, rb []int, v *graph.Node) []*graph.Node {
	nb := len(lb)
	lx := crossAxes(lhs.Rank(), lc, lb)
	rx := crossAxes(rhs.Rank(), rc, rb)
	vBatch := iota(0, nb)
	vLhsCross := iota(nb, len(lx))
	vRhsCross := iota(nb+len(lx), len(rx))
	// d lhs: contract v's rhs-cross axes with rhs's cross axes. The result is
	// [batch..., lhs cross..., rhs's contracting axes in ascending order].
	gl := DotGeneralMatmul(v, vRhsCross, vBatch, rhs, rx, rb)
	gl = placeAxes(gl, lhs.Rank(), lb, lx, sortedPartner(rc, lc))
	// d rhs: contract v's lhs-cross axes with lhs's cross axes.
	gr := DotGeneralMatmul(v, vLhsCross, vBatch, lhs, lx, lb)
	gr = placeAxes(gr, rhs.Rank(), rb, rx, sortedPartner(lc, rc))
	return []*graph.Node{gl, gr}
}

// sortedPartner takes the contracting axes `other` of one operand in ascending
// order and returns, for each, the paired axis of this operand (`mine`).
func sortedPartner(other, mine []int) []int {
	idx := iota(0, len(other))
	slices.SortFunc(idx, func(a, b int) int { return other[a] - other[b] })
	out := make([]int, len(idx))
	for i, k := range idx {
		out[i] = mine[k]
	}
	return out
}

// placeAxes transposes x, whose axes are the operand's axes listed in
// batch, cross and rest (in that order), back to the operand's own order.
func placeAxes(x *graph.Node, rank int, batch, cross, rest []int) *graph.Node {
	order := slices.Concat(batch, cross, rest)
	perm := make([]int, rank)
	for i, a := range order {
		perm[a] = i
	}
	return permute(x, perm)
}

func iota(start, n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = start + i
	}
	return out
}

// intsField reads an unexported []int field of the node's parameters.
func intsField(node *graph.Node, field string) ([]int, bool) {
	inputs := reflect.ValueOf(node).Elem().FieldByName("inputs")
	if !inputs.IsValid() || inputs.Kind() != reflect.Interface || inputs.IsNil() {
		return nil, false
	}
	p := inputs.Elem()
	if p.Kind() != reflect.Pointer || p.IsNil() || p.Elem().Kind() != reflect.Struct {
		return nil, false
	}
	f := p.Elem().FieldByName(field)
	if !f.IsValid() || f.Kind() != reflect.Slice || f.Type().Elem().Kind() != reflect.Int {
		return nil, false
	}
	out := make([]int, f.Len())
	for i := range out {
		out[i] = int(f.Index(i).Int())
	}
	return out, true
}

// halfInFloat32 reports whether a product of x's dtype, bfloat16 or
// float16, is computed from float32 copies of its operands: on GoMLX's Go
// backend in a GOEXPERIMENT=simd build. There compute v0.1.14's AVX2 kernel
// for large half-precision products (at least 4M multiply-adds, the
// cache-blocked one) sums them wrong on a CPU without AVX-512: qwen3's
// TestBFloat16Logits and TestBFloat16ContractingAxes measured a big-vocabulary
// head's log-probs 10 nats and weight gradients 1.3 of their largest off on
// an AMD EPYC with AVX2 (it is right on AVX-512; the rule holds in every
// SIMD build, whatever the CPU, so that a binary rounds alike on both). Each
// product of two half-precision numbers is exact in float32 and the kernels
// sum in float32, so the float32 product, rounded once at the end, is what a
// right kernel gives, up to the order of the sums.
func halfInFloat32(x *graph.Node) bool {
	return simdBuild && (x.DType() == dtypes.BFloat16 || x.DType() == dtypes.Float16) &&
		x.Graph().Backend().String() == gobackend.BackendName
}
