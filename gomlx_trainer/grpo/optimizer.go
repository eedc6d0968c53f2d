package grpo

import (
	"strings"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/shapes"
	. "github.com/gomlx/gomlx/core/graph" //nolint:staticcheck // graph-building code reads better unqualified
	mlmodel "github.com/gomlx/gomlx/ml/model"
	"github.com/gomlx/gomlx/ml/model/initializer"

	"github.com/mathrl/mathrl/gomlx_trainer/gomlxfix"
	"github.com/mathrl/mathrl/gomlx_trainer/precision"
)

// Scopes of the trainer's own variables in the GoMLX model.Store. They are not
// trainable and are saved in checkpoints beside the weights.
const (
	AdamScope      = "/adamw"      // first and second moments, and the step counter
	GradAccumScope = "/grad_accum" // gradients summed over the micro-batches of one optimizer step
)

// AdamWConfig holds the knobs of ApplyAdamW. The learning rate is a graph input,
// so the host can follow a schedule without recompiling.
type AdamWConfig struct {
	Beta1, Beta2 float64             // moment decay rates
	Eps          float64             // added to sqrt(v̂)
	WeightDecay  float64             // decoupled weight decay, multiplied by the learning rate
	ClipNorm     float64             // global gradient-norm clip; 0: none
	Precision    precision.Optimizer // dtypes of the state and the master of 16-bit weights (the zero value: float32, with a float32 master)
}

