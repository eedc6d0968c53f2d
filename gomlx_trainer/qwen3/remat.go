package qwen3

import (
	"github.com/gomlx/compute/dtypes"
	. "github.com/gomlx/gomlx/core/graph" //nolint:revive // GoMLX's graph DSL reads best dot-imported

	"github.com/mathrl/mathrl/gomlx_trainer/gomlxfix"
)

// GoMLX lets a custom gradient be set only on an identity node
// (graph.IdentityWithCustomGradient), and its gradient checkpointing
// (Node.Checkpoint, since v0.28) recomputes only what depends on the
// checkpointed node. rematerialise recomputes a whole function of its inputs,
// built out of identity hooks:
//
//   - each input x_i passes through an identity hook whose gradient function
//     ignores the adjoint it receives and returns the gradient computed below;
//   - the forward pass computes y = f(inputs) and stops its gradient, so no
//     backward pass is ever built through f's forward nodes, and nothing keeps
//     them alive for one;
//   - each output is y_k + 0·(one element of every hook), so that the backward
//     pass reaches the hooks, and goes through an identity whose gradient
//     function records the adjoint v_k of y_k;
//   - the first hook reached in the backward pass (hooks are older than the
//     outputs, so they come after them) builds f again, from inputs that depend
//     on the adjoints (x_0 + 0·v_k[0]) so that no compiler can merge the
//     recomputation with the forward pass or run it early, and takes the
//     gradient of Σ_k Σ(f_k · stop(v_k)) with respect to the inputs.
//
// The zero terms cost one scalar each; the backward pass built for them is
// never used by an output, and compilers drop it.

// remat is the state that one rematerialise call shares between the gradient
// functions of its outputs and of its inputs' hooks.
type remat struct {
	f      func(in []*Node) []*Node
	inputs []*Node
	seq    *rematSeq
	adj    []*Node // adjoints of the outputs, recorded by the backward pass
	grads  []*Node // gradients for the inputs, built once per backward pass
}

// rematSeq orders a series of rematerialised calls that a compiler could
// otherwise run side by side (and so hold all their intermediate values at
// once): each forward pass starts after the previous call's outputs, each
// recomputation after the previous recomputation's gradient.
type rematSeq struct{ fwd, bwd *Node }

// rematerialise returns f(inputs...), with a gradient that computes f again in
// the backward pass instead of keeping f's intermediate values from the forward
// pass. Only inputs receive gradients: nodes f takes from elsewhere are
// constants to it. f's outputs must be floating point. seq may be nil.
func rematerialise(seq *rematSeq, f func(in []*Node) []*Node, inputs ...*Node) []*Node {
	gomlxfix.Install() // Slice's gradient on every backend
	r := &remat{f: f, inputs: inputs, seq: seq}
	hooks := make([]*Node, len(inputs))
	for i, x := range inputs {
		hooks[i] = IdentityWithCustomGradient(x, func(_, _ *Node) *Node { return r.gradient(i) })
	}
	fwd := append([]*Node(nil), inputs...)
	if seq != nil {
		fwd[0] = after(fwd[0], seq.fwd)
	}
	outs := f(fwd)
	if seq != nil {
		seq.fwd = outs[0]
	}
	zero := MulScalar(sumFirsts(hooks), 0)
	r.adj = make([]*Node, len(outs))
	for k, y := range outs {
		y = Add(StopGradient(y), BroadcastToShape(ConvertDType(zero, y.DType()), y.Shape()))
		outs[k] = IdentityWithCustomGradient(y, func(_, v *Node) *Node {
			r.adj[k], r.grads = v, nil
			return v
		})
	}
	return outs
}

// gradient returns the gradient for input i, building f's recomputation and
// its gradient the first time it is asked for in a backward pass.
func (r *remat) gradient(i int) *Node {
	if r.grads == nil {
		r.grads = r.recompute()
	}
	return r.grads[i]
}

// recompute builds f again after the recorded adjoints and returns the
// gradients of Σ_k Σ(f_k · v_k) with respect to the inputs.
func (r *remat) recompute() []*Node {
	adj := make([]*Node, 0, len(r.adj))
	for k, v := range r.adj {
		if v != nil {
			r.adj[k] = StopGradient(v)
			adj = append(adj, r.adj[k])
		}
	}
	if r.seq != nil && r.seq.bwd != nil {
		adj = append(adj, r.seq.bwd)
	}
	in := make([]*Node, len(r.inputs))
	in[0] = after(StopGradient(r.inputs[0]), adj...)
	for i := 1; i < len(in); i++ {
		in[i] = leaf(r.inputs[i])
	}
	total := adjointLoss(r.f(in), r.adj)
	if total == nil {
		return make([]*Node, len(in)) // no adjoint arrived: no gradient
	}
	grads := Gradient(total, in...)
	if r.seq != nil {
		r.seq.bwd = StopGradient(grads[0])
	}
	r.adj = make([]*Node, len(r.adj))
	return grads
}

// leaf returns x where it has no inputs (a parameter or a constant), else a
// copy of it whose gradient goes nowhere further: the recomputation's gradient
// with respect to one input must not flow back into another one (the tied
// embedding is both the head's weight and an ancestor of the hidden states).
func leaf(x *Node) *Node {
	if len(x.Inputs()) == 0 {
		return x
	}
	return Identity(StopGradient(x))
}

// adjointLoss returns Σ_k Σ(outs_k · adj_k) in float32 over the outputs that
// have an adjoint (nil when none has): its gradient with respect to f's inputs
// is the vector-Jacobian product the backward pass needs.
func adjointLoss(outs, adj []*Node) *Node {
	var total *Node
	for k, v := range adj {
		if v == nil {
			continue
		}
		term := ReduceAllSum(ConvertDType(Mul(outs[k], v), dtypes.Float32))
		if total == nil {
			total = term
		} else {
			total = Add(total, term)
		}
	}
	return total
}

// after returns x + 0·Σ first(deps) (nil deps are skipped): x's value, computed
// only once deps are.
func after(x *Node, deps ...*Node) *Node {
	var live []*Node
	for _, d := range deps {
		if d != nil {
			live = append(live, d)
		}
	}
	if len(live) == 0 {
		return x
	}
	zero := ConvertDType(MulScalar(sumFirsts(live), 0), x.DType())
	return Add(x, BroadcastToShape(zero, x.Shape()))
}

// sumFirsts returns the float32 sum of the first element of each node.
func sumFirsts(xs []*Node) *Node {
	var sum *Node
	for _, x := range xs {
		first := x
		if x.Rank() > 0 {
			spec := make([]SliceAxisSpec, x.Rank())
			for a := range spec {
				spec[a] = AxisRange(0, 1)
			}
			first = Reshape(Slice(x, spec...))
		}
		first = ConvertDType(first, dtypes.Float32)
		if sum == nil {
			sum = first
		} else {
			sum = Add(sum, first)
		}
	}
	return sum
}
