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

// TestBenchComparisonRoofline reads two sides against a measured roofline to
// which torch adds its matmul peaks: torch's float32 peak, the higher, sets
// both sides' MFU.
func TestBenchComparisonRoofline(t *testing.T) {
	own := &Roofline{Source: "measured", CopyBytesPerS: 20e9, CopyThreads: 2, CopyBuffer: 256 << 20,
		Matmuls: []Matmul{{On: "xla-cpu", DType: "float32", N: 1024, FLOPsPerS: 200e9}}}
	c := Comparison{Sides: []Side{
		{Name: "xla-cpu", Label: "mathrl xla-cpu", Threads: 2, Result: Result{Params: 2.19e8, DecodeBatch: 16, PromptLen: 64,
			NewTokens: 8, PrefillMS: 500, PrefillFLOPsPerS: 50e9, DecodeStepMS: 50, DecodeTokensPerS: 320,
			DecodeBytesPerS: 18e9, DecodeFLOPsPerS: 25e9, DecodeCompileS: 9, Roofline: own}},
		{Name: "torch", Label: "PyTorch", Threads: 2, Result: Result{PrefillMS: 1000, PrefillFLOPsPerS: 25e9, DecodeStepMS: 100,
			DecodeTokensPerS: 160, DecodeBytesPerS: 9e9, DecodeFLOPsPerS: 12.5e9, DecodeCompileS: 2}},
	}}
	c.Ratios = ratios(c.Sides)
	c.Roofline = c.applyRoofline(*own, []Matmul{{On: TorchName, DType: "float32", N: 2048, FLOPsPerS: 250e9}}, "float32")
	if len(own.Matmuls) != 1 || len(c.Roofline.Matmuls) != 2 || c.Sides[0].Roofline != nil {
		t.Errorf("the measured roofline changed (%+v), or the comparison's lacks torch's (%+v), or a side kept its own",
			own, c.Roofline)
	}
	if s := c.Sides; s[0].PrefillMFU != 0.2 || s[1].PrefillMFU != 0.1 || s[0].DecodeMBU != 0.9 || s[1].DecodeMBU != 0.45 ||
		s[0].DecodeMFU != 0.1 || s[1].DecodeMFU != 0.05 {
		t.Errorf("fractions: prefill %g, %g, decode %g, %g and %g, %g; want 0.2, 0.1 (of torch's 250 GFLOP/s), 0.9, 0.45 and 0.1, 0.05",
			s[0].PrefillMFU, s[1].PrefillMFU, s[0].DecodeMBU, s[1].DecodeMBU, s[0].DecodeMFU, s[1].DecodeMFU)
	}
	var b strings.Builder
	if err := c.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	want := "params 2.19e+08; decode: batch 16, prompts of 64 tokens, 8 new tokens\n" +
		"roofline (measured): copy bandwidth 20.0 GB/s (2 threads, 2 buffers of 256 MiB)\n" +
		"roofline matmul peaks: float32 torch 250 GFLOP/s (n 2048), xla-cpu 200 GFLOP/s (n 1024)\n" +
		"           threads  train ms/step  train tokens/s  first step s  prefill ms  decode ms/step  decode tokens/s  warm-up s\n" +
		"  xla-cpu        2              -               -             -       500.0           50.00              320        9.0\n" +
		"    torch        2              -               -             -      1000.0          100.00              160        2.0\n" +
		"           train FLOP/s  of matmul peak  prefill FLOP/s  of matmul peak  decode bytes/s  of copy bandwidth  decode FLOP/s  of matmul peak\n" +
		"  xla-cpu             -               -    50.0 GFLOP/s           20.0%       18.0 GB/s              90.0%   25.0 GFLOP/s           10.0%\n" +
		"    torch             -               -    25.0 GFLOP/s           10.0%       9.00 GB/s              45.0%   12.5 GFLOP/s            5.0%\n" +
		"xla-cpu vs torch (torch's step time / xla-cpu's; > 1: xla-cpu is faster): train -, decode 2.00x, prefill 2.00x\n" +
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
		Backends: []GoMLXSide{{Name: "first", Backend: b}, {Name: "second", Backend: b}},
		Roofline: &RooflineOptions{CopyBuffer: 4 << 20, MatmulMax: 64}}
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
	// The roofline was measured on both backends, and both sides are read against it.
	if r := back.Roofline; r == nil || r.Source != "measured" || len(r.Matmuls) != 4 || r.Matmuls[2].On != "second" {
		t.Fatalf("roofline %+v, want float32 and bfloat16 matmuls of first and second", r)
	}
	for _, s := range back.Sides {
		if !(s.TrainMFU > 0) || !(s.PrefillMFU > 0) || !(s.DecodeMBU > 0) {
			t.Errorf("%s: fractions %g, %g, %g; want all three", s.Name, s.TrainMFU, s.PrefillMFU, s.DecodeMBU)
		}
	}
}

// TestBenchCompareWithTorch compares the test backend with PyTorch, the
// roofline measured: torch measures its matmul peaks at the roofline's sizes
// (its own options ask for none), and both sides are read against the
// highest float32 peak of the four.
func TestBenchCompareWithTorch(t *testing.T) {
	topts := torchTiny(t)
	b := backendtest.New(t)
	opts := CompareOptions{Bench: tinyOptions, NewModel: func() (*qwen3.Model, error) { return tinyModel(t), nil },
		Backends: []GoMLXSide{{Name: "go", Backend: b}}, Torch: &topts,
		Roofline: &RooflineOptions{CopyBuffer: 4 << 20, MatmulMax: 64}}
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
	var peak float64
	on := map[string]int{}
	for _, m := range c.Roofline.Matmuls {
		if m.N != 64 {
			t.Errorf("matmul %+v, want one at the roofline's largest side, 64", m)
		}
		on[m.On]++
		if m.DType == "float32" {
			peak = max(peak, m.FLOPsPerS)
		}
	}
	if len(c.Roofline.Matmuls) != 4 || on["go"] != 2 || on[TorchName] != 2 {
		t.Fatalf("roofline matmuls %+v, want float32 and bfloat16 of go and torch", c.Roofline.Matmuls)
	}
	for _, s := range c.Sides {
		if !(s.TrainMFU > 0) || s.TrainMFU != s.TrainFLOPsPerS/peak || !(s.PrefillMFU > 0) || !(s.DecodeMBU > 0) || s.Roofline != nil {
			t.Errorf("%s: fractions %g, %g, %g, roofline %v; want three, the train one of the float32 peak %g, and none of its own",
				s.Name, s.TrainMFU, s.PrefillMFU, s.DecodeMBU, s.Roofline, peak)
		}
	}
}
