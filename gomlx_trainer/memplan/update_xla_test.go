package memplan_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gomlx/compute/dtypes"
	. "github.com/gomlx/gomlx/core/graph" //nolint:staticcheck
	mlmodel "github.com/gomlx/gomlx/ml/model"

	"github.com/mathrl/mathrl/gomlx_trainer/backend"
	"github.com/mathrl/mathrl/gomlx_trainer/backend/backendtest"
	"github.com/mathrl/mathrl/gomlx_trainer/grpo"
	"github.com/mathrl/mathrl/gomlx_trainer/layout"
	"github.com/mathrl/mathrl/gomlx_trainer/memplan"
	"github.com/mathrl/mathrl/gomlx_trainer/qwen3"
)

// updateEnv, set in a child test process, makes TestOptimizerStepPeakOnXLA
// run the measured steps (measureUpdate) instead of the comparison.
const updateEnv = "MATHRL_MEMPLAN_UPDATE"

// TestOptimizerStepPeakOnXLA takes two optimizer steps of layerHeavy on one
// XLA CPU device, its update weight by weight, and compares the update's
// peak with the plan's (the resident state plus OptimizerUpdate) within
// tolerance. The measured peak is the bytes of the store's variables with
// the accumulators (as the step starts) plus the largest temporaries and
// outputs of a program of the update (the clip graph and the update of each
// weight), from XLA's buffer assignment (--xla_dump_to). It logs, beside it,
// the same for the update as one graph of every weight (ApplyAdamW, which
// several devices run), built over the same store.
func TestOptimizerStepPeakOnXLA(t *testing.T) {
	if dir := os.Getenv(updateEnv); dir != "" {
		measureUpdate(t, dir)
		return
	}
	if testing.Short() {
		t.Skip("compiles and runs training steps on XLA's CPU")
	}
	if k := backendtest.Kind(); k != backend.XLACPU {
		t.Skipf("the measurement reads XLA's buffer assignment: %s=%s, not %s", backendtest.KindEnv, k, backend.XLACPU)
	}
	backendtest.XLACPUPlugin(t)
	dir := t.TempDir()
	m := runChild(t, "TestOptimizerStepPeakOnXLA", dir, updateEnv+"="+dir)
	grouped := programsFresh(t, filepath.Join(dir, "dump"), "AdamW_", "GradientClip")
	whole := programsFresh(t, filepath.Join(dir, "dump"), "WholeGraphUpdate")
	cfg := layerHeavy.config()
	step := memplan.Step{DType: dtypes.Float32, Rows: shardedRows, SeqLen: layout.PadLength(shardedPrompt + shardedResponse)}
	plan := residentOf(memplan.TrainStep(cfg, step, memplan.XLA)) + memplan.OptimizerUpdate(cfg, step, memplan.XLA)
	got := m.Resident + grouped
	t.Logf("resident %.1f MB; update weight by weight: fresh %.1f MB, peak %.1f MB, plan %.1f MB (ratio %.3f); as one graph: fresh %.1f MB, peak %.1f MB",
		float64(m.Resident)/1e6, float64(grouped)/1e6, float64(got)/1e6, float64(plan)/1e6, float64(got)/float64(plan),
		float64(whole)/1e6, float64(m.Resident+whole)/1e6)
	if r := float64(got) / float64(plan); r < 0.9 || r > 1.1 {
		t.Errorf("the update's peak %d bytes, plan %d: off by more than 10%%", got, plan)
	}
	if whole <= grouped {
		t.Errorf("the one graph's fresh state %d bytes is not above the grouped update's %d", whole, grouped)
	}
}

// programsFresh is the largest sum of the temporaries and outputs of a
// program in XLA's dump dir whose file name holds one of names.
func programsFresh(t *testing.T, dir string, names ...string) int64 {
	files, err := filepath.Glob(filepath.Join(dir, "*cpu_after_optimizations-buffer-assignment.txt"))
	if err != nil {
		t.Fatal(err)
	}
	var most int64
	for _, f := range files {
		for _, name := range names {
			if strings.Contains(filepath.Base(f), name) {
				tmp, out := allocations(t, f)
				most = max(most, tmp+out)
			}
		}
	}
	if most == 0 {
		t.Fatalf("no program named %v in %s", names, dir)
	}
	return most
}

// measureUpdate runs, in the child process, two optimizer steps of
// layerHeavy on one device, makes the accumulators again (as a step has them
// when its update starts) and writes the bytes of the store's variables to
// dir/resident.json; then it runs the update once as one graph.
func measureUpdate(t *testing.T, dir string) {
	b, _, err := backend.New(backend.Options{Kind: backend.XLACPU, PJRTPlugin: backendtest.XLACPUPlugin(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Finalize()
	cfg := layerHeavy.config()
	model, err := qwen3.NewRandom(cfg, dtypes.Float32, 1)
	if err != nil {
		t.Fatal(err)
	}
	adam := grpo.AdamWConfig{Beta1: 0.9, Beta2: 0.98, Eps: 1e-8, ClipNorm: 1}
	l := grpo.NewLearner(b, model, grpo.LossConfig{EpsLow: 0.2, EpsHigh: 0.28}, adam, 1)
	seqs := sequences(rand.New(rand.NewPCG(1, 2)), shardedRows, shardedPrompt, shardedResponse, cfg.VocabSize)
	for range 2 {
		if _, _, err := l.Step(seqs, grpo.StepOptions{MicroBatch: shardedRows, PerTokenLoss: true, LR: 1e-6}); err != nil {
			t.Fatal(err)
		}
	}
	store := model.Store
	if err := store.InitializeVariables(b, nil); err != nil {
		t.Fatal(err)
	}
	var m measured
	for v := range store.IterVariables() {
		m.Resident += int64(v.Shape().Memory())
	}
	writeMeasured(t, dir, m)
	vars := grpo.TrainableVariables(store)
	whole := mlmodel.MustNewExec(b, store, func(scope *mlmodel.Scope, lr *Node) *Node {
		return grpo.ApplyAdamW(scope.Store(), vars, grpo.AccumulatedGradients(scope.Store(), vars, lr.Graph(), false), lr, adam)
	}).WithName("WholeGraphUpdate")
	if _, err := whole.Call(float32(1e-6)); err != nil {
		t.Fatal(err)
	}
	fmt.Println("measured")
}
