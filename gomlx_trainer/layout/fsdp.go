package layout

import (
	"fmt"

	"github.com/gomlx/compute/distributed"

	"github.com/mathrl/mathrl/internal/english"
)

// FSDPAxis is the axis fsdp splits a tensor of dims along: its largest, the
// first of equals.
func FSDPAxis(dims []int) int {
	axis := 0
	for i, d := range dims {
		if d > dims[axis] {
			axis = i
		}
	}
	return axis
}

// FSDPDeviceCounts lists, in increasing order, the device counts that split
// every tensor of shapes along its FSDPAxis (scalars aside): the divisors
// of those axes' greatest common divisor, 1 included.
func FSDPDeviceCounts(shapes [][]int) []int {
	common := 0
	for _, dims := range shapes {
		if len(dims) > 0 {
			common = gcd(common, dims[FSDPAxis(dims)])
		}
	}
	var out []int
	for d := 1; d <= common; d++ {
		if common%d == 0 {
			out = append(out, d)
		}
	}
	return out
}

func gcd(a, b int) int {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// Variable is a tensor fsdp lays out: its name, for errors, and its shape.
type Variable struct {
	Name string
	Dims []int
}

// CheckFSDP refuses a device count that does not split every variable along
// its FSDPAxis, naming the first that does not split and the device counts
// that would split them all.
func CheckFSDP(n Names, devices int, vars []Variable) error {
	if devices <= 1 {
		return nil
	}
	shapes := make([][]int, len(vars))
	for i, v := range vars {
		shapes[i] = v.Dims
	}
	for _, v := range vars {
		if len(v.Dims) > 0 && v.Dims[FSDPAxis(v.Dims)]%devices != 0 {
			return fmt.Errorf("%s %s %s: %s %v does not split over %s %d along its largest axis; "+
				"%s must divide every variable's largest axis (here %s), or use %s %s",
				n.Prefix, n.Sharding, FSDP, v.Name, v.Dims, n.Devices, devices, n.Devices, english.Or(itoas(FSDPDeviceCounts(shapes))), n.Sharding, Data)
		}
	}
	return nil
}

// FSDPSpec is the fsdp sharding on m of a tensor of dims: a scalar whole on
// every device, any other split along its FSDPAxis and replicated along the
// rest. That axis must split over the devices (CheckFSDP); m must not be
// nil.
func (m *Mesh) FSDPSpec(dims []int) (*distributed.ShardingSpec, error) {
	if len(dims) == 0 {
		return m.repl, nil
	}
	if axis := FSDPAxis(dims); dims[axis]%m.Devices() != 0 {
		return nil, fmt.Errorf("layout: %v does not split over %d devices along axis %d", dims, m.Devices(), axis)
	}
	b := distributed.BuildSpec(m.mesh)
	for i := range dims {
		if i == FSDPAxis(dims) {
			b = b.S(DeviceAxis)
		} else {
			b = b.R()
		}
	}
	return b.Done()
}
