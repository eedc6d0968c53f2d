package grpo

import (
	"math"
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
