package layout

import (
	"slices"
	"strings"
	"testing"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/shapes"
)

// names are the knobs of a config, as grpo names them.
var names = Names{Prefix: "grpo: config", Devices: "num_devices", Sharding: "sharding"}

// tinyShapes are the shapes of the tiny model's weights (vocabulary 300,
// hidden 64, MLP 192, 8 query and 8 key-value heads of 8) and a scalar.
var tinyShapes = [][]int{{300, 64}, {64}, {64, 64}, {64, 192}, {192, 64}, {8}, {8, 64, 64}, {}}

// TestFSDPAxisTakesTheFirstOfEquals: fsdp splits a tensor along its largest
// axis, and of equal largest axes along the first, whatever comes before or
// after them.
func TestFSDPAxisTakesTheFirstOfEquals(t *testing.T) {
	for _, tc := range []struct {
		dims []int
		want int
	}{
		{[]int{64}, 0}, {[]int{300, 64}, 0}, {[]int{64, 300}, 1}, {[]int{64, 64}, 0},
		{[]int{2, 64, 64}, 1}, {[]int{64, 2, 64}, 0}, {[]int{2, 64, 8, 64}, 1}, {[]int{1, 1, 1}, 0},
	} {
		if got := FSDPAxis(tc.dims); got != tc.want {
			t.Errorf("FSDPAxis(%v) = %d, want %d", tc.dims, got, tc.want)
		}
	}
}

// TestFSDPDeviceCounts: the counts that split every largest axis are the
// divisors of their greatest common divisor, scalars aside.
func TestFSDPDeviceCounts(t *testing.T) {
	for _, tc := range []struct {
		shapes [][]int
		want   []int
	}{
		{tinyShapes, []int{1, 2, 4}}, // gcd of 300, 64, 64, 192, 192, 8 and 64
		{[][]int{{64, 192}, {8, 64, 64}}, []int{1, 2, 4, 8, 16, 32, 64}},
		{[][]int{{300, 64}, {64}}, []int{1, 2, 4}},
		{[][]int{{10, 4}, {8}, {4}, {2}}, []int{1, 2}},
		{[][]int{{7}, {}}, []int{1, 7}},
		{[][]int{{}}, nil},
	} {
		if got := FSDPDeviceCounts(tc.shapes); !slices.Equal(got, tc.want) {
			t.Errorf("FSDPDeviceCounts(%v) = %v, want %v", tc.shapes, got, tc.want)
		}
	}
}

// TestFSDPSpec lays the tiny model's weights out on a mesh of 4 devices:
// each is held as 4 shards of a quarter of its largest axis, of equal ones
// the first, and a scalar whole. A tensor whose axis does not split is an
// error.
func TestFSDPSpec(t *testing.T) {
	m, err := NewMesh(OneReplica(4))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ dims, shard []int }{
		{[]int{300, 64}, []int{75, 64}}, {[]int{64}, []int{16}}, {[]int{64, 64}, []int{16, 64}},
		{[]int{64, 192}, []int{64, 48}}, {[]int{8, 64, 64}, []int{8, 16, 64}}, {[]int{}, []int{}},
	} {
		spec, err := m.FSDPSpec(tc.dims)
		if err != nil {
			t.Fatalf("%v: %v", tc.dims, err)
		}
		if got := spec.ShardShape(shapes.Make(dtypes.Float32, tc.dims...)).Dimensions; !slices.Equal(got, tc.shard) {
			t.Errorf("%v: shards of %v, want %v", tc.dims, got, tc.shard)
		}
	}
	if _, err := m.FSDPSpec([]int{6, 2}); err == nil {
		t.Error("[6 2] on 4 devices: no error")
	}
}

// TestCheckFSDP: on 8 devices the tiny embedding's 300 rows do not split,
// one error naming it, its shape and the counts that would split every
// variable; 4 devices (and one) split them all.
func TestCheckFSDP(t *testing.T) {
	var vars []Variable
	for i, dims := range tinyShapes {
		vars = append(vars, Variable{Name: []string{"/embed", "/norm", "/q", "/up", "/down", "/head_norm", "/stack", "/step"}[i], Dims: dims})
	}
	for _, n := range []int{1, 2, 4} {
		if err := CheckFSDP(names, n, vars); err != nil {
			t.Errorf("%d devices: %v", n, err)
		}
	}
	want := "grpo: config sharding fsdp: /embed [300 64] does not split over num_devices 8 along its largest axis; " +
		"num_devices must divide every variable's largest axis (here 1, 2 or 4), or use sharding data"
	if err := CheckFSDP(names, 8, vars); err == nil || err.Error() != want {
		t.Errorf("8 devices: %v\nwant %s", err, want)
	}
	want = "/head_norm [8] does not split over num_devices 16"
	if err := CheckFSDP(names, 16, vars[1:]); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("16 devices without the embedding: %v, want %q", err, want)
	}
}

