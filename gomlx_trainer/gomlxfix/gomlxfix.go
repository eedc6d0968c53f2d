package gomlxfix

import (
	"reflect"
	"slices"
	"sync"
	"sync/atomic"

	. "github.com/gomlx/gomlx/pkg/core/graph" //nolint:revive // GoMLX's graph DSL reads best dot-imported
	"github.com/gomlx/gomlx/pkg/core/shapes"
)

var once sync.Once

// original keeps GoMLX's rules, used when a node's fields cannot be read.
var original = map[NodeType]VJP{}

// Install replaces GoMLX's gradient rules for Dot, DotGeneral, Slice and Rsqrt
// (see the package documentation). It is safe to call many times and from many
// goroutines; only the first call changes anything. Call it before building any
// graph whose gradient is taken.
func Install() {
	once.Do(func() {
		for _, t := range []NodeType{NodeTypeDot, NodeTypeDotGeneral, NodeTypeSlice, NodeTypeRsqrt} {
			original[t] = VJPRegistration[t]
		}
		VJPRegistration[NodeTypeDot] = single(dotVJP)
		VJPRegistration[NodeTypeDotGeneral] = single(dotGeneralVJP)
		VJPRegistration[NodeTypeSlice] = single(sliceVJP)
		VJPRegistration[NodeTypeRsqrt] = single(rsqrtVJP)
	})
}

func single(fn func(node, v *Node) []*Node) VJP {
	return func(node *Node, vjps []*Node, _ shapes.Shape) []*Node { return fn(node, vjps[0]) }
}

// fallbacks counts the gradients built with GoMLX's rule because a node's
// fields could not be read (tests check it stays zero).
var fallbacks atomic.Int64

// fallback runs GoMLX's own rule for the node.
func fallback(node, v *Node) []*Node {
	if node.Type() != NodeTypeSlice { // strided slices are expected here
		fallbacks.Add(1)
	}
	rule := original[node.Type()]
	if rule == nil {
		panic("gomlxfix: no gradient rule for " + node.Type().String())
	}
	return rule(node, []*Node{v}, node.Shape())
}

// dotVJP handles Dot of ranks <= 2: lhs's last axis is contracted with rhs's first.
func dotVJP(node, v *Node) []*Node {
	lhs, rhs := node.Inputs()[0], node.Inputs()[1]
	return matmulGrads(lhs, rhs, []int{lhs.Rank() - 1}, nil, []int{0}, nil, v)
}

// dotGeneralVJP reads the node's axes and builds both gradients as matmuls.
func dotGeneralVJP(node, v *Node) []*Node {
	lhs, rhs := node.Inputs()[0], node.Inputs()[1]
	lc, ok1 := intsField(node, "lhsContractingAxes")
	lb, ok2 := intsField(node, "lhsBatchAxes")
	rc, ok3 := intsField(node, "rhsContractingAxes")
	rb, ok4 := intsField(node, "rhsBatchAxes")
	if !(ok1 && ok2 && ok3 && ok4) || !dotShapeMatches(node, lhs, rhs, lc, lb, rc, rb) {
		return fallback(node, v)
	}
	return matmulGrads(lhs, rhs, lc, lb, rc, rb, v)
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
func dotShapeMatches(node, lhs, rhs *Node, lc, lb, rc, rb []int) bool {
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
// the adjoint v, each as one DotGeneral and a transpose.
func matmulGrads(lhs, rhs *Node, lc, lb, rc, rb []int, v *Node) []*Node {
	nb := len(lb)
	lx := crossAxes(lhs.Rank(), lc, lb)
	rx := crossAxes(rhs.Rank(), rc, rb)
	vBatch := iota(0, nb)
	vLhsCross := iota(nb, len(lx))
	vRhsCross := iota(nb+len(lx), len(rx))
	// d lhs: contract v's rhs-cross axes with rhs's cross axes. The result is
	// [batch..., lhs cross..., rhs's contracting axes in ascending order].
	gl := DotGeneral(v, vRhsCross, vBatch, rhs, rx, rb)
	gl = placeAxes(gl, lhs.Rank(), lb, lx, sortedPartner(rc, lc))
	// d rhs: contract v's lhs-cross axes with lhs's cross axes.
	gr := DotGeneral(v, vLhsCross, vBatch, lhs, lx, lb)
	gr = placeAxes(gr, rhs.Rank(), rb, rx, sortedPartner(lc, rc))
	return []*Node{gl, gr}
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
func placeAxes(x *Node, rank int, batch, cross, rest []int) *Node {
	order := append(append(append([]int{}, batch...), cross...), rest...)
	perm := make([]int, rank)
	for i, a := range order {
		perm[a] = i
	}
	identity := true
	for i, p := range perm {
		identity = identity && i == p
	}
	if identity {
		return x
	}
	return TransposeAllAxes(x, perm...)
}

func iota(start, n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = start + i
	}
	return out
}

// sliceVJP puts v back in place with zeros around it, using Concatenate.
func sliceVJP(node, v *Node) []*Node {
	x := node.Inputs()[0]
	starts, ok1 := intsField(node, "starts")
	limits, ok2 := intsField(node, "limits")
	strides, ok3 := intsField(node, "strides")
	if !(ok1 && ok2 && ok3) || len(starts) != x.Rank() || len(limits) != x.Rank() || len(strides) != x.Rank() {
		return fallback(node, v)
	}
	for i, s := range strides {
		if s > 1 || limits[i]-starts[i] != v.Shape().Dimensions[i] {
			return fallback(node, v)
		}
	}
	g := x.Graph()
	grad := v
	for axis := 0; axis < x.Rank(); axis++ {
		before, after := starts[axis], x.Shape().Dimensions[axis]-limits[axis]
		if before == 0 && after == 0 {
			continue
		}
		parts := []*Node{}
		pad := func(n int) *Node {
			dims := slices.Clone(grad.Shape().Dimensions)
			dims[axis] = n
			return Zeros(g, shapes.Make(grad.DType(), dims...))
		}
		if before > 0 {
			parts = append(parts, pad(before))
		}
		parts = append(parts, grad)
		if after > 0 {
			parts = append(parts, pad(after))
		}
		grad = Concatenate(parts, axis)
	}
	return []*Node{grad}
}

// rsqrtVJP: y = x^(-1/2), dy/dx = -y^3/2.
func rsqrtVJP(node, v *Node) []*Node {
	y := node
	return []*Node{Mul(v, MulScalar(Mul(y, Mul(y, y)), -0.5))}
}

// intsField reads an unexported []int field of the node's parameters.
func intsField(node *Node, field string) ([]int, bool) {
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
