package grpo

import (
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	mlmodel "github.com/gomlx/gomlx/ml/model"

	"github.com/mathrl/mathrl/gomlx_trainer/qwen3"
)

// TestInitFlowRLHeadFollowsPyTorch checks InitFlowRLHead's values against
// PyTorch's defaults for ProjZModule's layers (torch.nn.Linear: weight and
// bias uniform on [−1/√in, 1/√in]; torch.nn.LayerNorm: weight 1, bias 0) on
// hidden size 64 and 3 blocks: every Linear value in the bound, the largest
// magnitude of each weight matrix within 5% of it (4096 draws: the uniform's
// maximum), the mean near 0 and the variance near bound²/3, the uniform's.
func TestInitFlowRLHeadFollowsPyTorch(t *testing.T) {
	const h, layers = 64, 3
	store := mlmodel.NewStore()
	if err := InitFlowRLHead(store, h, layers, 7); err != nil {
		t.Fatal(err)
	}
	bound := 1 / math.Sqrt(h)
	for _, spec := range flowHeadTensors(h, layers) {
		v := store.GetVariable(flowHeadPath(spec.name))
		if v == nil || !v.Trainable {
			t.Fatalf("%s: variable %v missing or not trainable", spec.name, v)
		}
		vals, err := qwen3.Float32s(v.MustValue())
		if err != nil {
			t.Fatal(err)
		}
		norm := flowHeadIsNorm(spec.name)
		var sum, sq, largest float64
		for _, x := range vals {
			x := float64(x)
			switch {
			case norm && strings.HasSuffix(spec.name, ".weight") && x != 1, norm && strings.HasSuffix(spec.name, ".bias") && x != 0:
				t.Fatalf("%s (LayerNorm) holds %v, want weight 1 and bias 0", spec.name, x)
			case !norm && math.Abs(x) > bound:
				t.Fatalf("%s (Linear) holds %v, outside ±1/√%d = ±%v", spec.name, x, h, bound)
			}
			sum, sq, largest = sum+x, sq+x*x, math.Max(largest, math.Abs(x))
		}
		if norm || len(vals) < h*h {
			continue
		}
		n := float64(len(vals))
		mean, variance := sum/n, sq/n-(sum/n)*(sum/n)
		if largest < 0.95*bound || math.Abs(mean) > 0.05*bound || math.Abs(variance/(bound*bound/3)-1) > 0.1 {
			t.Errorf("%s: largest magnitude %v, mean %v, variance %v; U(±%v) has %v, 0 and %v", spec.name, largest, mean, variance, bound, bound, bound*bound/3)
		}
	}
}

// TestFlowRLHeadRestoresInCreationOrder: a head read back from
// optimizer.safetensors (whose names come sorted, so net/12 before net/4 and
// bias before weight) must be created in InitFlowRLHead's order, since the
// trainable variables' order is the gradient norm's summation order and a
// resumed run must round as the uninterrupted one (on XLA it did not). The
// restored head trains only once InitFlowRLHead finds it, keeping its values.
// Five blocks put a two-digit module index in the head.
func TestFlowRLHeadRestoresInCreationOrder(t *testing.T) {
	const h, layers = 4, 5
	fresh := mlmodel.NewStore()
	if err := InitFlowRLHead(fresh, h, layers, 3); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), optimizerFile)
	if err := writeOptimizer(path, flowHeadVars(fresh)); err != nil {
		t.Fatal(err)
	}
	restored := mlmodel.NewStore()
	if err := readOptimizer(path, restored); err != nil {
		t.Fatal(err)
	}
	order := func(store *mlmodel.Store) []string {
		var paths []string
		for _, v := range TrainableVariables(store) {
			paths = append(paths, v.Path())
		}
		return paths
	}
	var want []string
	for _, spec := range flowHeadTensors(h, layers) {
		want = append(want, flowHeadPath(spec.name))
	}
	if got := order(fresh); !slices.Equal(got, want) {
		t.Fatalf("InitFlowRLHead created %v, want %v", got, want)
	}
	if got := order(restored); len(got) != 0 {
		t.Errorf("a restored head trains before InitFlowRLHead finds it: %v", got)
	}
	if err := InitFlowRLHead(restored, h, layers, 4); err != nil {
		t.Fatal(err)
	}
	if got := order(restored); !slices.Equal(got, want) {
		t.Errorf("restored head's trainable order %v, want the fresh run's %v", got, want)
	}
	for _, p := range want {
		a, _ := qwen3.Float32s(fresh.GetVariable(p).MustValue())
		b, _ := qwen3.Float32s(restored.GetVariable(p).MustValue())
		if !slices.Equal(a, b) {
			t.Errorf("%s: restored %v, saved %v (InitFlowRLHead must keep a restored head)", p, b, a)
		}
	}
}
