package layout

import (
	"fmt"

	"github.com/gomlx/compute/distributed"
)

// The mesh's axes. Batches (and under fsdp the variables) are split along
// DeviceAxis; ReplicaAxis is the axis of Shape.Replicas, which no mesh has
// yet (only one replica runs).
const (
	ReplicaAxis = "replicas"
	DeviceAxis  = "devices"
)

// Shape is a mesh's 2-D shape, [replicas, devices]: Replicas groups (hosts,
// or the replicas of hybrid sharding) of Devices devices each. Only
// Replicas 1 runs today.
type Shape struct {
	Replicas, Devices int
}

// OneReplica is the shape of devices devices in one replica, the only one
// that runs today.
func OneReplica(devices int) Shape { return Shape{Replicas: 1, Devices: devices} }

// Mesh is a device mesh of a Shape with the sharding specs every graph on
// it uses: a batch split on its first axis, and a tensor whole on every
// device. A nil *Mesh is one device.
type Mesh struct {
	shape Shape
	mesh  *distributed.DeviceMesh
	batch *distributed.ShardingSpec // axis 0 split along DeviceAxis
	repl  *distributed.ShardingSpec // whole on every device
}

// NewMesh lays out a mesh of shape, which needs no device. With one replica
// it is GoMLX's 1-D mesh along DeviceAxis; more replicas are refused.
func NewMesh(s Shape) (*Mesh, error) {
	switch {
	case s.Replicas != 1:
		return nil, fmt.Errorf("layout: mesh [%d %d]: %d replicas, but only 1 runs (hybrid sharding is not built)", s.Replicas, s.Devices, s.Replicas)
	case s.Devices < 1:
		return nil, fmt.Errorf("layout: mesh [%d %d]: %d devices, want at least 1", s.Replicas, s.Devices, s.Devices)
	}
	mesh, err := distributed.NewDeviceMesh([]int{s.Devices}, []string{DeviceAxis})
	if err != nil {
		return nil, fmt.Errorf("layout: mesh of %d devices: %w", s.Devices, err)
	}
	batch, err := distributed.BuildSpec(mesh).S(DeviceAxis).Done()
	if err != nil {
		return nil, fmt.Errorf("layout: mesh of %d devices: %w", s.Devices, err)
	}
	return &Mesh{shape: s, mesh: mesh, batch: batch, repl: distributed.NewReplicatedShardingSpec(mesh)}, nil
}

// Shape is the mesh's shape ([1 1] for a nil mesh).
func (m *Mesh) Shape() Shape {
	if m == nil {
		return OneReplica(1)
	}
	return m.shape
}

// Devices is the number of devices of the mesh (1 for a nil mesh).
func (m *Mesh) Devices() int {
	s := m.Shape()
	return s.Replicas * s.Devices
}

// DeviceMesh is GoMLX's mesh, for graph.Exec.AutoSharding (nil for a nil mesh).
func (m *Mesh) DeviceMesh() *distributed.DeviceMesh {
	if m == nil {
		return nil
	}
	return m.mesh
}

// Batch is the spec of a batch: split on its first axis, along DeviceAxis
// (nil for a nil mesh).
func (m *Mesh) Batch() *distributed.ShardingSpec {
	if m == nil {
		return nil
	}
	return m.batch
}

// Replicated is the spec of a tensor whole on every device (nil for a nil
// mesh).
func (m *Mesh) Replicated() *distributed.ShardingSpec {
	if m == nil {
		return nil
	}
	return m.repl
}
