package grpo

import (
	"strings"

	"github.com/gomlx/gomlx/pkg/core/dtypes"
	. "github.com/gomlx/gomlx/pkg/core/graph" //nolint:staticcheck // graph-building code reads better unqualified
	"github.com/gomlx/gomlx/pkg/core/shapes"
	"github.com/gomlx/gomlx/pkg/ml/context"
	"github.com/gomlx/gomlx/pkg/ml/context/initializers"
)

// Scopes of the trainer's own variables in the GoMLX context. They are not
// trainable and are saved in checkpoints beside the weights.
const (
	AdamScope      = "/adamw"      // first and second moments, and the step counter
	GradAccumScope = "/grad_accum" // gradients summed over the micro-batches of one optimizer step
)

// AdamWConfig holds the knobs of ApplyAdamW. The learning rate is a graph input,
// so the host can follow a schedule without recompiling.
type AdamWConfig struct {
	Beta1, Beta2 float64 // moment decay rates
	Eps          float64 // added to sqrt(v̂)
	WeightDecay  float64 // decoupled weight decay, multiplied by the learning rate
	ClipNorm     float64 // global gradient-norm clip; 0: none
}

// TrainableVariables returns the context's trainable variables in creation
// order, leaving out the optimizer's and the accumulator's own variables.
func TrainableVariables(ctx *context.Context) []*context.Variable {
	var vars []*context.Variable
	for v := range ctx.IterVariables() {
		if v.Trainable && !strings.HasPrefix(v.Scope(), AdamScope) && !strings.HasPrefix(v.Scope(), GradAccumScope) {
			vars = append(vars, v)
		}
	}
	return vars
}

// GlobalNorm returns sqrt(Σ_i Σ x_i²) over all the tensors, in float32.
func GlobalNorm(xs []*Node) *Node {
	var sum *Node
	for _, x := range xs {
		s := ReduceAllSum(Square(ConvertDType(x, dtypes.Float32)))
		if sum == nil {
			sum = s
		} else {
			sum = Add(sum, s)
		}
	}
	return Sqrt(sum)
}

// ClipByGlobalNorm scales every gradient by min(1, maxNorm / norm), where norm
// is GlobalNorm(grads), and returns the scaled gradients and the norm before
// clipping. maxNorm ≤ 0 leaves the gradients unchanged.
func ClipByGlobalNorm(grads []*Node, maxNorm float64) (clipped []*Node, norm *Node) {
	norm = GlobalNorm(grads)
	if maxNorm <= 0 {
		return grads, norm
	}
	// scale = maxNorm / max(norm, maxNorm): 1 below the threshold, never a division by 0.
	scale := Div(Scalar(norm.Graph(), dtypes.Float32, maxNorm), Max(norm, Scalar(norm.Graph(), dtypes.Float32, maxNorm)))
	clipped = make([]*Node, len(grads))
	for i, gr := range grads {
		clipped[i] = Mul(gr, ConvertDType(scale, gr.DType()))
	}
	return clipped, norm
}

