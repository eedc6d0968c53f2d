package grpo

import (
	"fmt"

	"github.com/gomlx/compute"
	. "github.com/gomlx/gomlx/core/graph" //nolint:staticcheck // graph-building code reads better unqualified
	"github.com/gomlx/gomlx/core/tensors"
	mlmodel "github.com/gomlx/gomlx/ml/model"

	"github.com/mathrl/mathrl/gomlx_trainer/gomlxfix"
	"github.com/mathrl/mathrl/gomlx_trainer/precision"
)

// groupedUpdate is the optimizer step on one device, one weight at a time.
// A small graph computes the global norm of the accumulated gradients, the
// clip scale and the next step (counting it); then each weight's update runs
// alone, its weight, moments, master and accumulator donated, so that only
// one weight's old and new state exist at once. (GoMLX v0.28.2 declares no
// input/output aliasing to XLA, so one graph updating every weight would
// hold all the new state beside the old until it ends.) The update of a
// weight is one executable per master mode, compiled once per shape and
// dtypes and shared by every weight of that signature (a model's layers
// repeat a handful). Its arithmetic is adamW's, so the weights end bit for
// bit as ApplyAdamW's one graph leaves them.
type groupedUpdate struct {
	backend compute.Backend
	store   *mlmodel.Store
	vars    []*mlmodel.Variable // the weights it updates, in order
	index   []*tensors.Tensor   // each one's place in vars (uint32), which keys its draws of stochastic rounding
	adam    AdamWConfig         // ClipNorm applies to the norm of every accumulator the clip graph reads
	clip    *mlmodel.Exec       // () -> the global norm, the clip scale (1 without clipping), the step
	execs   map[string]*Exec    // by master mode: (lr, scale, step, index, accumulator, weight, m, v[, master]) -> weight, m, v[, master]
}

// newGroupedUpdate builds the grouped update of vars in store, clipped by the
// global norm of the accumulators of all (vars among them; none: the norm
// is 0 and the scale 1, for an update that is handed its scale).
func newGroupedUpdate(backend compute.Backend, store *mlmodel.Store, all, vars []*mlmodel.Variable, adam AdamWConfig) *groupedUpdate {
	u := &groupedUpdate{backend: backend, store: store, vars: vars, adam: adam, execs: map[string]*Exec{}}
	for i := range vars {
		u.index = append(u.index, tensors.FromScalar(uint32(i)))
	}
	u.clip = mlmodel.MustNewExec(backend, store, func(scope *mlmodel.Scope, g *Graph) []*Node {
		stepVar := adamStep(scope.Store())
		step := AddScalar(gomlxfix.VariableNode(stepVar, g), 1)
		stepVar.SetNodeValue(step)
		if len(all) == 0 {
			return []*Node{ZerosLike(step), OnesLike(step), step}
		}
		norm := GlobalNorm(AccumulatedGradients(scope.Store(), all, g, false))
		scale := OnesLike(norm)
		if adam.ClipNorm > 0 {
			scale = ClipScale(norm, adam.ClipNorm)
		}
		return []*Node{norm, scale, step}
	}).WithName("GradientClip")
	return u
}

// step takes one optimizer step at learning rate lr and returns the global
// gradient norm before clipping and the clip scale (a float32 scalar).
func (u *groupedUpdate) step(lr float64) (float64, *tensors.Tensor, error) {
	norm, scale, step, err := u.clipAndCount()
	if err != nil {
		return 0, nil, err
	}
	return norm, scale, u.update(lr, scale, step)
}

// clipAndCount runs the clip graph: it counts the step and returns the
// global gradient norm, the clip scale and the step (float32 scalars).
func (u *groupedUpdate) clipAndCount() (float64, *tensors.Tensor, *tensors.Tensor, error) {
	out, err := u.clip.Call()
	if err != nil {
		return 0, nil, nil, fmt.Errorf("grpo: gradient norm: %w", err)
	}
	return float64(out[0].Value().(float32)), out[1], out[2], nil
}

