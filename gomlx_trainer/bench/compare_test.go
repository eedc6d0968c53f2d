package bench

import (
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"

	"github.com/mathrl/mathrl/gomlx_trainer/backend/backendtest"
	"github.com/mathrl/mathrl/gomlx_trainer/qwen3"
)

func TestBenchRatios(t *testing.T) {
	sides := []Side{
		{Name: "xla-cpu", Result: Result{TrainStepMS: 100, DecodeStepMS: 10, PrefillMS: 50}},
		{Name: "torch", Result: Result{TrainStepMS: 150, DecodeStepMS: 40}},
		{Name: "cpu", Result: Result{TrainStepMS: 400, DecodeStepMS: 20, PrefillMS: 100}},
	}
	got := ratios(sides)
	want := []Ratio{
		{Of: "xla-cpu", Over: "torch", Train: 1.5, Decode: 4},
		{Of: "xla-cpu", Over: "cpu", Train: 4, Decode: 2, Prefill: 2},
		{Of: "torch", Over: "cpu", Train: 400.0 / 150, Decode: 0.5},
	}
	if len(got) != len(want) {
		t.Fatalf("ratios = %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("ratio %d = %+v, want %+v", i, got[i], want[i])
		}
	}
}

func TestBenchComparisonWriteText(t *testing.T) {
	c := Comparison{Sides: []Side{
		{Name: "xla-cpu", Label: "mathrl xla-cpu", Threads: 2, Result: Result{Params: 2.19e8, Batch: 8, SeqLen: 256, DecodeBatch: 16,
			PromptLen: 64, NewTokens: 32, TrainCompileS: 20, TrainStepMS: 1000, TrainTokensPerS: 2048, PrefillMS: 500,
			DecodeStepMS: 50, DecodeTokensPerS: 320, DecodeCompileS: 9}},
		{Name: "torch", Label: "PyTorch", Threads: 2, Result: Result{TrainStepMS: 1500, TrainTokensPerS: 1365, TrainCompileS: 2}},
	}}
	c.Ratios = ratios(c.Sides)
	var b strings.Builder
	if err := c.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	want := "params 2.19e+08; train: batch 8 x 256 tokens; decode: batch 16, prompts of 64 tokens, 32 new tokens\n" +
		"           threads  train ms/step  train tokens/s  first step s  prefill ms  decode ms/step  decode tokens/s  warm-up s\n" +
		"  xla-cpu        2         1000.0            2048          20.0       500.0           50.00              320        9.0\n" +
		"    torch        2         1500.0            1365           2.0           -               -                -          -\n" +
		"xla-cpu vs torch (torch's step time / xla-cpu's; > 1: xla-cpu is faster): train 1.50x, decode -, prefill -\n" +
		"xla-cpu: mathrl xla-cpu\ntorch: PyTorch\n"
	if b.String() != want {
		t.Errorf("WriteText:\n%s\nwant:\n%s", b.String(), want)
	}
}

func TestBenchComparisonShapesMeasuredOnly(t *testing.T) {
	c := Comparison{Sides: []Side{{Name: "cpu", Result: Result{Params: 300, Batch: 8, SeqLen: 64, DecodeBatch: 16, PromptLen: 4,
		NewTokens: 3, DecodeStepMS: 2}}}}
	if got, want := c.shapes(), "params 300; decode: batch 16, prompts of 4 tokens, 3 new tokens\n"; got != want {
		t.Errorf("shapes = %q, want %q (no train part when it was not measured)", got, want)
	}
}

// TestBenchCompareTiny compares the test backend with itself and, where the
// references' venv is installed, with PyTorch, through the JSON the command prints.
func TestBenchCompareTiny(t *testing.T) {
	b := backendtest.New(t)
	opts := CompareOptions{Bench: tinyOptions, NewModel: func() (*qwen3.Model, error) { return tinyModel(t), nil },
		Backends: []GoMLXSide{{Name: "first", Backend: b}, {Name: "second", Backend: b}}}
	c, err := Compare(context.Background(), opts, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	data, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	var back Comparison
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	if len(back.Sides) != 2 || back.Sides[1].Name != "second" || back.Sides[1].TrainStepMS <= 0 || back.Sides[0].Threads < 1 {
		t.Errorf("sides %+v", back.Sides)
	}
	if len(back.Ratios) != 1 || back.Ratios[0].Of != "first" || back.Ratios[0].Train <= 0 {
		t.Errorf("ratios %+v", back.Ratios)
	}
}

func TestBenchCompareWithTorch(t *testing.T) {
	topts := torchTiny(t)
	b := backendtest.New(t)
	opts := CompareOptions{Bench: tinyOptions, NewModel: func() (*qwen3.Model, error) { return tinyModel(t), nil },
		Backends: []GoMLXSide{{Name: "go", Backend: b}}, Torch: &topts}
	c, err := Compare(context.Background(), opts, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Sides) != 2 || c.Sides[1].Name != TorchName || !strings.Contains(c.Sides[1].Label, "PyTorch") {
		t.Fatalf("sides %+v", c.Sides)
	}
	if r := c.Ratios[0]; r.Of != "go" || r.Over != TorchName || r.Train <= 0 || r.Decode <= 0 || r.Prefill <= 0 {
		t.Errorf("ratio %+v, want every part measured", r)
	}
}
