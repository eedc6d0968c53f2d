package backend_test

import (
	"fmt"
	"reflect"
	"slices"
	"testing"

	"github.com/gomlx/compute"
	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/shapes"
	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/ml/model"

	"github.com/mathrl/mathrl/gomlx_trainer/backend"
	"github.com/mathrl/mathrl/gomlx_trainer/backend/backendtest"
)

type probe struct{}

// TestCompilesCountsNewShapes runs executors on a watched backend: GoMLX
// compiles one graph per executor and input shape, so each new shape must
// add one graph and some time, and a shape already seen nothing. The
// watched backend must compute what the backend computes.
func TestCompilesCountsNewShapes(t *testing.T) {
	c, inner := backend.NewCompiles(), backendtest.New(t)
	b := c.Watch(inner)
	here := reflect.TypeFor[probe]().PkgPath()
	double := graph.MustNewExec(b, func(x *graph.Node) *graph.Node { return graph.MulScalar(x, 2) })
	for _, step := range []struct {
		in     []float32
		graphs int // graphs compiled so far
	}{
		{[]float32{1, 2}, 1},
		{[]float32{3, 4}, 1},
		{[]float32{1, 2, 3}, 2},
		{[]float32{5, 6}, 2},
	} {
		before := c.Total()
		got := double.MustExec(step.in)[0].Value().([]float32)
		for i, x := range step.in {
			if got[i] != 2*x {
				t.Fatalf("2 × %v = %v on the watched backend", step.in, got)
			}
		}
		now := c.Total()
		if d := now.Sub(before); now.Graphs != step.graphs || (d.Graphs > 0) != (d.Seconds > 0) || d.Seconds < 0 {
			t.Errorf("input %v: %d graphs so far (want %d), the call compiled %d in %g s", step.in, now.Graphs, step.graphs, d.Graphs, d.Seconds)
		}
	}

	// a model executor's graphs count too, for the package that ran it
	inc := model.MustNewExec(b, model.NewStore(), func(_ *model.Scope, x *graph.Node) *graph.Node { return graph.OnePlus(x) })
	if got := inc.MustExec([]float32{1})[0].Value().([]float32); got[0] != 2 {
		t.Errorf("1 + 1 = %v", got)
	}
	if got, total := c.By(here), c.Total(); got != total || got.Graphs != 3 {
		t.Errorf("by %s: %+v, total %+v, want 3 graphs each", here, got, total)
	}

	// a graph compiled under another package's call counts for that package
	// and for the callers, not for packages that are not on the stack
	slices.SortFunc([]float32{2, 1}, func(x, y float32) int {
		double.MustExec([]float32{x, y, x, y})
		return int(x - y)
	})
	if got := c.By("slices").Graphs; got != 1 {
		t.Errorf("by slices: %d graphs, want 1", got)
	}
	if got := c.By(here).Graphs; got != 4 {
		t.Errorf("by %s: %d graphs, want 4", here, got)
	}
	if got := c.By("strings"); got != (backend.CompileStats{}) {
		t.Errorf("by strings, which compiled nothing: %+v", got)
	}

	// of the 4 graphs, slices asked for 1: the rest are the other 3
	total := c.Total()
	by, rest := c.Split("slices")
	if by != c.By("slices") || rest.Graphs != 3 || rest.Seconds != total.Seconds-by.Seconds {
		t.Errorf("Split(slices) = %+v, %+v; want %+v and 3 graphs in %g s", by, rest, c.By("slices"), total.Seconds-by.Seconds)
	}
}

// TestWatchedBuffersAreItsOwn checks every buffer a watched backend hands
// out, made from data, shared, computed or copied to a device, for the
// backend it names as its own: the watched one. The copy is checked on a
// watched backend that copies its buffers to device 0 (copying).
func TestWatchedBuffersAreItsOwn(t *testing.T) {
	c, inner := backend.NewCompiles(), backendtest.New(t)
	shape := shapes.Make(dtypes.Float32, 2)
	check := func(how string, b compute.Backend, buf compute.Buffer, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", how, err)
		}
		if buf.Backend() != b {
			t.Errorf("%s: a buffer of %v, want the watched backend", how, buf.Backend())
		}
	}
	b := c.Watch(inner)
	buf, err := b.BufferFromFlatData(0, []float32{1, 2}, shape)
	check("from data", b, buf, err)
	if b.HasSharedBuffers() {
		shared, _, err := b.NewSharedBuffer(0, shape)
		check("shared", b, shared, err)
	}
	double := graph.MustNewExec(b, func(x *graph.Node) *graph.Node { return graph.MulScalar(x, 2) })
	out, err := double.Exec([]float32{1, 2})
	if err != nil {
		t.Fatal(err)
	}
	computed, err := out[0].Buffer(b, 0)
	check("computed", b, computed, err)

	cb := c.Watch(copying{inner})
	buf, err = cb.BufferFromFlatData(0, []float32{1, 2}, shape)
	check("from data (copying)", cb, buf, err)
	copied, err := buf.CopyToDevice(0)
	check("copied to device 0", cb, copied, err)
}

// copying is a backend whose buffers made from data copy to device 0, as a
// backend of several devices copies them (the pure Go backend copies to
// none); the copy is the buffer itself.
type copying struct{ compute.Backend }

func (c copying) BufferFromFlatData(deviceNum compute.DeviceNum, flat any, shape shapes.Shape) (compute.Buffer, error) {
	buf, err := c.Backend.BufferFromFlatData(deviceNum, flat, shape)
	return copyingBuffer{buf}, err
}

type copyingBuffer struct{ compute.Buffer }

func (b copyingBuffer) CopyToDevice(deviceNum compute.DeviceNum) (compute.Buffer, error) {
	if deviceNum != 0 {
		return nil, fmt.Errorf("no device %d", deviceNum)
	}
	return b, nil
}

// TestWatchedTensorsRoundTrip feeds an executor's outputs, donated and not,
// to others, on the backend that one Watch returned and on another Watch's
// of the same backend and count.
func TestWatchedTensorsRoundTrip(t *testing.T) {
	c, inner := backend.NewCompiles(), backendtest.New(t)
	b := c.Watch(inner)
	double := graph.MustNewExec(b, func(x *graph.Node) *graph.Node { return graph.MulScalar(x, 2) })
	again := graph.MustNewExec(c.Watch(inner), func(x *graph.Node) *graph.Node { return graph.AddScalar(x, 1) })
	x := double.MustExec([]float32{1, 2})[0]
	y := again.MustExec(x)[0]
	donated, err := graph.DonateTensorBuffer(y, b, 0)
	if err != nil {
		t.Fatal(err)
	}
	z := double.MustExec(donated)[0].Value().([]float32)
	if want := []float32{6, 10}; !slices.Equal(z, want) {
		t.Errorf("2 × (2 × [1 2] + 1) = %v, want %v", z, want)
	}
	if got := x.Value().([]float32); !slices.Equal(got, []float32{2, 4}) {
		t.Errorf("the first output, read back: %v", got)
	}
}
