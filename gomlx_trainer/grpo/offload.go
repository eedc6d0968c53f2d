package grpo

import (
	"fmt"
	"slices"

	"github.com/gomlx/compute"
	"github.com/gomlx/gomlx/core/tensors"
	mlmodel "github.com/gomlx/gomlx/ml/model"
)

// OffloadState moves the learner's optimizer state (gradient accumulators,
// AdamW moments and step, the master values of 16-bit weights) off the
// device into host memory, so that a sampling session that follows has that
// memory for its key/value cache (slime's --offload-train). The next step
// brings it back, each tensor as its graph first reads it; the values are
// unchanged, so a run is the same with and without it. It does nothing on
// several devices (the state is then sharded, see Shard) or before the first
// step.
func (l *Learner) OffloadState() error {
	if l.sh != nil {
		return nil
	}
	for _, v := range optimizerVars(l.Model.Store) {
		if !v.HasValue() {
			continue
		}
		t, err := v.Value()
		if err != nil {
			return fmt.Errorf("grpo: offload %s: %w", v.Path(), err)
		}
		if t.IsOnAnyDevice() {
			if err := t.ToLocal(); err != nil {
				return fmt.Errorf("grpo: offload %s: %w", v.Path(), err)
			}
		}
	}
	return nil
}

// DeviceStateBytes is the bytes of the learner's variables (weights and
// optimizer state) that hold a buffer on the device now.
func (l *Learner) DeviceStateBytes() (int64, error) {
	var n int64
	for v := range l.Model.Store.IterVariables() {
		if !v.HasValue() {
			continue
		}
		t, err := v.Value()
		if err != nil {
			return 0, err
		}
		if t.IsOnAnyDevice() {
			n += int64(t.Shape().Memory())
		}
	}
	return n, nil
}

// hostOptimizer is Megatron's --optimizer-cpu-offload: the AdamW update of
// some of the weights runs on a host backend, whose store holds their master
// values, moments and step (and a copy of each such weight). At every step
// the device computes the global norm of all the gradients and updates the
// weights kept there (a groupedUpdate), and hands the gradients of the
// offloaded ones down to the host with the clip scale; the host updates them
// and the new weights go back to the device.
type hostOptimizer struct {
	device  compute.Backend     // the learner's
	backend compute.Backend     // the host's
	store   *mlmodel.Store      // the host's copies of the offloaded weights, and their optimizer state
	vars    []*mlmodel.Variable // the offloaded weights, in the device's store
	copies  []*mlmodel.Variable // the same weights in store, in the same order
	apply   *groupedUpdate      // on the host: the update of copies, from the accumulators handed down (in store)
	kept    *groupedUpdate      // on the device: the global norm of every gradient, and the update of the weights kept there
}

// OffloadOptimizer moves the optimizer of the first fraction of the
// policy's parameters (by count, weights in creation order) to host, a
// backend on the host CPU (optimizer_cpu_offload with
// optimizer_offload_fraction). Call it before the first step; the
// accumulators stay on the device. It needs one device.
func (l *Learner) OffloadOptimizer(host compute.Backend, fraction float64) error {
	switch {
	case l.sh != nil:
		return fmt.Errorf("grpo: optimizer_cpu_offload needs one device, not num_devices %d", l.devices())
	case fraction <= 0 || fraction > 1:
		return fmt.Errorf("grpo: optimizer_offload_fraction %g: want more than 0 and at most 1", fraction)
	case l.ready:
		return fmt.Errorf("grpo: optimizer_cpu_offload: set it before the first step")
	}
	l.host = &hostOptimizer{device: l.backend, backend: host, store: mlmodel.NewStore(), vars: offloadedVars(l.vars, fraction)}
	return nil
}

// offloadedVars is the first fraction of vars by parameter count: every
// weight until their parameters reach fraction of the total.
func offloadedVars(vars []*mlmodel.Variable, fraction float64) []*mlmodel.Variable {
	var total, taken int
	for _, v := range vars {
		total += v.Shape().Size()
	}
	var out []*mlmodel.Variable
	for _, v := range vars {
		if float64(taken) >= fraction*float64(total) {
			break
		}
		out = append(out, v)
		taken += v.Shape().Size()
	}
	return out
}

