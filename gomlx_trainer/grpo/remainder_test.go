package grpo

import (
	"context"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/gomlx/compute"
	"github.com/gomlx/compute/dtypes"
	. "github.com/gomlx/gomlx/core/graph" //nolint:staticcheck

	"github.com/mathrl/mathrl/gomlx_trainer/backend"
	"github.com/mathrl/mathrl/gomlx_trainer/precision"
)

// TestRemainderOpsAreExact runs, one graph each, every bit operation
// SplitRemainder and JoinRemainder are made of, on the test backend, and
// compares each with the host over random floats: a backend that rewrites
// one of them (XLA's simplifier, a GPU code generator) fails here by name,
// not only as a master that stops moving.
func TestRemainderOpsAreExact(t *testing.T) {
	xs := finiteFloats(4096)
	bits := make([]uint32, len(xs))
	for i, x := range xs {
		bits[i] = math.Float32bits(x)
	}
	low := make([]uint16, len(xs))
	for i, b := range bits {
		low[i] = uint16(b)
	}
	signed := make([]int16, len(xs))
	for i, l := range low {
		signed[i] = int16(l)
	}
	backend := testBackend(t)
	check := func(name string, got any, want func(i int) uint64) {
		t.Helper()
		bad, first := 0, -1
		for i := range xs {
			var g uint64
			switch v := got.(type) {
			case []uint32:
				g = uint64(v[i])
			case []uint16:
				g = uint64(v[i])
			case []int16:
				g = uint64(uint16(v[i]))
			case []int32:
				g = uint64(uint32(v[i]))
			case []float32:
				g = uint64(math.Float32bits(v[i]))
			default:
				t.Fatalf("%s: result of type %T", name, got)
			}
			if g != want(i) {
				bad++
				if first < 0 {
					first = i
				}
			}
		}
		if bad > 0 {
			t.Errorf("%s: %d of %d elements differ from the host's (first: element %d, input bits %#08x)", name, bad, len(xs), first, bits[first])
		}
	}
	check("Bitcast float32 -> uint32", MustExecOnce(backend, func(x *Node) *Node { return Bitcast(x, dtypes.Uint32) }, xs).Value(),
		func(i int) uint64 { return uint64(bits[i]) })
	check("BitwiseAnd 0xFFFF", MustExecOnce(backend, func(b *Node) *Node { return BitwiseAnd(b, Scalar(b.Graph(), dtypes.Uint32, 0xFFFF)) }, bits).Value(),
		func(i int) uint64 { return uint64(bits[i] & 0xFFFF) })
	check("ConvertDType uint32 -> uint16 (low bits)", MustExecOnce(backend, func(b *Node) *Node {
		return ConvertDType(BitwiseAnd(b, Scalar(b.Graph(), dtypes.Uint32, 0xFFFF)), dtypes.Uint16)
	}, bits).Value(), func(i int) uint64 { return uint64(low[i]) })
	check("Bitcast uint16 -> int16", MustExecOnce(backend, func(l *Node) *Node { return Bitcast(l, dtypes.Int16) }, low).Value(),
		func(i int) uint64 { return uint64(low[i]) })
	check("ConvertDType int16 -> int32", MustExecOnce(backend, func(s *Node) *Node { return ConvertDType(s, dtypes.Int32) }, signed).Value(),
		func(i int) uint64 { return uint64(uint32(int32(signed[i]))) })
	check("the remainder of float32 x in one graph", MustExecOnce(backend, func(x *Node) *Node { _, r := SplitRemainder(x); return r }, xs).Value(),
		func(i int) uint64 { _, r := remainderOf(xs[i]); return uint64(uint16(r)) })
	check("JoinRemainder(SplitRemainder(x)) in one graph", MustExecOnce(backend, func(x *Node) *Node { return JoinRemainder(SplitRemainder(x)) }, xs).Value(),
		func(i int) uint64 { return uint64(bits[i]) })
}

// TestRemainderIsTheFloat32Copy trains the same bfloat16 start with a float32
// copy as master and with the 16-bit remainder: both start from the weight
// itself and apply the same float32 updates, so after every step the joined
// master is the float32 copy bit for bit, and the weights are the same.
func TestRemainderIsTheFloat32Copy(t *testing.T) {
	const steps, lr = 3, 1e-6
	adam := AdamWConfig{Beta1: 0.9, Beta2: 0.999, Eps: 1e-8, ClipNorm: 1}
	backend := testBackend(t)
	start, _ := startingModels(t, 4)
	learner := func(p precision.Optimizer) *Learner {
		m, err := start.Copy()
		if err != nil {
			t.Fatal(err)
		}
		a := adam
		a.Precision = p
		return NewLearner(backend, m, LossConfig{}, a, 1)
	}
	copyMaster, remainder := learner(precision.Optimizer{}), learner(precision.Optimizer{Master: precision.MasterRemainder})
	for step := 1; step <= steps; step++ {
		sftSteps(t, copyMaster, 1, lr)
		sftSteps(t, remainder, 1, lr)
		want, got := mastersOf(t, copyMaster), mastersOf(t, remainder)
		differ, moved, total := 0, 0, 0
		init := weightsOf(t, start)
		for name, w := range want {
			for i := range w {
				total++
				if math.Float32bits(got[name][i]) != math.Float32bits(w[i]) {
					differ++
				}
				if w[i] != init[name][i] {
					moved++
				}
			}
		}
		if differ > 0 || moved == 0 {
			t.Fatalf("step %d: the joined remainder master differs from the float32 copy at %d of %d weights (the copy moved at %d)",
				step, differ, total, moved)
		}
	}
}

