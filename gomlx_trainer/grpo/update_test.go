package grpo

import (
	"bytes"
	"testing"

	"github.com/gomlx/compute/dtypes"

	"github.com/mathrl/mathrl/gomlx_trainer/backend"
	"github.com/mathrl/mathrl/gomlx_trainer/backend/backendtest"
	"github.com/mathrl/mathrl/gomlx_trainer/precision"
	"github.com/mathrl/mathrl/gomlx_trainer/qwen3"
)

// TestGroupedUpdateMatchesOneGraph takes four steps of the tiny model with
// the update weight by weight (Apply on one device, groupedUpdate) and with
// the one graph that several devices run (applyWhole), under every master
// mode, bfloat16 moments and accumulators, float32 weights and no clipping:
// on the Go backend the gradient norms and every variable of the store
// (weights, moments, master values, step) end equal bit for bit. XLA's
// one graph is not bit-stable itself: a weight's update there changes in its
// last bits with the other weights in the graph (its fusion of the step's
// scalars), while the grouped update equals the one graph of that weight
// alone; there the weights must agree to a bfloat16 rounding.
func TestGroupedUpdateMatchesOneGraph(t *testing.T) {
	bf16 := dtypes.BFloat16
	for _, tc := range []struct {
		name    string
		prec    precision.Optimizer
		float32 bool
		clip    float64
		onXLA   bool // also on XLA, where each case compiles for minutes and compares only to a bfloat16 rounding
	}{
		{name: "float32 master", prec: precision.Optimizer{}, clip: 1},
		{name: "remainder", prec: precision.Optimizer{Master: precision.MasterRemainder}, clip: 1, onXLA: true},
		{name: "stochastic", prec: precision.Optimizer{Master: precision.MasterStochastic, Seed: 5}, clip: 1},
		{name: "none", prec: precision.Optimizer{Master: precision.MasterNone}, clip: 1},
		{name: "bfloat16 moments", prec: precision.Optimizer{Master: precision.MasterRemainder, GradDType: bf16, ExpAvgDType: bf16, ExpAvgSqDType: bf16}, clip: 1},
		{name: "float32 weights, no clip", float32: true, onXLA: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if backendtest.Kind() == backend.XLACPU && !tc.onXLA {
				t.Skip("on XLA two cases stand for the rest: its one graph is not bit-stable, so it compares weights only")
			}
			adam := AdamWConfig{Beta1: 0.9, Beta2: 0.98, Eps: 1e-8, WeightDecay: 0.1, ClipNorm: tc.clip, Precision: tc.prec}
			start, f32 := startingModels(t, 5)
			if tc.float32 {
				start = f32
			}
			grouped, whole := bf16Learner(t, start, adam), bf16Learner(t, start, adam)
			got := trainStepsWith(t, grouped, 0, 4, grouped.Apply)
			want := trainStepsWith(t, whole, 0, 4, func(lr float64) (float64, error) {
				norm, err := whole.applyWhole(lr)
				if err != nil {
					return 0, err
				}
				return norm, whole.freeAccumulators()
			})
			for i := range want {
				if !near(got[i], want[i], 1e-5) || got[i] == 0 {
					t.Errorf("step %d: gradient norm %v, the one graph's %v", i, got[i], want[i])
				}
			}
			if backendtest.Kind() == backend.XLACPU {
				nearWeights(t, grouped.Model, whole.Model)
				return
			}
			sameState(t, grouped.Model, whole.Model)
			if n := len(grouped.grouped.execs); n == 0 || n > 1 {
				t.Errorf("%d update executables for one master mode, want 1", n)
			}
		})
	}
}

// nearWeights fails t unless the two models' weights agree to a bfloat16
// rounding of a weight updated in its last bits.
func nearWeights(t *testing.T, got, want *qwen3.Model) {
	t.Helper()
	w := weightsOf(t, want)
	for name, g := range weightsOf(t, got) {
		for i := range g {
			if !near(float64(g[i]), float64(w[name][i]), 1e-2) {
				t.Fatalf("%s[%d]: %v, the one graph's %v", name, i, g[i], w[name][i])
			}
		}
	}
}

// sameState fails t unless every variable of got's store with a value has a
// twin in want's with the same bytes.
func sameState(t *testing.T, got, want *qwen3.Model) {
	t.Helper()
	n := 0
	for v := range got.Store.IterVariables() {
		if !v.HasValue() {
			continue
		}
		w := want.Store.GetVariable(v.Path())
		if w == nil || !w.HasValue() {
			t.Fatalf("%s has no twin", v.Path())
		}
		if a, b := variableBytes(t, v.Path(), got), variableBytes(t, v.Path(), want); !bytes.Equal(a, b) {
			t.Errorf("%s differs from the one graph's", v.Path())
		}
		n++
	}
	if n == 0 {
		t.Fatal("no variable compared")
	}
}

// variableBytes is a copy of the bytes of the value of m's variable at path.
func variableBytes(t *testing.T, path string, m *qwen3.Model) []byte {
	t.Helper()
	v, err := m.Store.GetVariable(path).Value()
	if err != nil {
		t.Fatal(err)
	}
	var out []byte
	if err := v.ConstBytes(func(data []byte) { out = bytes.Clone(data) }); err != nil {
		t.Fatal(err)
	}
	return out
}
