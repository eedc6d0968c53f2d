package inprocess

import (
	"context"
	"os"
	"testing"

	"github.com/gomlx/compute"
	"github.com/gomlx/compute/dtypes"

	"github.com/mathrl/mathrl/gomlx_trainer/backend"
	"github.com/mathrl/mathrl/gomlx_trainer/backend/backendtest"
	"github.com/mathrl/mathrl/gomlx_trainer/engine"
	"github.com/mathrl/mathrl/gomlx_trainer/layout"
	"github.com/mathrl/mathrl/gomlx_trainer/qwen3"
)

// TestSamplesOnTheLearnersMesh: given the learner's mesh (Local.Mesh) of 2
// devices, the engine's sessions split their batch over both, a row each;
// without a mesh they run on one device. Two devices need XLA's CPU plugin:
// it skips unless MATHRL_TEST_BACKEND is xla-cpu.
func TestSamplesOnTheLearnersMesh(t *testing.T) {
	if k := backendtest.Kind(); k != backend.XLACPU {
		t.Skipf("several devices need XLA: %s=%s, not %s", backendtest.KindEnv, k, backend.XLACPU)
	}
	plugin := backendtest.XLACPUPlugin(t)
	// backend.New sets the GoMLX environment for the process; restore it after the test.
	t.Setenv(compute.ConfigEnvVar, os.Getenv(compute.ConfigEnvVar))
	t.Setenv("GOMLX_NO_AUTO_INSTALL", os.Getenv("GOMLX_NO_AUTO_INSTALL"))
	b, _, err := backend.New(backend.Options{Kind: backend.XLACPU, PJRTPlugin: plugin, NumDevices: 2})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Finalize)
	cfg, err := qwen3.NamedConfig("tiny")
	if err != nil {
		t.Fatal(err)
	}
	model, err := qwen3.NewRandom(cfg, dtypes.Float32, 1)
	if err != nil {
		t.Fatal(err)
	}
	mesh, err := layout.NewMesh(layout.OneReplica(2))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		mesh    *layout.Mesh
		devices int
	}{{nil, 1}, {mesh, 2}} {
		eng, err := engine.New(engine.Config{Name: Name}, engine.Policy{Vocab: cfg.VocabSize, Local: Local{Backend: b, Model: model, Mesh: tc.mesh}})
		if err != nil {
			t.Fatal(err)
		}
		sess, err := eng.Start(context.Background(), [][]int{{1, 2, 3}, {4, 5}}, engine.Options{MaxNewTokens: 2, Temperature: 1, Seed: 3})
		if err != nil {
			t.Fatalf("%d devices: %v", tc.devices, err)
		}
		ss := sess.(*samplerSession).ss
		if ss.Devices() != tc.devices || ss.RowsPerDevice() != 2/tc.devices {
			t.Errorf("mesh of %d devices: the session runs on %d devices, %d rows each; want %d and %d",
				tc.mesh.Devices(), ss.Devices(), ss.RowsPerDevice(), tc.devices, 2/tc.devices)
		}
		sess.Close()
	}
}
