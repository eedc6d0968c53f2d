package grpo

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/gomlx/compute/dtypes"
	. "github.com/gomlx/gomlx/core/graph" //nolint:staticcheck // graph-building code reads better unqualified
	"github.com/gomlx/gomlx/core/tensors"
	mlmodel "github.com/gomlx/gomlx/ml/model"

	"github.com/mathrl/mathrl/gomlx_trainer/memplan"
	"github.com/mathrl/mathrl/gomlx_trainer/qwen3"
)

// TestFlowRLHeadAgainstReference compares FlowRLHeadLogZ with the authors'
// ProjZModule run in torch float64 by testdata/flowrl_head_reference.py (3
// blocks on hidden size 8, random weights, LayerNorms included; the prompt's
// mean taken as their dp_actor slices it, from verl's left-padded layout,
// while the graph gets mathrl's right-padded rows with padding of 100 that
// the mean must not see).
func TestFlowRLHeadAgainstReference(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("testdata", "flowrl_head_reference.json"))
	if err != nil {
		t.Fatal(err)
	}
	var ref struct {
		HiddenSize int                  `json:"hidden_size"`
		Layers     int                  `json:"layers"`
		PromptLens []float32            `json:"prompt_lens"`
		Weights    map[string][]float32 `json:"weights"`
		Hidden     [][][]float32        `json:"hidden"`
		LogZ       []float64            `json:"log_z"`
	}
	if err := json.Unmarshal(raw, &ref); err != nil {
		t.Fatal(err)
	}
	store := mlmodel.NewStore()
	if err := InitFlowRLHead(store, ref.HiddenSize, ref.Layers, 1); err != nil {
		t.Fatal(err)
	}
	if got, want := len(flowHeadVars(store)), len(ref.Weights); got != want {
		t.Fatalf("the head has %d variables, ProjZModule %d", got, want)
	}
	for _, spec := range flowHeadTensors(ref.HiddenSize, ref.Layers) {
		w, ok := ref.Weights[spec.name]
		if !ok {
			t.Fatalf("ProjZModule has no %s", spec.name)
		}
		if err := store.GetVariable(flowHeadPath(spec.name)).SetValue(tensors.FromFlatDataAndDimensions(w, spec.dims...)); err != nil {
			t.Fatal(err)
		}
	}
	exec := mlmodel.MustNewExec(testBackend(t), store, func(scope *mlmodel.Scope, h, lens *Node) *Node {
		return FlowRLHeadLogZ(scope, h, lens, ref.Layers)
	})
	out, err := exec.Call(ref.Hidden, ref.PromptLens)
	if err != nil {
		t.Fatal(err)
	}
	got, err := qwen3.Float32s(out[0])
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range ref.LogZ {
		if !near(float64(got[i]), want, 1e-5) {
			t.Errorf("row %d (prompt of %v tokens): log Z %v, ProjZModule %v", i, ref.PromptLens[i], got[i], want)
		}
	}
}

// headWeights reads the head's variables out of a store, by path.
func headWeights(t *testing.T, store *mlmodel.Store) map[string][]float32 {
	t.Helper()
	out := map[string][]float32{}
	for _, v := range flowHeadVars(store) {
		vals, err := qwen3.Float32s(v.MustValue())
		if err != nil {
			t.Fatal(err)
		}
		out[v.Path()] = vals
	}
	return out
}

// headConfig is smokeConfig with FlowRL's learned log Z head, no warm start
// and no evaluation.
func headConfig(t *testing.T) Config {
	cfg := smokeConfig(t)
	cfg.AdvantageEstimator, cfg.FlowRLLogZ = "flowrl", "head"
	cfg.SFTSteps, cfg.EvalPromptData, cfg.EvalInterval = 0, "", 0
	return cfg
}

// TestTrainFlowRLHead trains the tiny model, in float32 and in bfloat16 (the
// head float32 in both), two warm-start steps, then two optimizer steps on
// one rollout with flowrl_log_z head, under TestTrainFlowRL's reward (one
// correct sample per group): the losses and gradient norms must be finite
// and not 0, the head's weights (read back from the last checkpoint) and the
// policy's must move, and the head must stay out of model.safetensors.
func TestTrainFlowRLHead(t *testing.T) {
	if testing.Short() {
		t.Skip("trains a tiny model")
	}
	for _, dtype := range []string{"float32", "bfloat16"} {
		t.Run(dtype, func(t *testing.T) { trainFlowRLHead(t, dtype) })
	}
}

