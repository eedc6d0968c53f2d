package main

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/mathrl/mathrl/gomlx_trainer/backend/backendtest"
	"github.com/mathrl/mathrl/gomlx_trainer/sampler"
	"github.com/mathrl/mathrl/gomlx_trainer/tokenizer"
	"github.com/mathrl/mathrl/internal/hfref"
	"github.com/mathrl/mathrl/internal/testenv"
)

func TestNewModelCmdsParse(t *testing.T) {
	var gotInit *modelInitOptions
	initCmd := newModelInitCmd(func(_ context.Context, o *modelInitOptions) error { gotInit = o; return nil })
	if _, _, err := execute(initCmd, "", "--config", "tiny", "--out", "d", "--seed", "4", "--dtype", "bf16"); err != nil {
		t.Fatal(err)
	}
	gotInit.Log = nil
	if want := (modelInitOptions{Config: "tiny", Out: "d", Seed: 4, DType: "bf16"}); !reflect.DeepEqual(*gotInit, want) {
		t.Errorf("model init options %+v, want %+v", *gotInit, want)
	}

	var gotGen *generateOptions
	gen := newGenerateCmd(func(_ context.Context, o *generateOptions) error { gotGen = o; return nil })
	if _, _, err := execute(gen, "", "--model", "m", "--max-new-tokens", "9", "--temperature", "0.7", "--top-p", "0.9",
		"--top-k", "5", "--seed", "2", "--stop", "3,4", "--backend", "cpu"); err != nil {
		t.Fatal(err)
	}
	wantS := sampler.Options{MaxNewTokens: 9, Temperature: 0.7, TopP: 0.9, TopK: 5, Seed: 2, StopIDs: []int{3, 4}}
	if !reflect.DeepEqual(gotGen.Sampling, wantS) || gotGen.Model != "m" || gotGen.Backend != "cpu" || gotGen.In != "-" {
		t.Errorf("generate options %+v", *gotGen)
	}
	gen = newGenerateCmd(func(_ context.Context, o *generateOptions) error { gotGen = o; return nil })
	if _, _, err := execute(gen, "", "--model", "m"); err != nil {
		t.Fatal(err)
	}
	if gotGen.Sampling.StopIDs != nil {
		t.Errorf("no --stop: stop ids %v, want nil (the model's eos)", gotGen.Sampling.StopIDs)
	}
	for _, args := range [][]string{{"--out", "d"}, {"--config", "tiny"}} {
		c := newModelInitCmd(func(context.Context, *modelInitOptions) error { return nil })
		if _, _, err := execute(c, "", args...); err == nil {
			t.Errorf("model init %v: no error for a missing required flag", args)
		}
	}
}

func TestModelInitForwardGenerate(t *testing.T) {
	dir := t.TempDir()
	model := filepath.Join(dir, "tiny")
	mustRunCLI(t, "model", "init", "--config", "tiny", "--out", model, "--seed", "1")
	in := filepath.Join(dir, "in.jsonl")
	os.WriteFile(in, []byte("{\"input_ids\": [1, 2, 3], \"id\": \"a\", \"tag\": \"<|im_end|>\"}\n{\"input_ids\": [4]}\n"), 0o644)
	out := filepath.Join(dir, "out.jsonl")
	mustRunCLI(t, "forward", "--model", model, "--in", in, "--out", out, "--backend", backendtest.Kind())
	// The input's fields come first, in their order and with their bytes, unescaped.
	const kept = `{"input_ids":[1, 2, 3],"id":"a","tag":"<|im_end|>",`
	if b, _ := os.ReadFile(out); !strings.HasPrefix(string(b), kept+`"logits_last":[`) {
		t.Errorf("forward output starts %.80q, want %q", b, kept+`"logits_last":[`)
	}
	lines := readLines(t, out)
	if len(lines) != 2 || lines[0]["id"] != "a" || len(lines[0]["logits_last"].([]any)) != 300 {
		t.Fatalf("forward output %v", lines)
	}
	mustRunCLI(t, "generate", "--model", model, "--in", in, "--out", out, "--backend", backendtest.Kind(), "--max-new-tokens", "5",
		"--temperature", "1", "--seed", "3", "--stop=")
	if b, _ := os.ReadFile(out); !strings.HasPrefix(string(b), kept+`"output_ids":[`) {
		t.Errorf("generate output starts %.80q, want %q", b, kept+`"output_ids":[`)
	}
	lines = readLines(t, out)
	for _, l := range lines {
		if len(l["output_ids"].([]any)) != 5 || l["finish_reason"] != "length" || len(l["output_logprobs"].([]any)) != 5 {
			t.Errorf("generate output %v", l)
		}
	}
	// Text prompts go through the model folder's tokenizer.json; "text" is the decoded output.
	if err := tokenizer.NewBytes().Save(filepath.Join(model, "tokenizer.json")); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(in, []byte("{\"prompt\": \"1+1=\"}\n"), 0o644)
	mustRunCLI(t, "generate", "--model", model, "--in", in, "--out", out, "--backend", backendtest.Kind(), "--max-new-tokens", "4", "--stop=")
	lines = readLines(t, out)
	ids := lines[0]["output_ids"].([]any)
	var want []int
	for _, id := range ids {
		want = append(want, int(id.(float64)))
	}
	if text, ok := lines[0]["text"].(string); !ok || text != tokenizer.NewBytes().Decode(want, true) {
		t.Errorf("generate from text: %v", lines[0])
	}
	// A bad line names the file, the line and the field.
	os.WriteFile(in, []byte("{\"input_ids\": [1]}\n{\"input_ids\": [1, 999]}\n"), 0o644)
	_, _, err := runCLI(t, "", "forward", "--model", model, "--in", in, "--backend", backendtest.Kind())
	if err == nil || !strings.Contains(err.Error(), in+":2") || !strings.Contains(err.Error(), "input_ids") {
		t.Errorf("bad id: %v", err)
	}
}