// prepareHost moves the offloaded weights' optimizer state from the device's
// store (where a checkpoint put it) into the host's, creating what is
// missing, and copies the weights there. It builds the host's update.
func (l *Learner) prepareHost(adam AdamWConfig) error {
	h := l.host
	dev := l.Model.Store
	for _, v := range h.vars {
		local, err := localCopy(v)
		if err != nil {
			return err
		}
		h.copies = append(h.copies, h.store.VariableWithValue(v.Path(), local))
		for _, path := range movedState(dev, v) {
			if err := moveVariable(dev, h.store, path); err != nil {
				return err
			}
		}
	}
	if dev.GetVariable(AdamScope+"/step") != nil && h.store.GetVariable(AdamScope+"/step") == nil {
		if err := moveVariable(dev, h.store, AdamScope+"/step"); err != nil { // the step counts on both
			return err
		}
	}
	hostAdam := adam
	hostAdam.ClipNorm = 0 // the device clipped every gradient by the global norm
	if err := createUpdateState(h.store, h.copies, hostAdam.Precision); err != nil {
		return err
	}
	for _, v := range h.vars { // the device keeps only their accumulators
		for _, path := range movedState(dev, v) {
			if err := dev.DeleteVariable(path); err != nil {
				return err
			}
		}
	}
	h.apply = newGroupedUpdate(h.backend, h.store, nil, h.copies, hostAdam)
	var kept []*mlmodel.Variable
	for _, v := range l.vars {
		if !slices.Contains(h.vars, v) {
			kept = append(kept, v)
		}
	}
	h.kept = newGroupedUpdate(l.backend, dev, l.vars, kept, adam)
	return nil
}

// movedState is the paths of the optimizer state of v in store that the
// host's optimizer keeps instead: its moments and master, those that exist.
func movedState(store *mlmodel.Store, v *mlmodel.Variable) []string {
	var out []string
	for _, path := range []string{AdamScope + v.Path() + "_m", AdamScope + v.Path() + "_v", MasterScope + v.Path(),
		MasterScope + v.Path() + remainderSuffix} {
		if store.GetVariable(path) != nil {
			out = append(out, path)
		}
	}
	return out
}

// moveVariable copies the variable at path from one store to another, its
// value into host memory (one not yet initialised is left for the other
// store to create).
func moveVariable(from, to *mlmodel.Store, path string) error {
	v := from.GetVariable(path)
	if !v.HasValue() {
		return nil // still at its zero initial value: the host makes its own
	}
	local, err := localCopy(v)
	if err != nil {
		return err
	}
	to.VariableWithValue(path, local).SetTrainable(false)
	return nil
}

// localCopy is a copy of v's value in host memory.
func localCopy(v *mlmodel.Variable) (*tensors.Tensor, error) {
	t, err := v.Value()
	if err != nil {
		return nil, err
	}
	return t.LocalClone()
}

// step takes one optimizer step at learning rate lr with the host's
// optimizer: the device computes the global norm of all the accumulated
// gradients and the clip scale, and updates the weights kept there; the
// accumulators of the others go down to the host (their device memory freed),
// which scales them, updates its copies of those weights and their state,
// and sets the new weights on the device's store. It returns the norm.
func (h *hostOptimizer) step(dev *mlmodel.Store, lr float64) (float64, error) {
	norm, scale, err := h.kept.step(lr)
	if err != nil {
		return norm, err
	}
	for i, v := range h.vars {
		if err := h.handDown(accumulator(dev, v), h.copies[i]); err != nil {
			return norm, err
		}
	}
	_, _, step, err := h.apply.clipAndCount() // the host's step
	if err != nil {
		return norm, err
	}
	if err := h.apply.update(lr, tensors.FromScalar(scale.Value().(float32)), step); err != nil {
		return norm, fmt.Errorf("grpo: optimizer step on the host: %w", err)
	}
	for i, c := range h.copies {
		local, err := localCopy(c)
		if err != nil {
			return norm, err
		}
		if err := local.ToDevice(h.device, 0); err != nil { // back up now, ready for the sampler
			return norm, err
		}
		if err := h.vars[i].SetValue(local); err != nil {
			return norm, err
		}
	}
	return norm, nil
}

// handDown moves the accumulator acc of an offloaded weight into host
// memory, as the accumulator of its copy c in the host's store, and frees
// its device memory.
func (h *hostOptimizer) handDown(acc, c *mlmodel.Variable) error {
	local, err := localCopy(acc)
	if err != nil {
		return err
	}
	if err := acc.Reset(); err != nil {
		return err
	}
	if hostAcc := h.store.GetVariable(GradAccumScope + c.Path()); hostAcc != nil {
		return hostAcc.SetValue(local)
	}
	h.store.VariableWithValue(GradAccumScope+c.Path(), local).SetTrainable(false)
	return nil
}

// stateVariables are the optimizer state a checkpoint saves: the device's,
// and with the host's optimizer its state, which takes the place of any
// variable of the same path on the device.
func (l *Learner) stateVariables() []*mlmodel.Variable {
	vars := optimizerVars(l.Model.Store)
	if l.host == nil || l.host.apply == nil {
		return vars
	}
	hostVars := optimizerVars(l.host.store)
	for i, v := range vars {
		if j := slices.IndexFunc(hostVars, func(h *mlmodel.Variable) bool { return h.Path() == v.Path() }); j >= 0 {
			vars[i] = hostVars[j]
			hostVars = slices.Delete(hostVars, j, j+1)
		}
	}
	return append(vars, hostVars...)
}