func trainFlowRLHead(t *testing.T, dtype string) {
	cfg := headConfig(t)
	cfg.DType = dtype
	cfg.NumRollout, cfg.SaveInterval = 1, 0
	cfg.SFTSteps = 2 // a warm start first: its graph leaves the head out (a zero gradient)
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	steps := trainFirstOfGroup(t, cfg)
	for _, m := range steps {
		t.Logf("step %d: loss %.4g, grad norm %.4g, ratio mean %.6g", m.Step, m.Loss, m.GradNorm, m.Extra["ratio_mean"])
		if math.IsNaN(m.Loss+m.GradNorm) || math.IsInf(m.Loss+m.GradNorm, 0) || m.Loss <= 0 || m.GradNorm <= 0 {
			t.Errorf("step %d: loss %v, grad norm %v", m.Step, m.Loss, m.GradNorm)
		}
		if _, ok := m.Extra["flowrl_log_z_mean"]; ok {
			t.Errorf("step %d logs flowrl_log_z_mean, which only vargrad computes", m.Step)
		}
	}
	initial, err := newPolicy(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := InitFlowRLHead(initial.Store, initial.Config.Hidden, cfg.FlowRLHeadLayers, uint64(cfg.Seed)); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(RunFolder(cfg.Save).CkptDir(), CheckpointName(len(steps)))
	final, _, err := LoadCheckpoint(dir, dtypes.Float32)
	if err != nil {
		t.Fatal(err)
	}
	h0, h1 := headWeights(t, initial.Store), headWeights(t, final.Store)
	if len(h1) != len(flowHeadTensors(1, cfg.FlowRLHeadLayers)) {
		t.Fatalf("the checkpoint holds %d head variables, want %d", len(h1), len(flowHeadTensors(1, cfg.FlowRLHeadLayers)))
	}
	for path, w := range h1 {
		if maxDiff(map[string][]float32{path: w}, map[string][]float32{path: h0[path]}) == 0 {
			t.Errorf("head variable %s did not move", path)
		}
	}
	if moved := maxDiff(weightsOf(t, final), weightsOf(t, initial)); moved == 0 {
		t.Error("the policy's weights did not move")
	}
	ck, err := qwen3.OpenSafetensors(filepath.Join(dir, "model.safetensors"))
	if err != nil {
		t.Fatal(err)
	}
	defer ck.Close()
	if i := slices.IndexFunc(ck.Names(), func(n string) bool { return strings.Contains(n, "net.") || strings.Contains(n, "flowrl") }); i >= 0 {
		t.Errorf("model.safetensors holds %q: the head must stay out of the Hugging Face export", ck.Names()[i])
	}
}

// TestFlowRLHeadResumeIsExact is TestInterruptAndResumeIsExact with
// flowrl_log_z head over 2 rollouts: the resumed run must end with the
// policy's and the head's weights of the uninterrupted one bit for bit, and
// the same train.jsonl.
func TestFlowRLHeadResumeIsExact(t *testing.T) {
	if testing.Short() {
		t.Skip("trains a tiny model")
	}
	straight := headConfig(t)
	straight.NumRollout, straight.SaveInterval = 2, 0
	if err := straight.Validate(); err != nil {
		t.Fatal(err)
	}
	a, b := interruptAndResume(t, straight)
	ma, _, err := LoadCheckpoint(a, dtypes.Float32)
	if err != nil {
		t.Fatal(err)
	}
	mb, _, err := LoadCheckpoint(b, dtypes.Float32)
	if err != nil {
		t.Fatal(err)
	}
	ha, hb := headWeights(t, ma.Store), headWeights(t, mb.Store)
	if len(ha) == 0 {
		t.Fatal("the checkpoint holds no head")
	}
	for name, w := range map[string]map[string][]float32{"policy": weightsOf(t, ma), "head": ha} {
		other := weightsOf(t, mb)
		if name == "head" {
			other = hb
		}
		if d := maxDiff(w, other); d != 0 || len(w) != len(other) {
			t.Errorf("%s: resumed and uninterrupted weights differ by up to %g (%d and %d tensors)", name, d, len(other), len(w))
		}
	}
}

// interruptAndResume trains straight (validated, of several rollouts)
// uninterrupted, and again cancelled after its first rollout and resumed,
// checks that both wrote the same train.jsonl, and returns the newest
// checkpoint folders of the uninterrupted and the resumed run.
func interruptAndResume(t *testing.T, straight Config) (uninterrupted, resumed string) {
	t.Helper()
	backend := testBackend(t)
	var log testLog
	if err := Train(context.Background(), straight, TrainOptions{Backend: backend, Tools: arithTools{}, Progress: &log}); err != nil {
		t.Fatalf("%v\n%s", err, log)
	}
	broken := straight
	broken.Save = filepath.Join(t.TempDir(), "broken")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	err := Train(ctx, broken, TrainOptions{Backend: backend, Tools: arithTools{}, Progress: &log, OnRollout: func(RolloutLog) { cancel() }})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("interrupted run returned %v, want context.Canceled\n%s", err, log)
	}
	if err := Train(context.Background(), broken, TrainOptions{Backend: backend, Tools: arithTools{}, Resume: true, Progress: &log}); err != nil {
		t.Fatalf("resume: %v\n%s", err, log)
	}
	sa, _ := RunFolder(straight.Save).ReadSteps(1 << 30)
	sb, _ := RunFolder(broken.Save).ReadSteps(1 << 30)
	if len(sa) != len(sb) || len(sa) != straight.NumRollout*straight.StepsPerRollout() {
		t.Fatalf("train.jsonl: %d and %d lines", len(sa), len(sb))
	}
	for i := range sa {
		if a, b := withoutTimes(sa[i]), withoutTimes(sb[i]); !reflect.DeepEqual(a, b) {
			t.Errorf("step %d: straight %+v, resumed %+v", i+1, a, b)
		}
	}
	uninterrupted, _ = LatestCheckpoint(RunFolder(straight.Save).CkptDir())
	resumed, _ = LatestCheckpoint(RunFolder(broken.Save).CkptDir())
	return uninterrupted, resumed
}