// ApplyAdamW builds one AdamW update of vars from grads (same order), as
// PyTorch's AdamW does it:
//
//	g ← clip(g)                     (global norm over all vars)
//	m ← β1·m + (1−β1)·g;  v ← β2·v + (1−β2)·g²
//	p ← p − lr·wd·p − lr·(m/(1−β1^t)) / (sqrt(v/(1−β2^t)) + ε)
//
// Moments and the step t live in the context under AdamScope, in float32 for any
// parameter dtype. It returns the gradient norm before clipping.
func ApplyAdamW(ctx *context.Context, vars []*context.Variable, grads []*Node, lr *Node, cfg AdamWConfig) (gradNorm *Node) {
	if len(vars) != len(grads) || len(vars) == 0 {
		panic("grpo: ApplyAdamW: need one gradient per variable, and at least one")
	}
	g := lr.Graph()
	f32 := dtypes.Float32
	grads, gradNorm = ClipByGlobalNorm(grads, cfg.ClipNorm)

	adam := ctx.InAbsPath(AdamScope).Checked(false).WithInitializer(initializers.Zero)
	stepVar := adam.VariableWithShape("step", shapes.Make(f32)).SetTrainable(false)
	step := AddScalar(stepVar.ValueGraph(g), 1)
	stepVar.SetValueGraph(step)

	lr = ConvertDType(lr, f32)
	beta1, beta2 := Scalar(g, f32, cfg.Beta1), Scalar(g, f32, cfg.Beta2)
	debias1 := OneMinus(Pow(beta1, step))
	debias2 := OneMinus(Pow(beta2, step))
	for i, v := range vars {
		grad := ConvertDType(grads[i], f32)
		scope := momentScope(v)
		mVar := adam.InAbsPath(scope).VariableWithShape(v.Name()+"_m", shapes.Make(f32, v.Shape().Dimensions...)).SetTrainable(false)
		vVar := adam.InAbsPath(scope).VariableWithShape(v.Name()+"_v", shapes.Make(f32, v.Shape().Dimensions...)).SetTrainable(false)
		m := Add(MulScalar(mVar.ValueGraph(g), cfg.Beta1), MulScalar(grad, 1-cfg.Beta1))
		s := Add(MulScalar(vVar.ValueGraph(g), cfg.Beta2), MulScalar(Square(grad), 1-cfg.Beta2))
		mVar.SetValueGraph(m)
		vVar.SetValueGraph(s)

		p := ConvertDType(v.ValueGraph(g), f32)
		update := Div(Div(m, debias1), AddScalar(Sqrt(Div(s, debias2)), cfg.Eps))
		if cfg.WeightDecay != 0 {
			update = Add(update, MulScalar(p, cfg.WeightDecay))
		}
		p = Sub(p, Mul(lr, update))
		v.SetValueGraph(ConvertDType(p, v.DType()))
	}
	return gradNorm
}

// momentScope is where the moments of v live: AdamScope followed by v's scope.
func momentScope(v *context.Variable) string {
	return underScope(AdamScope, v)
}

// underScope returns root followed by v's scope.
func underScope(root string, v *context.Variable) string {
	if v.Scope() == context.RootScope {
		return root
	}
	return root + v.Scope()
}

// AccumulateGradients adds the gradients of loss with respect to vars into
// float32 accumulators under GradAccumScope (created at zero).
func AccumulateGradients(ctx *context.Context, vars []*context.Variable, loss *Node) {
	g := loss.Graph()
	nodes := make([]*Node, len(vars))
	for i, v := range vars {
		nodes[i] = v.ValueGraph(g)
	}
	grads := Gradient(loss, nodes...)
	for i, v := range vars {
		acc := accumulator(ctx, v)
		acc.SetValueGraph(Add(acc.ValueGraph(g), ConvertDType(grads[i], dtypes.Float32)))
	}
}

// AccumulatedGradients reads the accumulators of vars and resets them to zero
// in the same graph.
func AccumulatedGradients(ctx *context.Context, vars []*context.Variable, g *Graph) []*Node {
	grads := make([]*Node, len(vars))
	for i, v := range vars {
		acc := accumulator(ctx, v)
		grads[i] = acc.ValueGraph(g)
		acc.SetValueGraph(ZerosLike(grads[i]))
	}
	return grads
}

func accumulator(ctx *context.Context, v *context.Variable) *context.Variable {
	return ctx.InAbsPath(underScope(GradAccumScope, v)).Checked(false).WithInitializer(initializers.Zero).
		VariableWithShape(v.Name(), shapes.Make(dtypes.Float32, v.Shape().Dimensions...)).SetTrainable(false)
}

// LearningRate returns the learning rate of optimizer step (0-based): a linear
// warmup from peak/warmup to peak over the first warmup steps, then constant.
func LearningRate(step, warmup int, peak float64) float64 {
	if warmup > 0 && step < warmup {
		return peak * float64(step+1) / float64(warmup)
	}
	return peak
}