// TestCheckFSDPOnTwoDevices: two devices are the first count that can fail
// to split a variable: an odd largest axis does not split over 2, and the
// error names the counts that would (here only 1); no device or one splits
// anything.
func TestCheckFSDPOnTwoDevices(t *testing.T) {
	vars := []Variable{{Name: "/q", Dims: []int{64, 64}}, {Name: "/odd", Dims: []int{3, 2}}, {Name: "/step", Dims: []int{}}}
	for _, n := range []int{0, 1} {
		if err := CheckFSDP(names, n, vars); err != nil {
			t.Errorf("%d devices: %v", n, err)
		}
	}
	want := "grpo: config sharding fsdp: /odd [3 2] does not split over num_devices 2 along its largest axis; " +
		"num_devices must divide every variable's largest axis (here 1), or use sharding data"
	if err := CheckFSDP(names, 2, vars); err == nil || err.Error() != want {
		t.Errorf("2 devices: %v\nwant %s", err, want)
	}
	if err := CheckFSDP(names, 2, vars[:1]); err != nil {
		t.Errorf("2 devices, [64 64] alone: %v", err)
	}
}

// TestFSDPSpecOfAScalarIsWhole: under fsdp a scalar (the optimizer's step
// count) is the mesh's replicated spec, whole on every device, and no
// batch split; a tensor of rank 1 or more is split, not replicated.
func TestFSDPSpecOfAScalarIsWhole(t *testing.T) {
	m, err := NewMesh(OneReplica(2))
	if err != nil {
		t.Fatal(err)
	}
	spec, err := m.FSDPSpec([]int{})
	if err != nil {
		t.Fatal(err)
	}
	if spec != m.Replicated() || !spec.IsReplicated() {
		t.Errorf("scalar: spec %v, want the replicated %v", spec, m.Replicated())
	}
	if spec, err := m.FSDPSpec([]int{8}); err != nil || spec.IsReplicated() {
		t.Errorf("[8]: spec %v (%v), want it split", spec, err)
	}
}

// TestNewMesh lays out 1, 2 and 4 devices, which needs no device: a mesh of
// that many, a batch's rows split over them, the replicated spec whole. More
// than one replica, or no device, is an error; a nil mesh is one device.
func TestNewMesh(t *testing.T) {
	for _, n := range []int{1, 2, 4} {
		m, err := NewMesh(OneReplica(n))
		if err != nil {
			t.Fatalf("%d devices: %v", n, err)
		}
		if m.Devices() != n || m.DeviceMesh().NumDevices() != n || m.Shape() != (Shape{1, n}) {
			t.Errorf("%d devices: devices %d, mesh of %d, shape %v", n, m.Devices(), m.DeviceMesh().NumDevices(), m.Shape())
		}
		rows := shapes.Make(dtypes.Int32, 8)
		if got := m.Batch().ShardShape(rows).Dimensions; !slices.Equal(got, []int{8 / n}) {
			t.Errorf("%d devices: 8 rows in shards of %v, want [%d]", n, got, 8/n)
		}
		if got := m.Replicated().ShardShape(rows).Dimensions; !slices.Equal(got, []int{8}) {
			t.Errorf("%d devices: replicated shards of %v, want [8]", n, got)
		}
	}
	for _, s := range []Shape{{2, 4}, {0, 4}, {1, 0}} {
		if _, err := NewMesh(s); err == nil {
			t.Errorf("%v: no error", s)
		}
	}
	if _, err := NewMesh(Shape{2, 4}); err == nil || !strings.Contains(err.Error(), "2 replicas, but only 1 runs") {
		t.Errorf("2 replicas: %v", err)
	}
	var none *Mesh
	if none.Devices() != 1 || none.Shape() != OneReplica(1) || none.DeviceMesh() != nil || none.Batch() != nil || none.Replicated() != nil {
		t.Errorf("nil mesh: %d devices, shape %v", none.Devices(), none.Shape())
	}
}

// TestPaddedRows: rows round up to a multiple of the devices (0 or 1 of
// them: as they are).
func TestPaddedRows(t *testing.T) {
	for _, tc := range []struct{ rows, devices, padded, each int }{
		{3, 0, 3, 3}, {3, 1, 3, 3}, {3, 2, 4, 2}, {3, 4, 4, 1}, {4, 4, 4, 1}, {5, 4, 8, 2}, {0, 4, 0, 0}, {8, 3, 9, 3},
	} {
		if got := PaddedRows(tc.rows, tc.devices); got != tc.padded {
			t.Errorf("PaddedRows(%d, %d) = %d, want %d", tc.rows, tc.devices, got, tc.padded)
		}
		if got := RowsPerDevice(tc.rows, tc.devices); got != tc.each {
			t.Errorf("RowsPerDevice(%d, %d) = %d, want %d", tc.rows, tc.devices, got, tc.each)
		}
	}
}

