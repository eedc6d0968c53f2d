package sampler

import (
	"errors"
	"fmt"

	"github.com/gomlx/compute"
	"github.com/gomlx/compute/distributed"
	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/core/tensors/dtensor"
	mlmodel "github.com/gomlx/gomlx/ml/model"

	"github.com/mathrl/mathrl/gomlx_trainer/layout"
)

// onMesh is how a sampler's graphs run over several devices: every session's
// batch split on its first axis as the layout.Mesh splits a batch (the
// prompts, the cache, the sampled ids), the knobs replicated, and the
// weights as the model's store holds them (whole on every device, or
// sharded, XLA gathering them). Its methods on a nil *onMesh run on one
// device.
type onMesh struct {
	lay   *layout.Mesh
	mesh  *distributed.DeviceMesh   // lay's, and its specs:
	batch *distributed.ShardingSpec // axis 0 split
	repl  *distributed.ShardingSpec // whole on every device
}

// OnMesh runs the sampler's sessions over mesh's devices, each batch split
// as mesh splits a batch (rows are padded to divide, layout.PadRows); the
// model's weights are read as its store shards them, on this mesh. It must
// be called before the first session. Slot sessions (StartSlots) stay on
// one device.
func (s *Sampler) OnMesh(mesh *layout.Mesh) error {
	if len(s.execs) > 0 || len(s.zeros) > 0 {
		return errors.New("sampler: OnMesh after the first session")
	}
	if mesh == nil {
		return errors.New("sampler: OnMesh of no mesh")
	}
	s.mesh = &onMesh{mesh: mesh.DeviceMesh(), lay: mesh, batch: mesh.Batch(), repl: mesh.Replicated()}
	return nil
}

// count is the number of devices.
func (m *onMesh) count() int {
	if m == nil {
		return 1
	}
	return m.lay.Devices()
}

// padRows appends copies of the first prompt until the rows split over
// devices (layout.PadRows); the session keeps those rows inactive.
func padRows(prompts [][]int, devices int) [][]int {
	return layout.PadRows(prompts, devices, func() []int { return prompts[0] })
}

// splitGraph has a cache graph (an empty cache, or one grown) produce its
// tensors split on the batch axis, and take them so when withInput.
func (m *onMesh) splitGraph(e *graph.Exec, withInput bool) {
	if m == nil {
		return
	}
	e.AutoSharding(m.mesh).WithOutputShardingSpecs(m.batch)
	if withInput {
		e.WithInputShardingSpecs(m.batch)
	}
}

// splitStep lays out the model step's inputs (tokens, starts, lengths, the
// three knobs, the draw keys, then the cache) and outputs (ids, log-probs,
// then the cache).
func (m *onMesh) splitStep(e *mlmodel.Exec) error {
	if m == nil {
		return nil
	}
	e.AutoSharding(m.mesh).WithInputShardingSpecs(m.batch, m.batch, m.batch, m.repl, m.repl, m.repl, m.batch, m.batch).
		WithOutputShardingSpecs(m.batch)
	if err := e.SetDefaultShardingSpec(m.repl); err != nil {
		return fmt.Errorf("sampler: %w", err)
	}
	return nil
}

// stepSpecs are the specs of the step's host inputs, in order.
func (m *onMesh) stepSpecs() []*distributed.ShardingSpec {
	return []*distributed.ShardingSpec{m.batch, m.batch, m.batch, m.repl, m.repl, m.repl, m.batch}
}

// call runs one model step on host inputs and the cache (donated), and
// returns the sampled ids and log-probs of every row and the new cache. On a
// mesh the inputs are split device by device and the cache holds each
// tensor's shards in device order.
func (m *onMesh) call(b compute.Backend, e *mlmodel.Exec, host []any, cache []*tensors.Tensor) ([]int32, []float32, []*tensors.Tensor, error) {
	devices := m.count()
	per := len(cache) / devices
	shards := make([][]*tensors.Tensor, len(host))
	for i, a := range host {
		t, err := tensors.FromAnyValue(a)
		if err != nil {
			return nil, nil, nil, err
		}
		if m == nil {
			shards[i] = []*tensors.Tensor{t}
			continue
		}
		dt, err := dtensor.ShardTensor(m.stepSpecs()[i], t)
		if err != nil {
			return nil, nil, nil, err
		}
		shards[i] = dt.Shards()
	}
	var args []any
	for d := range devices {
		for i := range host {
			args = append(args, shards[i][d])
		}
		for _, t := range cache[d*per : (d+1)*per] {
			donated, err := graph.DonateTensorBuffer(t, b, compute.DeviceNum(d))
			if err != nil {
				return nil, nil, nil, err
			}
			args = append(args, donated)
		}
	}
	out, err := e.Call(args...)
	if err != nil {
		return nil, nil, nil, err
	}
	var ids []int32
	var logProbs []float32
	next := make([]*tensors.Tensor, 0, len(cache))
	outs := len(out) / devices
	for d := range devices {
		o := out[d*outs : (d+1)*outs]
		tensors.MustConstFlatData(o[0], func(f []int32) { ids = append(ids, f...) })
		tensors.MustConstFlatData(o[1], func(f []float32) { logProbs = append(logProbs, f...) })
		o[0].FinalizeAll()
		o[1].FinalizeAll()
		next = append(next, o[2:]...)
	}
	return ids, logProbs, next, nil
}

// Devices is the number of devices the session's batch is split over.
func (ss *Session) Devices() int { return ss.s.mesh.count() }

// RowsPerDevice is the rows of the batch each device holds.
func (ss *Session) RowsPerDevice() int { return ss.cache[0].Shape().Dimensions[0] }