// TrainableVariables returns the store's trainable variables in creation
// order, leaving out the optimizer's and the accumulator's own variables.
func TrainableVariables(store *mlmodel.Store) []*mlmodel.Variable {
	var vars []*mlmodel.Variable
	for v := range store.IterVariables() {
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
	return ScaleGradients(grads, ClipScale(norm, maxNorm)), norm
}

// ClipScale is the factor that clips gradients of global norm norm at
// maxNorm: maxNorm / max(norm, maxNorm), 1 below the threshold and never a
// division by 0 (maxNorm > 0).
func ClipScale(norm *Node, maxNorm float64) *Node {
	return Div(Scalar(norm.Graph(), dtypes.Float32, maxNorm), Max(norm, Scalar(norm.Graph(), dtypes.Float32, maxNorm)))
}

// ScaleGradients multiplies every gradient by the float32 scalar scale.
func ScaleGradients(grads []*Node, scale *Node) []*Node {
	out := make([]*Node, len(grads))
	for i, gr := range grads {
		out[i] = Mul(gr, ConvertDType(scale, gr.DType()))
	}
	return out
}

// ApplyAdamW builds one AdamW update of vars from grads (same order), as
// PyTorch's AdamW does it:
//
//	g ← clip(g)                     (global norm over all vars)
//	m ← β1·m + (1−β1)·g;  v ← β2·v + (1−β2)·g²
//	p ← p − lr·wd·p − lr·(m/(1−β1^t)) / (sqrt(v/(1−β2^t)) + ε)
//
// The arithmetic is float32. Moments and the step t live in the store under
// AdamScope, in the dtypes cfg.Precision gives (float32 by default); p is the
// weight's master value (see precision.Optimizer and the Master* modes), so that an
// update far below half a bfloat16 ulp still adds up over steps. It returns
// the gradient norm before clipping.
func ApplyAdamW(store *mlmodel.Store, vars []*mlmodel.Variable, grads []*Node, lr *Node, cfg AdamWConfig) (gradNorm *Node) {
	if len(vars) != len(grads) || len(vars) == 0 {
		panic("grpo: ApplyAdamW: need one gradient per variable, and at least one")
	}
	g := lr.Graph()
	grads, gradNorm = ClipByGlobalNorm(grads, cfg.ClipNorm)

	stepVar := adamStep(store)
	step := AddScalar(gomlxfix.VariableNode(stepVar, g), 1)
	stepVar.SetNodeValue(step)
	k := adamTermsAt(lr, step, cfg)
	for i, v := range vars {
		mVar, vVar := adamMoments(store, v, cfg.Precision)
		m, s := gomlxfix.VariableNode(mVar, g), gomlxfix.VariableNode(vVar, g)
		p := masterValue(store, v, cfg.Precision, g)
		x, m, s := adamW(p, grads[i], m, s, k, cfg)
		mVar.SetNodeValue(ConvertDType(m, mVar.DType()))
		vVar.SetNodeValue(ConvertDType(s, vVar.DType()))
		setMaster(store, v, cfg.Precision, x, k.stepBits, Scalar(g, dtypes.Uint32, i))
	}
	return gradNorm
}

// adamTerms are the float32 scalars one AdamW step shares over its weights:
// the learning rate, the moments' bias corrections 1−β^t, and the step t as
// a uint32 (it keys the draws of stochastic rounding).
type adamTerms struct {
	lr, debias1, debias2, stepBits *Node
}

// adamTermsAt is adamTerms at learning rate lr and step (float32, counted
// from 1).
func adamTermsAt(lr, step *Node, cfg AdamWConfig) adamTerms {
	g, f32 := step.Graph(), dtypes.Float32
	beta1, beta2 := Scalar(g, f32, cfg.Beta1), Scalar(g, f32, cfg.Beta2)
	return adamTerms{lr: ConvertDType(lr, f32), debias1: OneMinus(Pow(beta1, step)), debias2: OneMinus(Pow(beta2, step)),
		stepBits: ConvertDType(step, dtypes.Uint32)}
}

// adamW is AdamW's update of one weight, the per-element arithmetic of every
// update the trainer runs: from its float32 master value p, its clipped
// gradient grad and its moments m and s (in the dtypes they are kept in), the
// new master value and moments, in float32.
func adamW(p, grad, m, s *Node, k adamTerms, cfg AdamWConfig) (newP, newM, newS *Node) {
	f32 := dtypes.Float32
	grad = ConvertDType(grad, f32)
	newM = Add(MulScalar(ConvertDType(m, f32), cfg.Beta1), MulScalar(grad, 1-cfg.Beta1))
	newS = Add(MulScalar(ConvertDType(s, f32), cfg.Beta2), MulScalar(Square(grad), 1-cfg.Beta2))
	update := Div(Div(newM, k.debias1), AddScalar(Sqrt(Div(newS, k.debias2)), cfg.Eps))
	if cfg.WeightDecay != 0 {
		update = Add(update, MulScalar(p, cfg.WeightDecay))
	}
	return Sub(p, Mul(k.lr, update)), newM, newS
}

// adamStep is AdamW's step counter, a float32 scalar under AdamScope.
func adamStep(store *mlmodel.Store) *mlmodel.Variable {
	return state(store, AdamScope+"/step", shapes.Make(dtypes.Float32))
}

// adamMoments are AdamW's first and second moments of v under AdamScope, in
// the dtypes p gives.
func adamMoments(store *mlmodel.Store, v *mlmodel.Variable, p precision.Optimizer) (m, s *mlmodel.Variable) {
	dims := v.Shape().Dimensions
	return state(store, AdamScope+v.Path()+"_m", shapes.Make(orFloat32(p.ExpAvgDType), dims...)),
		state(store, AdamScope+v.Path()+"_v", shapes.Make(orFloat32(p.ExpAvgSqDType), dims...))
}

// createOptimizerState creates the variables AccumulateGradients and
// ApplyAdamW keep for vars where they do not exist yet: each one's
// accumulator (at zero) and the update's state (createUpdateState). The
// graphs would create the zero ones on their first build; creating them
// first lets a sharding be set on each.
func createOptimizerState(store *mlmodel.Store, vars []*mlmodel.Variable, p precision.Optimizer) error {
	for _, v := range vars {
		if _, err := ensureState(store, GradAccumScope+v.Path(), shapes.Make(orFloat32(p.GradDType), v.Shape().Dimensions...)); err != nil {
			return err
		}
	}
	return createUpdateState(store, vars, p)
}

// CreateUpdateState is createUpdateState, for a caller that builds its own
// ApplyAdamW graph (mathrl bench): ApplyAdamW reads each 16-bit weight's
// master, which only exists once created.
func CreateUpdateState(store *mlmodel.Store, vars []*mlmodel.Variable, p precision.Optimizer) error {
	return createUpdateState(store, vars, p)
}

// createUpdateState creates what ApplyAdamW keeps for vars where it does not
// exist yet: the step counter, each one's moments (at zero) and its master
// value (createMaster). State read from a checkpoint is kept, converted to
// the dtypes p gives.
func createUpdateState(store *mlmodel.Store, vars []*mlmodel.Variable, p precision.Optimizer) error {
	adamStep(store)
	for _, v := range vars {
		dims := v.Shape().Dimensions
		for _, s := range []struct {
			path  string
			dtype dtypes.DType
		}{{AdamScope + v.Path() + "_m", orFloat32(p.ExpAvgDType)}, {AdamScope + v.Path() + "_v", orFloat32(p.ExpAvgSqDType)}} {
			if _, err := ensureState(store, s.path, shapes.Make(s.dtype, dims...)); err != nil {
				return err
			}
		}
		if err := createMaster(store, v, p); err != nil {
			return err
		}
	}
	return nil
}

// state returns the trainer's variable at path, created at zero and not
// trainable.
func state(store *mlmodel.Store, path string, shape shapes.Shape) *mlmodel.Variable {
	return store.VariableWithShape(path, shape, initializer.Zero).SetTrainable(false)
}

// AccumulateGradients adds the gradients of loss with respect to vars into
// the accumulators under GradAccumScope (created at zero, float32 unless
// createOptimizerState made them in another dtype); the sum is float32.
func AccumulateGradients(store *mlmodel.Store, vars []*mlmodel.Variable, loss *Node) {
	g := loss.Graph()
	nodes := make([]*Node, len(vars))
	for i, v := range vars {
		nodes[i] = gomlxfix.VariableNode(v, g)
	}
	grads := Gradient(loss, nodes...)
	for i, v := range vars {
		acc := accumulator(store, v)
		sum := Add(ConvertDType(gomlxfix.VariableNode(acc, g), dtypes.Float32), ConvertDType(grads[i], dtypes.Float32))
		acc.SetNodeValue(ConvertDType(sum, acc.DType()))
	}
}

// AccumulatedGradients reads the accumulators of vars, and with zero resets
// them to zero in the same graph (a learner on one device frees them after
// the step instead, see Learner.Apply).
func AccumulatedGradients(store *mlmodel.Store, vars []*mlmodel.Variable, g *Graph, zero bool) []*Node {
	grads := make([]*Node, len(vars))
	for i, v := range vars {
		acc := accumulator(store, v)
		grads[i] = gomlxfix.VariableNode(acc, g)
		if zero {
			acc.SetNodeValue(ZerosLike(grads[i]))
		}
	}
	return grads
}

// accumulator is the gradient accumulator of v under GradAccumScope: the one
// createOptimizerState made, else a float32 one at zero.
func accumulator(store *mlmodel.Store, v *mlmodel.Variable) *mlmodel.Variable {
	if acc := store.GetVariable(GradAccumScope + v.Path()); acc != nil {
		return acc
	}
	return state(store, GradAccumScope+v.Path(), shapes.Make(dtypes.Float32, v.Shape().Dimensions...))
}

// LearningRate returns the learning rate of optimizer step (0-based): a linear
// warmup from peak/warmup to peak over the first warmup steps, then constant.
func LearningRate(step, warmup int, peak float64) float64 {
	if warmup > 0 && step < warmup {
		return peak * float64(step+1) / float64(warmup)
	}
	return peak
}