// TestPadRows: 3 rows on 4 devices get one padding row, on 2 one, on 5 two,
// on a copy (the caller's slice, though it has room, untouched); rows that
// split are returned as they are without calling pad.
func TestPadRows(t *testing.T) {
	rows := make([]int, 3, 8)
	copy(rows, []int{1, 2, 3})
	for _, tc := range []struct {
		devices int
		want    []int
	}{{1, []int{1, 2, 3}}, {3, []int{1, 2, 3}}, {2, []int{1, 2, 3, -1}}, {4, []int{1, 2, 3, -1}}, {5, []int{1, 2, 3, -1, -1}}} {
		calls := 0
		got := PadRows(rows, tc.devices, func() int { calls++; return -1 })
		if !slices.Equal(got, tc.want) {
			t.Errorf("%d devices: %v, want %v", tc.devices, got, tc.want)
		}
		if wantCalls := min(len(tc.want)-len(rows), 1); calls != wantCalls {
			t.Errorf("%d devices: pad called %d times, want %d", tc.devices, calls, wantCalls)
		}
	}
	if full := rows[:4]; full[3] != 0 {
		t.Errorf("padding wrote into the caller's slice: %v", full)
	}
	if got := PadRows([]int(nil), 4, func() int { t.Error("pad called for no rows"); return 0 }); len(got) != 0 {
		t.Errorf("no rows: %v", got)
	}
}

// TestChecks: each check passes what runs and refuses what does not with one
// error naming the knobs as names says.
func TestChecks(t *testing.T) {
	const on, fix = "on backend cpu", "backend xla-cpu or cuda"
	for _, tc := range []struct {
		name string
		err  error
		want string // "": no error
	}{
		{"modes", CheckMode(names, Replicate), ""},
		{"data", CheckMode(names, Data), ""},
		{"unknown mode", CheckMode(names, "zero"), `grpo: config sharding: "zero" is not replicate, data or fsdp`},
		{"data spreads", CheckSpread(names, Data, 4), ""},
		{"fsdp spreads", CheckSpread(names, FSDP, 4), ""},
		{"replicate on one", CheckSpread(names, Replicate, 1), ""},
		{"replicate on two", CheckSpread(names, Replicate, 2),
			`grpo: config sharding: "replicate" runs on one device, but num_devices is 2; set sharding data or fsdp, or num_devices 1`},
		{"no mode on two", CheckSpread(names, "", 2), `grpo: config sharding: "" runs on one device`},
		{"have enough", CheckHave(names, 8, 8, "the cuda backend"), ""},
		{"have too few", CheckHave(names, 8, 2, "the cuda backend"),
			"grpo: config num_devices: 8, but the cuda backend has 2 device(s); set num_devices at most 2"},
		{"one device of one", CheckOneDevice(names, 1, on, fix), ""},
		{"two of one", CheckOneDevice(names, 2, on, fix),
			"grpo: config num_devices: 2 on backend cpu, which has one device; use backend xla-cpu or cuda, or num_devices 1"},
		{"data on one device", CheckShardsHeld(names, Data, on, fix), ""},
		{"fsdp on one device", CheckShardsHeld(names, FSDP, on, fix),
			`grpo: config sharding: "fsdp" on backend cpu, whose one device cannot hold shards; use backend xla-cpu or cuda, or sharding replicate`},
		{"rows split", CheckRows(names, "sft_batch_size", 8, "traces", 4), ""},
		{"rows on one device", CheckRows(names, "sft_batch_size", 7, "traces", 1), ""},
		{"rows do not split", CheckRows(names, "sft_batch_size", 6, "traces", 4),
			"grpo: config sft_batch_size: 6 traces do not split over num_devices 4; want a multiple of 4"},
		{"rows do not split over two", CheckRows(names, "sft_batch_size", 3, "traces", 2),
			"grpo: config sft_batch_size: 3 traces do not split over num_devices 2; want a multiple of 2"},
		{"micro-batch", CheckMicroBatch(names, "micro_batch_size", 2, false, 4),
			"grpo: config micro_batch_size: 2 rows per micro-batch do not split over num_devices 4; want a multiple of 4"},
		{"packed micro-batch", CheckMicroBatch(names, "micro_batch_size", 2, true, 4), ""},
	} {
		switch {
		case tc.want == "" && tc.err != nil:
			t.Errorf("%s: %v", tc.name, tc.err)
		case tc.want != "" && (tc.err == nil || !strings.HasPrefix(tc.err.Error(), tc.want)):
			t.Errorf("%s: %v\nwant %s", tc.name, tc.err, tc.want)
		}
	}
}

// TestModes lists the modes, and which spread over devices.
func TestModes(t *testing.T) {
	if got := Modes(); !slices.Equal(got, []string{"replicate", "data", "fsdp"}) {
		t.Errorf("Modes() = %v", got)
	}
	for mode, want := range map[string]bool{Replicate: false, Data: true, FSDP: true, "": false, "zero": false} {
		if Spreads(mode) != want {
			t.Errorf("Spreads(%q) = %v, want %v", mode, !want, want)
		}
	}
}

// TestPadLength: lengths round up to a multiple of 32 up to 256, of 128
// past it, and a padded length pads to itself.
func TestPadLength(t *testing.T) {
	for _, tc := range [][2]int{{1, 32}, {32, 32}, {33, 64}, {256, 256}, {257, 384}, {384, 384}, {385, 512}, {4096 + 1024, 5120}} {
		if got := PadLength(tc[0]); got != tc[1] || PadLength(got) != got {
			t.Errorf("PadLength(%d) = %d, want %d (and a fixed point)", tc[0], got, tc[1])
		}
	}
}