// update updates every weight at learning rate lr with its accumulated
// gradient times scale, at step.
func (u *groupedUpdate) update(lr float64, scale, step *tensors.Tensor) error {
	rate := tensors.FromScalar(float32(lr))
	for i, v := range u.vars {
		if err := u.updateOne(i, v, rate, scale, step); err != nil {
			return fmt.Errorf("grpo: optimizer step of %s: %w", v.Path(), err)
		}
	}
	return nil
}

// updateOne updates the weight vars[i] and its state, donating their
// buffers and its accumulator's (which is left without a value).
func (u *groupedUpdate) updateOne(i int, v *mlmodel.Variable, lr, scale, step *tensors.Tensor) error {
	mode := masterOf(u.adam.Precision, v)
	state := u.stateOf(v, mode)
	args := []any{lr, scale, step, u.index[i]}
	for _, sv := range append([]*mlmodel.Variable{accumulator(u.store, v)}, state...) {
		donated, err := donate(sv, u.backend)
		if err != nil {
			return err
		}
		args = append(args, donated)
	}
	e, err := u.exec(mode)
	if err != nil {
		return err
	}
	out, err := e.Call(args...)
	if err != nil {
		return err
	}
	for j, sv := range state {
		if err := sv.SetValue(out[j]); err != nil {
			return err
		}
	}
	return nil
}

// stateOf is what the update of weight v writes, in the order of its
// graph's outputs: the weight, its moments, and its master where mode keeps
// one.
func (u *groupedUpdate) stateOf(v *mlmodel.Variable, mode string) []*mlmodel.Variable {
	m, s := adamMoments(u.store, v, u.adam.Precision)
	state := []*mlmodel.Variable{v, m, s}
	if mode == precision.MasterFloat32 || mode == precision.MasterRemainder {
		state = append(state, u.store.GetVariable(masterPath(v, mode)))
	}
	return state
}

// donate hands v's buffer on device 0 to the next graph call, leaving v
// without a value.
func donate(v *mlmodel.Variable, backend compute.Backend) (any, error) {
	t, err := v.Value()
	if err != nil {
		return nil, err
	}
	donated, err := DonateTensorBuffer(t, backend, 0)
	if err != nil {
		return nil, err
	}
	return donated, v.Reset()
}

// exec is the update of one weight kept as mode says, built on first use.
func (u *groupedUpdate) exec(mode string) (*Exec, error) {
	if e, ok := u.execs[mode]; ok {
		return e, nil
	}
	e, err := NewExec(u.backend, func(in []*Node) []*Node {
		return updateGraph(mode, in, u.adam)
	})
	if err != nil {
		return nil, err
	}
	u.execs[mode] = e.WithName("AdamW_" + mode).SetMaxCache(-1)
	return u.execs[mode], nil
}

// updateGraph is the AdamW update of one weight in the grouped update, on
// the inputs (lr, scale, step, index, accumulator, weight, m, v[, master]):
// the gradient is the accumulator times the clip scale, as ClipByGlobalNorm
// scales it, and the rest is ApplyAdamW's. It returns the new weight,
// moments and master, in their dtypes.
func updateGraph(mode string, in []*Node, cfg AdamWConfig) []*Node {
	lr, scale, step, index, acc, w, m, s := in[0], in[1], in[2], in[3], in[4], in[5], in[6], in[7]
	var master *Node
	if len(in) > 8 {
		master = in[8]
	}
	k := adamTermsAt(lr, step, cfg)
	x, newM, newS := adamW(joinMaster(mode, w, master), ScaleGradients([]*Node{acc}, scale)[0], m, s, k, cfg)
	newW, newMaster := splitMaster(mode, x, w.DType(), cfg.Precision.Seed, k.stepBits, index)
	out := []*Node{newW, ConvertDType(newM, m.DType()), ConvertDType(newS, s.DType())}
	if newMaster != nil {
		out = append(out, newMaster)
	}
	return out
}
