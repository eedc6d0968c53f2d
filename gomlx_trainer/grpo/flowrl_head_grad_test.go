package grpo

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"

	. "github.com/gomlx/gomlx/core/graph" //nolint:staticcheck // graph-building code reads better unqualified
	"github.com/gomlx/gomlx/core/tensors"
	mlmodel "github.com/gomlx/gomlx/ml/model"

	"github.com/mathrl/mathrl/gomlx_trainer/qwen3"
)

// projZ64 is ProjZModule in float64, written out in Go independently of the
// graph: (layers − 1) × [Linear, exact GELU, LayerNorm(ε 1e-5)], then
// Linear(h, 1), on the mean of hidden [t][h] over positions 0 … P−2 (a zero
// vector for P = 1). w holds PyTorch's names, row-major.
func projZ64(w map[string][]float32, layers int, hidden [][]float64, promptLen int) float64 {
	h := len(hidden[0])
	x := make([]float64, h)
	if n := promptLen - 1; n > 0 {
		for p := range n {
			for k := range h {
				x[k] += hidden[p][k]
			}
		}
		for k := range h {
			x[k] /= float64(n)
		}
	}
	linear := func(x []float64, k, out int) []float64 {
		wt, b := w[fmt.Sprintf("net.%d.weight", k)], w[fmt.Sprintf("net.%d.bias", k)]
		y := make([]float64, out)
		for o := range out {
			y[o] = float64(b[o])
			for i := range h {
				y[o] += float64(wt[o*h+i]) * x[i]
			}
		}
		return y
	}
	for i := range layers - 1 {
		y := linear(x, 4*i, h)
		var mean float64
		for k, v := range y {
			y[k] = 0.5 * v * (1 + math.Erf(v/math.Sqrt2))
			mean += y[k] / float64(h)
		}
		var variance float64
		for _, v := range y {
			variance += (v - mean) * (v - mean) / float64(h)
		}
		g, beta := w[fmt.Sprintf("net.%d.weight", 4*i+2)], w[fmt.Sprintf("net.%d.bias", 4*i+2)]
		for k := range y {
			y[k] = (y[k]-mean)/math.Sqrt(variance+1e-5)*float64(g[k]) + float64(beta[k])
		}
		x = y
	}
	return linear(x, 4*(layers-1), 1)[0]
}

// TestFlowRLHeadLogZGradient checks what TestFlowRLHeadAgainstReference does
// not: log Z's gradient with respect to the policy's hidden states, which is
// how δ² trains the policy through the head (the authors' last_hidden is not
// detached), and a one-token prompt, whose mean is over no position. On
// testdata's weights and hidden states, plus a fourth row that is the first
// with a prompt of one token, the graph's log Z must be projZ64's (itself
// checked against ProjZModule's values) and the gradient of Σ log Z with
// respect to h must be projZ64's central finite differences in float64:
// non-zero on positions 0 … P−2 and 0 on the prompt's last token, the
// response and the padding. The one-token row's log Z is the head of a zero
// vector and its gradient 0, all finite.
func TestFlowRLHeadLogZGradient(t *testing.T) {
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
	hidden, lens := append(ref.Hidden, ref.Hidden[0]), append(ref.PromptLens, 1)
	rows, seq, hs := len(hidden), len(hidden[0]), ref.HiddenSize
	h64 := make([][][]float64, rows)
	for i := range hidden {
		h64[i] = make([][]float64, seq)
		for p := range seq {
			h64[i][p] = make([]float64, hs)
			for k := range hs {
				h64[i][p][k] = float64(hidden[i][p][k])
			}
		}
	}
	for i, want := range ref.LogZ { // projZ64 is ProjZModule
		if got := projZ64(ref.Weights, ref.Layers, h64[i], int(lens[i])); !near(got, want, 1e-6) { // the JSON values read as float32
			t.Fatalf("row %d: projZ64 gives %v, ProjZModule %v", i, got, want)
		}
	}

	store := mlmodel.NewStore()
	if err := InitFlowRLHead(store, hs, ref.Layers, 1); err != nil {
		t.Fatal(err)
	}
	for _, spec := range flowHeadTensors(hs, ref.Layers) {
		if err := store.GetVariable(flowHeadPath(spec.name)).SetValue(tensors.FromFlatDataAndDimensions(ref.Weights[spec.name], spec.dims...)); err != nil {
			t.Fatal(err)
		}
	}
	exec := mlmodel.MustNewExec(testBackend(t), store, func(scope *mlmodel.Scope, h, lens *Node) []*Node {
		logZ := FlowRLHeadLogZ(scope, h, lens, ref.Layers)
		return []*Node{logZ, Gradient(ReduceAllSum(logZ), h)[0]}
	})
	out, err := exec.Call(hidden, lens)
	if err != nil {
		t.Fatal(err)
	}
	logZ, err := qwen3.Float32s(out[0])
	if err != nil {
		t.Fatal(err)
	}
	grad, err := qwen3.Float32s(out[1])
	if err != nil {
		t.Fatal(err)
	}
	const eps = 1e-5
	for i := range rows {
		p := int(lens[i])
		if want := projZ64(ref.Weights, ref.Layers, h64[i], p); !near(float64(logZ[i]), want, 1e-5) {
			t.Errorf("row %d (prompt of %d tokens): log Z %v, want %v", i, p, logZ[i], want)
		}
		var norm float64
		for pos := range seq {
			for k := range hs {
				x := h64[i][pos][k]
				h64[i][pos][k] = x + eps
				up := projZ64(ref.Weights, ref.Layers, h64[i], p)
				h64[i][pos][k] = x - eps
				down := projZ64(ref.Weights, ref.Layers, h64[i], p)
				h64[i][pos][k] = x
				want, got := (up-down)/(2*eps), float64(grad[(i*seq+pos)*hs+k])
				norm += want * want
				if math.IsNaN(got) || !near(got, want, 1e-4) {
					t.Errorf("row %d (prompt of %d tokens), position %d, dim %d: d log Z/dh %v, finite differences %v", i, p, pos, k, got, want)
				}
			}
		}
		if (p > 1) != (norm > 1e-6) {
			t.Errorf("row %d (prompt of %d tokens): the finite-difference gradient's squared norm is %g", i, p, norm)
		}
	}
}
