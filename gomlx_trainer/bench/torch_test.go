package bench

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gomlx/compute/dtypes"

	"github.com/mathrl/mathrl/gomlx_trainer/grpo"
	"github.com/mathrl/mathrl/gomlx_trainer/qwen3"
	"github.com/mathrl/mathrl/internal/testenv"
)

// tinyOptions are the tiny shapes the baseline tests run.
var tinyOptions = Options{Batch: 2, SeqLen: 8, DecodeBatch: 3, PromptLen: 4, NewTokens: 3, TrainSteps: 1, Train: true, Decode: true}

// torchTiny returns the baseline's options for the venv python and the repo's script.
func torchTiny(t *testing.T) TorchOptions {
	t.Helper()
	py := testenv.RefPython(t, "torch", "transformers")
	return TorchOptions{Python: py, Script: filepath.Join(testenv.RepoRoot(t), TorchScript), Threads: 1}
}

func TestBenchTorchBaselineTiny(t *testing.T) {
	topts := torchTiny(t)
	topts.MatmulMax = 64
	cfg, _ := qwen3.NamedConfig("tiny")
	var log strings.Builder
	r, err := RunTorch(context.Background(), cfg, dtypes.Float32, tinyOptions, topts, &log)
	if err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	for name, v := range map[string]float64{"train_compile_s": r.TrainCompileS, "train_step_ms": r.TrainStepMS,
		"train_tokens_per_s": r.TrainTokensPerS, "decode_compile_s": r.DecodeCompileS, "prefill_ms": r.PrefillMS,
		"decode_step_ms": r.DecodeStepMS, "decode_tokens_per_s": r.DecodeTokensPerS, "train_flops_per_s": r.TrainFLOPsPerS,
		"prefill_flops_per_s": r.PrefillFLOPsPerS, "decode_bytes_per_s": r.DecodeBytesPerS} {
		if !(v > 0) {
			t.Errorf("%s = %g, want > 0", name, v)
		}
	}
	if r.Params != cfg.Params() {
		t.Errorf("params %d, want the Go config's %d", r.Params, cfg.Params())
	}
	if r.Batch != 2 || r.SeqLen != 8 || r.DecodeBatch != 3 || r.PromptLen != 4 || r.NewTokens != 3 || r.Threads != 1 ||
		r.DType != "float32" {
		t.Errorf("sizes and settings %+v, want batch 2, len 8, decode batch 3, prompt len 4, new tokens 3, 1 thread, float32", r)
	}
	if r.Torch == "" || r.Transformers == "" || r.Attention == "" {
		t.Errorf("versions: torch %q, transformers %q, attention %q", r.Torch, r.Transformers, r.Attention)
	}
	if len(r.Matmuls) != 2 || r.Matmuls[0].DType != "float32" || r.Matmuls[1].DType != "bfloat16" {
		t.Fatalf("matmuls %+v, want float32 and bfloat16", r.Matmuls)
	}
	for _, m := range r.Matmuls {
		if m.On != TorchName || m.N != 64 || !(m.FLOPsPerS > 0) {
			t.Errorf("matmul %+v, want torch's at n 64", m)
		}
	}
	if !strings.Contains(log.String(), "torch: train:") {
		t.Errorf("the script's progress lines did not reach the log:\n%s", log.String())
	}
}

func TestBenchTorchArgs(t *testing.T) {
	o := tinyOptions
	o.AdamW = grpo.AdamWConfig{Beta1: 0.9, Beta2: 0.999, Eps: 1e-8, WeightDecay: 0.1, ClipNorm: 1}
	o.LR, o.Train = 3e-6, false
	got := strings.Join(torchArgs("s.py", "--config", "c.json", "float32", o, TorchOptions{Threads: 2, MatmulMax: 512}), " ")
	for _, want := range []string{"s.py --config c.json --dtype float32 --what decode", "--batch 2 --seq-len 8 --steps 1",
		"--decode-batch 3 --prompt-len 4 --new-tokens 3", "--temperature 0 --threads 2 --matmul-peak 512", "--lr 3e-06 --beta1 0.9 --beta2 0.999 --eps 1e-08",
		"--weight-decay 0.1 --clip-norm 1"} {
		if !strings.Contains(got, want) {
			t.Errorf("torchArgs = %q, want it to contain %q", got, want)
		}
	}
}

func TestBenchParseTorch(t *testing.T) {
	ok := `{"params": 10, "threads": 2, "train_step_ms": 5, "train_tokens_per_s": 3, "torch": "2.15.0"}`
	r, err := ParseTorch([]byte("a warning\n"+ok+"\n\n"), Options{Train: true})
	if err != nil || r.TrainStepMS != 5 || r.Torch != "2.15.0" {
		t.Errorf("ParseTorch = %+v, %v", r, err)
	}
	for _, tc := range []struct{ out, want string }{
		{"", "printed nothing"},
		{"not json", "not json"},
		{ok, `"decode_step_ms" is 0`},
		{`{"params": 10, "threads": 0}`, `"threads" is 0`},
	} {
		_, err := ParseTorch([]byte(tc.out), Options{Train: true, Decode: true})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ParseTorch(%q): error %v, want one containing %q", tc.out, err, tc.want)
		}
	}
}

func TestBenchTorchMissingPython(t *testing.T) {
	cfg, _ := qwen3.NamedConfig("tiny")
	_, err := RunTorch(context.Background(), cfg, dtypes.Float32, tinyOptions,
		TorchOptions{Python: filepath.Join(t.TempDir(), "python"), Script: "x.py"}, nil)
	if err == nil || !strings.Contains(err.Error(), "python") {
		t.Errorf("missing python: error %v", err)
	}
}

func TestBenchTrainerAdamW(t *testing.T) {
	adam, lr := TrainerAdamW()
	if lr <= 0 || adam.Beta1 != 0.9 || adam.Beta2 != 0.999 || adam.ClipNorm <= 0 {
		t.Errorf("TrainerAdamW = %+v, %g", adam, lr)
	}
	o := Options{}.withDefaults()
	if o.LR != lr || o.AdamW != adam {
		t.Errorf("defaults: %+v, %g; want the trainer's", o.AdamW, o.LR)
	}
}
