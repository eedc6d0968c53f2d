package bench

import (
	"io"
	"math"
	"strings"
	"testing"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/dtypes/bfloat16"

	"github.com/mathrl/mathrl/gomlx_trainer/backend/backendtest"
	"github.com/mathrl/mathrl/gomlx_trainer/grpo"
	"github.com/mathrl/mathrl/gomlx_trainer/qwen3"
)

func TestBenchTrainFLOPs(t *testing.T) {
	// Qwen3-0.6B, 64 x 320 tokens: 6 * 596M params * 20480 tokens = 7.3e13, plus
	// attention 12 * 28 * 16 * 128 * 320 * 20480 = 4.5e12.
	cfg, _ := qwen3.NamedConfig("qwen3-0.6b")
	got := TrainFLOPs(cfg, 64, 320)
	want := 6*float64(cfg.Params())*64*320 + 12*28*16*128*320*64*320.0
	if math.Abs(got-want) > 1e-9*want || got < 7.7e13 || got > 7.9e13 {
		t.Errorf("TrainFLOPs = %.4g, want %.4g", got, want)
	}
}

func tinyModel(t *testing.T) *qwen3.Model {
	t.Helper()
	cfg, _ := qwen3.NamedConfig("tiny")
	m, err := qwen3.NewRandom(cfg, dtypes.Float32, 1)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestBenchRunTiny(t *testing.T) {
	b := backendtest.New(t)
	m := tinyModel(t)
	before, _ := qwen3.Float32s(m.Weight("model.layers.0.mlp.up_proj.weight").MustValue())
	res, err := Run(b, m, Options{Batch: 2, SeqLen: 8, DecodeBatch: 3, PromptLen: 5, NewTokens: 3, TrainSteps: 1,
		Train: true, Decode: true, Roofline: &Roofline{CopyBytesPerS: 1, Matmuls: []Matmul{{DType: "float32", FLOPsPerS: 1}}}}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if res.TrainStepMS <= 0 || res.TrainTokensPerS <= 0 || res.TrainMFU <= 0 || res.DecodeStepMS <= 0 || res.DecodeTokensPerS <= 0 ||
		res.DecodeWholeCacheStepMS <= 0 || res.PrefillMFU <= 0 || res.DecodeMBU <= 0 || res.Roofline == nil {
		t.Errorf("result %+v", res)
	}
	// Against limits of 1 FLOP/s and 1 byte/s the fractions are the rates.
	if res.TrainMFU != res.TrainFLOPsPerS || res.PrefillMFU != res.PrefillFLOPsPerS || res.DecodeMBU != res.DecodeBytesPerS {
		t.Errorf("fractions of a roofline of ones: %g, %g, %g; want the rates %g, %g, %g", res.TrainMFU, res.PrefillMFU,
			res.DecodeMBU, res.TrainFLOPsPerS, res.PrefillFLOPsPerS, res.DecodeBytesPerS)
	}
	if res.Batch != 2 || res.SeqLen != 8 || res.DecodeBatch != 3 || res.PromptLen != 5 || res.NewTokens != 3 {
		t.Errorf("sizes in the result %+v, want batch 2, len 8, decode batch 3, prompt len 5, new tokens 3", res)
	}
	// The training step really updates the weights, with the trainer's AdamW:
	// its step counter is in the store and counts the two steps.
	after, _ := qwen3.Float32s(m.Weight("model.layers.0.mlp.up_proj.weight").MustValue())
	changed := false
	for i := range before {
		changed = changed || before[i] != after[i]
	}
	if !changed {
		t.Error("train step left model.layers.0.mlp.up_proj.weight unchanged")
	}
	step := m.Store.GetVariable(grpo.AdamScope + "/step")
	if step == nil {
		t.Fatalf("no AdamW step counter %s/step in the store", grpo.AdamScope)
	}
	if n, _ := qwen3.Float32s(step.MustValue()); len(n) != 1 || n[0] != 2 {
		t.Errorf("AdamW step counter %v, want 2 (the compiling step and the timed one)", n)
	}
}

// TestBenchRunTinyBFloat16 decodes with a bfloat16 model against a roofline
// whose bfloat16 peak is 4 FLOP/s and float32 peak 1: the prefill's fraction
// must be of the model's dtype's peak, and a decode step's bytes those of
// bfloat16 weights and cache.
func TestBenchRunTinyBFloat16(t *testing.T) {
	b := backendtest.New(t)
	cfg, _ := qwen3.NamedConfig("tiny")
	m, err := qwen3.NewRandom(cfg, dtypes.BFloat16, 1)
	if err != nil {
		t.Fatal(err)
	}
	roof := &Roofline{CopyBytesPerS: 1, Matmuls: []Matmul{{DType: "float32", FLOPsPerS: 1}, {DType: "bfloat16", FLOPsPerS: 4}}}
	res, err := Run(b, m, Options{Batch: 2, SeqLen: 8, DecodeBatch: 3, PromptLen: 5, NewTokens: 3, Decode: true,
		Train: true, TrainSteps: 2, SkipWholeCache: true, Roofline: roof}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if !(res.PrefillFLOPsPerS > 0) || !(res.DecodeBytesPerS > 0) || !(res.TrainFLOPsPerS > 0) {
		t.Fatalf("rates %g, %g, %g; want all three", res.PrefillFLOPsPerS, res.DecodeBytesPerS, res.TrainFLOPsPerS)
	}
	if res.TrainMFU != res.TrainFLOPsPerS/4 {
		t.Errorf("train MFU %g of %g FLOP/s, want a quarter (the bfloat16 peak)", res.TrainMFU, res.TrainFLOPsPerS)
	}
	// At the trainer's lr (1e-6) the bfloat16 weights round back to where they
	// were; their float32 masters move.
	w := m.Weight("model.norm.weight")
	master := m.Store.GetVariable(grpo.MasterScope + w.Path())
	if master == nil {
		t.Fatal("no float32 master of model.norm.weight after the bfloat16 train steps")
	}
	got, start := master.MustValue().Value().([]float32)[0], w.MustValue().Value().([]bfloat16.BFloat16)[0].Float32()
	if got == start {
		t.Errorf("float32 master of model.norm.weight[0] is %v after the bfloat16 train steps, its starting value: no update", got)
	}
	if res.PrefillMFU != res.PrefillFLOPsPerS/4 || res.DecodeMBU != res.DecodeBytesPerS {
		t.Errorf("prefill MFU %g of %g FLOP/s, want a quarter (the bfloat16 peak, 4 FLOP/s); decode MBU %g of %g B/s, want it",
			res.PrefillMFU, res.PrefillFLOPsPerS, res.DecodeMBU, res.DecodeBytesPerS)
	}
	if want := MeanDecodeStepBytes(cfg, dtypes.BFloat16, 3, 5, 3); res.DecodeStepBytes != want {
		t.Errorf("decode step bytes %g, want %g (bfloat16 weights and cache)", res.DecodeStepBytes, want)
	}
}

func TestBenchOptionsErrors(t *testing.T) {
	for _, tc := range []struct {
		opts Options
		want string
	}{
		{Options{Train: true, Batch: 0, SeqLen: 8}, "batch 0"},
		{Options{Train: true, Batch: 1, SeqLen: 1}, "seq_len 1"},
		{Options{Decode: true, Batch: 1, SeqLen: 8, NewTokens: 1}, "new_tokens 1"},
		{Options{Decode: true, Batch: 1, SeqLen: 8, DecodeBatch: -1, NewTokens: 4}, "decode_batch -1"},
		{Options{Decode: true, Batch: 1, SeqLen: 8, NewTokens: 4, Temperature: -1}, "temperature -1"},
	} {
		if _, err := Run(nil, tinyModel(t), tc.opts, io.Discard); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Run(%+v): error %v, want one naming %q", tc.opts, err, tc.want)
		}
	}
}

func TestBenchResultWriteText(t *testing.T) {
	for _, tc := range []struct {
		name string
		res  Result
		want string
	}{
		{"both, with a roofline", Result{Params: 1234567, Batch: 8, SeqLen: 64, DecodeBatch: 8, PromptLen: 64, NewTokens: 32,
			TrainCompileS: 2.04, TrainStepMS: 12.345, TrainTokensPerS: 41475.3, TrainFLOPsPerS: 52.14e9, TrainMFU: 0.3125,
			DecodeCompileS: 1.25, PrefillMS: 3.05, PrefillFLOPsPerS: 1.5e12, PrefillMFU: 0.5, DecodeStepMS: 0.756,
			DecodeTokensPerS: 10582.01, DecodeBytesPerS: 4.523e9, DecodeMBU: 0.65, DecodeFLOPsPerS: 33.5e12, DecodeMFU: 0.5,
			Roofline: &Roofline{Source: "h200", CopyBytesPerS: 4.8e12, Matmuls: []Matmul{{On: "h200", DType: "float32", FLOPsPerS: 67e12}}}},
			"params 1.23e+06, batch 8, len 64, new tokens 32\n" +
				"roofline (h200): copy bandwidth 4.80 TB/s\nroofline matmul peaks: float32 h200 67.0 TFLOP/s\n" +
				"train step: 12.3 ms, 41475 tokens/s, 52.1 GFLOP/s, 31.2% of the matmul peak (first step 2.0 s)\n" +
				"decode: 0.76 ms/step, 10582 tokens/s, 4.52 GB/s, 65.0% of the copy bandwidth, 33.5 TFLOP/s, 50.0% of the matmul peak; " +
				"prefill 3.0 ms, 1.50 TFLOP/s, 50.0% of the matmul peak (warm-up 1.2 s)\n" +
				"decode is bound by the copy bandwidth: 65.0% of its roofline\n"},
		{"train only, no roofline", Result{Params: 300, Batch: 1, SeqLen: 2, DecodeBatch: 1, PromptLen: 2, NewTokens: 0,
			TrainCompileS: 0.5, TrainStepMS: 1, TrainTokensPerS: 2000, TrainFLOPsPerS: 3.6e6},
			"params 300, batch 1, len 2, new tokens 0\ntrain step: 1.0 ms, 2000 tokens/s, 3.60 MFLOP/s (first step 0.5 s)\n"},
		{"decode shapes of their own", Result{Params: 300, Batch: 8, SeqLen: 256, DecodeBatch: 16, PromptLen: 64, NewTokens: 32,
			DecodeCompileS: 3, PrefillMS: 40, DecodeStepMS: 2, DecodeTokensPerS: 8000, DecodeBytesPerS: 999.7, PrefillFLOPsPerS: 12,
			DecodeFLOPsPerS: 24},
			"params 300, batch 8, len 256, new tokens 32, decode batch 16, prompt len 64\n" +
				"decode: 2.00 ms/step, 8000 tokens/s, 1000 B/s, 24.0 FLOP/s; prefill 40.0 ms, 12.0 FLOP/s (warm-up 3.0 s)\n"},
		{"compute-bound decode", Result{Params: 300, Batch: 8, SeqLen: 256, DecodeBatch: 8, PromptLen: 256, NewTokens: 2,
			DecodeCompileS: 1, PrefillMS: 4, DecodeStepMS: 5, DecodeTokensPerS: 1600, DecodeBytesPerS: 2e9, DecodeMBU: 0.1,
			DecodeFLOPsPerS: 80e9, DecodeMFU: 0.25, PrefillFLOPsPerS: 100e9, PrefillMFU: 0.3125},
			"params 300, batch 8, len 256, new tokens 2\n" +
				"decode: 5.00 ms/step, 1600 tokens/s, 2.00 GB/s, 10.0% of the copy bandwidth, 80.0 GFLOP/s, 25.0% of the matmul peak; " +
				"prefill 4.0 ms, 100 GFLOP/s, 31.2% of the matmul peak (warm-up 1.0 s)\n" +
				"decode is bound by the matmul peak: 25.0% of its roofline\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b strings.Builder
			if err := tc.res.WriteText(&b); err != nil {
				t.Fatal(err)
			}
			if b.String() != tc.want {
				t.Errorf("WriteText:\n%s\nwant:\n%s", b.String(), tc.want)
			}
		})
	}
}
