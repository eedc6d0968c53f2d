package bench

import (
	"io"
	"math"
	"os"
	"testing"

	"github.com/gomlx/gomlx/backends"
	_ "github.com/gomlx/gomlx/backends/simplego"
	"github.com/gomlx/gomlx/pkg/core/dtypes"

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
	config := os.Getenv("GOMLX_BACKEND")
	if config == "" {
		config = "go:ops_sequential"
	}
	b, err := backends.NewWithConfig(config)
	if err != nil {
		t.Fatal(err)
	}
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
	if res.TrainStepMS <= 0 || res.TrainTokensPerS <= 0 || res.TrainMFU <= 0 || res.DecodeStepMS <= 0 || res.DecodeTokensPerS <= 0 {
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
