package grpo

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/shapes"
	. "github.com/gomlx/gomlx/core/graph" //nolint:staticcheck
	"github.com/gomlx/gomlx/core/tensors"
	mlmodel "github.com/gomlx/gomlx/ml/model"

	"github.com/mathrl/mathrl/gomlx_trainer/precision"
	"github.com/mathrl/mathrl/gomlx_trainer/qwen3"
)

// Two variables (or two seeds) at one step must not share their draws.
func TestDrawsDependOnTheVariable(t *testing.T) {
	const n = 4096
	draw := func(seed uint32, index int) []uint32 {
		return MustExecOnce(testBackend(t), func(s *Node) *Node {
			return drawBits(shapes.Make(dtypes.Float32, n), s, seed, Scalar(s.Graph(), dtypes.Uint32, index))
		}, uint32(5)).Value().([]uint32)
	}
	same := func(a, b []uint32) (k int) {
		for i := range a {
			if a[i]&0xFFFF == b[i]&0xFFFF {
				k++
			}
		}
		return k
	}
	base := draw(11, 0)
	if k := same(base, draw(11, 1)); k > n/100 {
		t.Errorf("variables 0 and 1 share %d of %d draws", k, n)
	}
	if k := same(base, draw(12, 0)); k > n/100 {
		t.Errorf("seeds 11 and 12 share %d of %d draws", k, n)
	}
}

// Optimizer_cpu_offload on several devices is refused by the recipe check.
func TestOffloadNeedsOneDeviceInValidate(t *testing.T) {
	cfg := demoRecipe(t)
	cfg.OptimizerCPUOffload, cfg.NumDevices = true, 2
	if err := cfg.ValidateOptimizerState(); err == nil || !strings.Contains(err.Error(), "config optimizer_cpu_offload:") {
		t.Errorf("ValidateOptimizerState() = %v, want an error naming optimizer_cpu_offload", err)
	}
}

// A trainer_state.json older than the precision keys reads with their defaults.
func TestOldTrainStateKeepsNewDefaults(t *testing.T) {
	data, _ := json.Marshal(TrainState{Version: CheckpointVersion, Step: 3, Config: Default()})
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range OptimizerStateKeys {
		delete(m["config"].(map[string]any), k)
	}
	data, _ = json.Marshal(m)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, stateFile), data, 0o644); err != nil {
		t.Fatal(err)
	}
	st, err := readTrainState(dir)
	if err != nil {
		t.Fatal(err)
	}
	c := st.Config
	if st.Step != 3 || c.OptimizerOffloadFraction != 1 || c.MainParamsDType != "float32" || !c.StoreParamRemainders ||
		c.ExpAvgSqDType != "float32" || !c.OffloadTrain {
		t.Errorf("step %d, fraction %g, main_params_dtype %q, remainders %v, exp_avg_sq_dtype %q, offload_train %v; want 3 and the defaults",
			st.Step, c.OptimizerOffloadFraction, c.MainParamsDType, c.StoreParamRemainders, c.ExpAvgSqDType, c.OffloadTrain)
	}
	if err := c.ValidateOptimizerState(); err != nil {
		t.Errorf("old trainer state's precision keys: %v", err)
	}
}

// Exp_avg_dtype governs the first moment alone, exp_avg_sq_dtype the second.
func TestMomentsKeepTheirDTypes(t *testing.T) {
	start, _ := startingModels(t, 4)
	for _, prec := range []precision.Optimizer{{ExpAvgDType: dtypes.BFloat16}, {ExpAvgSqDType: dtypes.BFloat16}} {
		l := bf16Learner(t, start, AdamWConfig{Beta1: 0.9, Beta2: 0.98, Eps: 1e-8, ClipNorm: 1, Precision: prec})
		trainSteps(t, l, 0, 1)
		for _, v := range l.vars {
			m, s := l.Model.Store.GetVariable(AdamScope+v.Path()+"_m"), l.Model.Store.GetVariable(AdamScope+v.Path()+"_v")
			if m.DType() != orFloat32(prec.ExpAvgDType) || s.DType() != orFloat32(prec.ExpAvgSqDType) {
				t.Fatalf("%+v: moments of %s are %s and %s", prec, v.Path(), m.DType(), s.DType())
			}
		}
	}
}

// Float32 state read into a store holding that variable in bfloat16 stays bfloat16.
func TestReadOptimizerIntoExistingDType(t *testing.T) {
	const name = AdamScope + "/w_m"
	src := mlmodel.NewStore()
	src.VariableWithValue(name, tensors.FromFlatDataAndDimensions([]float32{0.5, -1.25, 3}, 3)).SetTrainable(false)
	path := filepath.Join(t.TempDir(), optimizerFile)
	if err := writeOptimizer(path, optimizerVars(src)); err != nil {
		t.Fatal(err)
	}
	dst := mlmodel.NewStore()
	state(dst, name, shapes.Make(dtypes.BFloat16, 3))
	if err := readOptimizer(path, dst); err != nil {
		t.Fatalf("readOptimizer: %v", err)
	}
	v := dst.GetVariable(name)
	tt, err := v.Value()
	if err != nil {
		t.Fatal(err)
	}
	vals, _ := qwen3.Float32s(tt)
	if v.DType() != dtypes.BFloat16 || len(vals) != 3 || vals[0] != 0.5 || vals[1] != -1.25 || vals[2] != 3 {
		t.Errorf("read %s %v, want bfloat16 [0.5 -1.25 3]", v.DType(), vals)
	}
}