// TestForwardCommandMatchesTransformers runs `mathrl forward` on the tiny
// Hugging Face checkpoint and on one `mathrl model init` writes in another
// shape (GQA, head_dim != hidden/heads, untied embeddings), on the test
// backend, and compares with transformers' logits computed live: within 1e-5
// of the largest logit.
func TestForwardCommandMatchesTransformers(t *testing.T) {
	seqs := [][]int32{{1, 5, 9, 2, 7, 3, 30, 12, 8, 14, 6}, {4, 4, 11}}
	for name, dir := range parityCheckpoints(t) {
		in := filepath.Join(t.TempDir(), "in.jsonl")
		writeIDLines(t, in, seqs)
		lines := readLines(t, writeForward(t, dir, in))
		want := hfref.Logits(t, dir, seqs)
		for i, l := range lines {
			row := want[i][len(seqs[i])-1]
			scale := 0.0
			for _, v := range row {
				scale = math.Max(scale, math.Abs(v))
			}
			for k, v := range l["logits_last"].([]any) {
				if d := math.Abs(v.(float64) - row[k]); d > 1e-5*scale {
					t.Fatalf("%s, sequence %d, logit %d: %g, transformers %g", name, i, k, v, row[k])
				}
			}
		}
	}
}

// TestGenerateCommandMatchesTransformers runs `mathrl generate` greedily (the
// sampler with its KV cache) and compares with transformers' greedy
// `generate`, computed live.
func TestGenerateCommandMatchesTransformers(t *testing.T) {
	prompts := [][]int32{{1, 5, 9, 2, 7}, {4, 4, 11, 3, 8, 16, 2}}
	const n = 20
	for name, dir := range parityCheckpoints(t) {
		in, out := filepath.Join(t.TempDir(), "in.jsonl"), filepath.Join(t.TempDir(), "out.jsonl")
		writeIDLines(t, in, prompts)
		mustRunCLI(t, "generate", "--model", dir, "--in", in, "--out", out, "--backend", backendtest.Kind(),
			"--temperature", "0", "--max-new-tokens", strconv.Itoa(n), "--stop=")
		want := hfref.Greedy(t, dir, prompts, n)
		for i, l := range readLines(t, out) {
			var got []int32
			for _, id := range l["output_ids"].([]any) {
				got = append(got, int32(id.(float64)))
			}
			if !reflect.DeepEqual(got, want[i]) {
				t.Errorf("%s, prompt %d: mathrl generate %v, transformers %v", name, i, got, want[i])
			}
		}
	}
}

// parityCheckpoints are the tiny reference checkpoint and a random one in
// another shape, written by `mathrl model init`.
func parityCheckpoints(t *testing.T) map[string]string {
	t.Helper()
	wide := filepath.Join(t.TempDir(), "wide")
	mustRunCLI(t, "model", "init", "--config", "tiny-wide-heads", "--out", wide, "--seed", "3")
	return map[string]string{"tiny-qwen3-hf": testenv.Model(t, "tiny-qwen3-hf"), "tiny-wide-heads": wide}
}

func writeIDLines(t *testing.T, path string, seqs [][]int32) {
	t.Helper()
	var b strings.Builder
	for _, s := range seqs {
		line, _ := json.Marshal(map[string]any{"input_ids": s})
		b.Write(append(line, '\n'))
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// writeForward runs `mathrl forward` on the test backend and returns its output file.
func writeForward(t *testing.T, dir, in string) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "out.jsonl")
	mustRunCLI(t, "forward", "--model", dir, "--in", in, "--out", out, "--backend", backendtest.Kind())
	return out
}

func readLines(t *testing.T, path string) []map[string]any {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatal(err)
		}
		out = append(out, m)
	}
	return out
}