// TestMemoryPlanCountsFlowRLHead: with flowrl_log_z head the plan's
// resident memory holds the head (FlowRLHeadParams parameters, which must be
// what InitFlowRLHead creates, each with its weight, accumulator and two
// moments in float32), and without it none.
func TestMemoryPlanCountsFlowRLHead(t *testing.T) {
	shape, err := qwen3.NamedConfig("tiny")
	if err != nil {
		t.Fatal(err)
	}
	store := mlmodel.NewStore()
	if err := InitFlowRLHead(store, shape.Hidden, 3, 1); err != nil {
		t.Fatal(err)
	}
	var params int64
	for _, v := range flowHeadVars(store) {
		params += int64(v.Shape().Size())
	}
	if want := memplan.FlowRLHeadParams(shape.Hidden, 3); params != want {
		t.Fatalf("InitFlowRLHead made %d parameters, FlowRLHeadParams says %d", params, want)
	}
	for _, logZ := range []string{"vargrad", "head"} {
		cfg := Default()
		cfg.TinyModel, cfg.DType, cfg.PromptData, cfg.AdvantageEstimator, cfg.FlowRLLogZ = "tiny", "float32", "arith", "flowrl", logZ
		if err := cfg.Validate(); err != nil {
			t.Fatal(err)
		}
		rc, err := cfg.MemoryRecipe()
		if err != nil {
			t.Fatal(err)
		}
		want := int64(0)
		if logZ == "head" {
			want = params * 4 * 4 // float32 weight, accumulator, m and v (the default precision)
		}
		rep := memplan.Plan(shape, rc, 1<<40, memplan.CPU)
		if got := rep.Train.Term(memplan.TermFlowRLHead); got != want {
			t.Errorf("flowrl_log_z %s: the training step's head term is %d bytes, want %d", logZ, got, want)
		}
	}
}
