package bench

import (
	"io"
	"math"
	"strings"
	"testing"

	"github.com/gomlx/compute/dtypes"

	"github.com/mathrl/mathrl/gomlx_trainer/backend/backendtest"
	"github.com/mathrl/mathrl/gomlx_trainer/qwen3"
)

func TestTrainFLOPs(t *testing.T) {
	// Qwen3-0.6B, 64 x 320 tokens: 6 * 596M params * 20480 tokens = 7.3e13, plus
	// attention 12 * 28 * 16 * 128 * 320 * 20480 = 4.5e12.
	cfg, _ := qwen3.NamedConfig("qwen3-0.6b")
	got := TrainFLOPs(cfg, 64, 320)
	want := 6*float64(cfg.Params())*64*320 + 12*28*16*128*320*64*320.0
	if math.Abs(got-want) > 1e-9*want || got < 7.7e13 || got > 7.9e13 {
		t.Errorf("TrainFLOPs = %.4g, want %.4g", got, want)
	}
}

func TestRunTiny(t *testing.T) {
	b := backendtest.New(t)
	cfg, _ := qwen3.NamedConfig("tiny")
	m, err := qwen3.NewRandom(cfg, dtypes.Float32, 1)
	if err != nil {
		t.Fatal(err)
	}
	before, _ := qwen3.Float32s(m.Weight("model.layers.0.mlp.up_proj.weight").MustValue())
	res, err := Run(b, m, Options{Batch: 2, SeqLen: 8, NewTokens: 3, TrainSteps: 1, Train: true, Decode: true, PeakTFLOPS: 1}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if res.TrainStepMS <= 0 || res.TrainTokensPerS <= 0 || res.TrainMFU <= 0 || res.DecodeStepMS <= 0 || res.DecodeTokensPerS <= 0 ||
		res.DecodeWholeCacheStepMS <= 0 {
		t.Errorf("result %+v", res)
	}
	// The training step really updates the weights.
	after, _ := qwen3.Float32s(m.Weight("model.layers.0.mlp.up_proj.weight").MustValue())
	changed := false
	for i := range before {
		changed = changed || before[i] != after[i]
	}
	if !changed {
		t.Error("train step left model.layers.0.mlp.up_proj.weight unchanged")
	}
}

func TestResultWriteText(t *testing.T) {
	for _, tc := range []struct {
		name string
		res  Result
		want string
	}{
		{"both, with MFU", Result{Params: 1234567, Batch: 8, SeqLen: 64, NewTokens: 32, TrainCompileS: 2.04, TrainStepMS: 12.345,
			TrainTokensPerS: 41475.3, TrainMFU: 0.3125, DecodeCompileS: 1.25, PrefillMS: 3.05, DecodeStepMS: 0.756, DecodeTokensPerS: 10582.01},
			"params 1.23e+06, batch 8, len 64, new tokens 32\n" +
				"train step: 12.3 ms, 41475 tokens/s, MFU 31.2% (first step 2.0 s)\n" +
				"decode: 0.76 ms/step, 10582 tokens/s, prefill 3.0 ms (warm-up 1.2 s)\n"},
		{"train only, no MFU", Result{Params: 300, Batch: 1, SeqLen: 2, NewTokens: 0, TrainCompileS: 0.5, TrainStepMS: 1, TrainTokensPerS: 2000},
			"params 300, batch 1, len 2, new tokens 0\ntrain step: 1.0 ms, 2000 tokens/s (first step 0.5 s)\n"},
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
