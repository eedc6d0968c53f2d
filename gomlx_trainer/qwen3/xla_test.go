package qwen3

import (
	"math"
	"testing"

	"github.com/gomlx/compute"
	"github.com/gomlx/compute/dtypes"

	"github.com/mathrl/mathrl/gomlx_trainer/backend"
	"github.com/mathrl/mathrl/gomlx_trainer/backend/backendtest"
)

// goAndXLA opens GoMLX's pure Go backend and XLA's CPU compiler side by side,
// whatever backend the rest of the tests run on.
func goAndXLA(t *testing.T) (goBackend, xla compute.Backend) {
	t.Helper()
	if backendtest.IsXLA() {
		t.Skip("opens both backends itself: runs once, in the pass on the Go backend")
	}
	plugin := backendtest.XLACPUPlugin(t)
	t.Setenv(backendtest.KindEnv, "")
	t.Setenv("GOMLX_BACKEND", backend.CPUConfig)
	goBackend = backendtest.New(t)
	t.Setenv("GOMLX_BACKEND", "xla:"+plugin)
	xla = backendtest.New(t)
	return goBackend, xla
}

// agreementModels builds each model afresh (a model's variables live on the
// backend that ran it last): the tiny reference checkpoint, a random one with
// GQA, head_dim != hidden/heads and untied embeddings, and one whose
// vocabulary takes the gather path.
func agreementModels(t *testing.T, dtype dtypes.DType) map[string]func() *Model {
	t.Helper()
	dir, _ := loadReference(t)
	wide := t.TempDir()
	if err := WriteRandom(wideHeads, wide, "F32", 7); err != nil {
		t.Fatal(err)
	}
	load := func(dir string) func() *Model {
		return func() *Model {
			m, err := Load(dir, dtype)
			if err != nil {
				t.Fatal(err)
			}
			return m
		}
	}
	return map[string]func() *Model{
		"tiny-qwen3-hf": load(dir),
		"wide-heads":    load(wide),
		"big-vocab": func() *Model {
			m, err := NewRandom(bigVocab, dtype, 7)
			if err != nil {
				t.Fatal(err)
			}
			return m
		},
	}
}

// relativeToLargest is max|got-want| over max|want|.
func relativeToLargest(got, want []float32) float64 {
	return maxDiff(got, want) / math.Max(maxAbs(want), 1e-30)
}

// TestXLAAgreesWithGo compares XLA's CPU compiler with the pure Go backend in
// float32: logits, then log-probs, entropies and every weight's gradient of a
// loss built from them, with plain graphs and with rematerialised layers and
// chunked log-probs (recompute_layers' custom gradient), each tensor within
// 1e-5 of its largest magnitude.
func TestXLAAgreesWithGo(t *testing.T) {
	goBackend, xla := goAndXLA(t)
	ids := [][]int32{{3, 17, 1, 39, 5, 22, 9, 30}, {8, 2, 25, 11, 36, 4, 19, 7}}
	for name, newModel := range agreementModels(t, dtypes.Float32) {
		want, got := logitsOf(t, goBackend, newModel(), ids), logitsOf(t, xla, newModel(), ids)
		worst := 0.0
		for r := range want {
			for p := range want[r] {
				worst = max(worst, relErr(got[r][p], want[r][p]))
			}
		}
		t.Logf("%s logits: XLA against Go, max error relative to the row's largest %.2e", name, worst)
		if worst > 1e-5 {
			t.Errorf("%s logits: XLA differs from Go by %.2e of the largest", name, worst)
		}
		for _, opts := range []ModelOptions{{}, {Remat: true, LogProbChunk: 4}} {
			want, got := logProbsAndGrads(t, goBackend, newModel(), opts), logProbsAndGrads(t, xla, newModel(), opts)
			worst, at := 0.0, 0
			for i := range want {
				if e := relativeToLargest(got[i], want[i]); e > worst {
					worst, at = e, i
				}
			}
			t.Logf("%s %+v: log-probs, entropies and %d gradients, worst %.2e (tensor %d)", name, opts, len(want)-2, worst, at)
			if worst > 1e-5 {
				t.Errorf("%s %+v: tensor %d (0 log-probs, 1 entropies, then gradients) differs by %.2e of its largest",
					name, opts, at, worst)
			}
		}
	}
}

// TestXLABFloat16 runs the reference prompt in bfloat16 on both backends and
// reports each against transformers' float32 logits and against each other.
// bfloat16 keeps about 3 significant digits, and the two compilers round at
// different places (XLA fuses elementwise chains and keeps float32 inside a
// fusion), so each is held to the bound TestBFloat16Compute uses, 5e-2 of the
// row's largest logit.
func TestXLABFloat16(t *testing.T) {
	goBackend, xla := goAndXLA(t)
	dir, ref := loadReference(t)
	load := func() *Model {
		m, err := Load(dir, dtypes.BFloat16)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	seq := len(ref.InputIDs[0])
	onGo := logitsOf(t, goBackend, load(), ref.InputIDs)[0][seq-1]
	onXLA := logitsOf(t, xla, load(), ref.InputIDs)[0][seq-1]
	eGo, eXLA, eBoth := relErr(onGo, ref.LogitsLast[0]), relErr(onXLA, ref.LogitsLast[0]), relErr(onXLA, onGo)
	t.Logf("bf16 last logits against transformers' float32: Go %.2e, XLA %.2e; XLA against Go %.2e", eGo, eXLA, eBoth)
	if eXLA > 5e-2 || eGo > 5e-2 {
		t.Errorf("bf16 last logits: Go %.2e, XLA %.2e of the row's largest, bound 5e-2", eGo, eXLA)
	}
}
