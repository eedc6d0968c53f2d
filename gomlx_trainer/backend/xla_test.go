package backend_test

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gomlx/gomlx/core/graph"

	"github.com/mathrl/mathrl/gomlx_trainer/backend"
	"github.com/mathrl/mathrl/gomlx_trainer/backend/backendtest"
)

// TestXLACPUPluginRuns loads the plugin scripts/setup.sh installs, runs a graph
// on it, and checks what `mathrl doctor` says of it.
func TestXLACPUPluginRuns(t *testing.T) {
	plugin := backendtest.XLACPUPlugin(t)
	b, plan, err := backend.New(backend.Options{Kind: backend.XLACPU, PJRTPlugin: plugin})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Finalize()
	if plan.Kind != backend.XLACPU || b.String() != "xla" || b.NumDevices() < 1 {
		t.Fatalf("plan %+v, backend %q with %d devices", plan, b.String(), b.NumDevices())
	}
	got := graph.MustExecOnce(b, func(x *graph.Node) *graph.Node {
		return graph.Add(graph.MatMul(x, x), graph.OnePlus(x))
	}, [][]float32{{1, 2}, {3, 4}}).Value().([][]float32)
	if want := [][]float32{{9, 13}, {19, 27}}; got[0][0] != want[0][0] || got[0][1] != want[0][1] ||
		got[1][0] != want[1][0] || got[1][1] != want[1][1] {
		t.Errorf("x·x + x + 1 = %v, want %v", got, want)
	}

	// What a run records names the plugin's file, not the machine's folders.
	if d := backend.Describe(b); strings.Contains(d, filepath.Dir(plugin)) || !strings.Contains(d, filepath.Base(plugin)) {
		t.Errorf("Describe: %q", d)
	}

	t.Setenv("MATHRL_PJRT_CPU_PLUGIN", plugin)
	var buf bytes.Buffer
	if err := backend.Report(&buf); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"XLA CPU plugin (--backend xla-cpu): " + plugin, "PJRT C API 0.115", "device(s): ok"} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("doctor's report lacks %q:\n%s", want, buf.String())
		}
	}
}

// TestXLACPUDeviceCount opens XLA's CPU plugin with 2 and with 6 devices (its
// default is 4): the backend has as many as num_devices asks.
func TestXLACPUDeviceCount(t *testing.T) {
	plugin := backendtest.XLACPUPlugin(t)
	for _, n := range []int{2, 6} {
		b, _, err := backend.New(backend.Options{Kind: backend.XLACPU, PJRTPlugin: plugin, NumDevices: n})
		if err != nil {
			t.Fatal(err)
		}
		if got := b.NumDevices(); got != n {
			t.Errorf("num_devices %d: the backend has %d devices", n, got)
		}
		b.Finalize()
	}
}