// TestRemaindersRefusedOnCUDA: the remainder master of bfloat16 weights is
// refused where their update runs on CUDA, and nowhere else.
func TestRemaindersRefusedOnCUDA(t *testing.T) {
	aware := Config{UsePrecisionAwareOptimizer: true, MainParamsDType: "float32", MainGradsDType: "float32", ExpAvgDType: "float32",
		ExpAvgSqDType: "float32", StoreParamRemainders: true}
	copyMaster := aware
	copyMaster.StoreParamRemainders = false
	offloaded := aware
	offloaded.OptimizerCPUOffload, offloaded.OptimizerOffloadFraction = true, 1
	half := offloaded
	half.OptimizerOffloadFraction = 0.5
	for _, tc := range []struct {
		name   string
		cfg    Config
		dtype  dtypes.DType
		onCUDA bool
		refuse bool
	}{
		{"remainders on CUDA", aware, dtypes.BFloat16, true, true},
		{"half offloaded on CUDA", half, dtypes.BFloat16, true, true},
		{"remainders on the CPU", aware, dtypes.BFloat16, false, false},
		{"float32 copy on CUDA", copyMaster, dtypes.BFloat16, true, false},
		{"all offloaded on CUDA", offloaded, dtypes.BFloat16, true, false},
		{"float32 weights on CUDA", aware, dtypes.Float32, true, false},
		{"no precision-aware optimizer on CUDA", Config{StoreParamRemainders: true}, dtypes.BFloat16, true, false},
	} {
		err := remaindersOnDevice(tc.cfg, tc.dtype, tc.onCUDA)
		if (err != nil) != tc.refuse {
			t.Errorf("%s: error %v, want refused %v", tc.name, err, tc.refuse)
		}
		if err != nil && !strings.Contains(err.Error(), "store_param_remainders") {
			t.Errorf("%s: the error does not name the key: %v", tc.name, err)
		}
	}
	if backend.OnCUDA(nil) || backend.OnCUDA(testBackend(t)) {
		t.Errorf("the test backend %q counts as CUDA", testBackend(t).Description())
	}
}

// describedAs is a backend that describes itself as desc (a CUDA plugin's,
// say) and otherwise is the backend it wraps.
type describedAs struct {
	compute.Backend
	desc string
}

func (b describedAs) Description() string { return b.desc }

// TestTrainRefusesRemaindersOnCUDA: Train, handed a backend that describes
// itself as XLA's CUDA plugin (through the compile counter it wraps it in),
// refuses a bfloat16 recipe with store_param_remainders before any step.
func TestTrainRefusesRemaindersOnCUDA(t *testing.T) {
	cfg := smokeConfig(t)
	cfg.DType, cfg.UsePrecisionAwareOptimizer, cfg.StoreParamRemainders = "bfloat16", true, true
	cuda := describedAs{testBackend(t), "xla:cuda - PJRT plugin (xla_cuda_plugin.so) [1 device(s)]"}
	var log testLog
	err := Train(context.Background(), cfg, TrainOptions{Backend: cuda, Tools: arithTools{}, Progress: &log})
	if err == nil || !strings.Contains(err.Error(), "store_param_remainders") {
		t.Fatalf("Train on a CUDA-described backend with remainders: %v, want the refusal\n%s", err, log)
	}
}

// TestRemainderModeKeepsInt16Remainders: the remainder mode keeps, for each
// bfloat16 weight, an int16 remainder of the weight's shape at its own path,
// and no float32 copy (the 2 bytes a parameter it is chosen for).
func TestRemainderModeKeepsInt16Remainders(t *testing.T) {
	start, _ := startingModels(t, 2)
	l := NewLearner(testBackend(t), start, LossConfig{}, AdamWConfig{Beta1: 0.9, Beta2: 0.999, Eps: 1e-8,
		Precision: precision.Optimizer{Master: precision.MasterRemainder}}, 1)
	sftSteps(t, l, 1, 1e-6)
	for _, spec := range start.Config.Tensors() {
		w := start.Weight(spec.Name)
		r := start.Store.GetVariable(MasterScope + w.Path() + remainderSuffix)
		if r == nil || r.DType() != dtypes.Int16 || !slices.Equal(r.Shape().Dimensions, w.Shape().Dimensions) {
			t.Fatalf("%s: remainder %v, want int16 of %v", spec.Name, r, w.Shape().Dimensions)
		}
		if c := start.Store.GetVariable(MasterScope + w.Path()); c != nil {
			t.Errorf("%s: a float32 copy %v kept beside the remainder", spec.Name, c.Shape())
		}
	}
}
