package main

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/mathrl/mathrl/gomlx_trainer/sampler"
	"github.com/mathrl/mathrl/gomlx_trainer/tokenizer"
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
	mustRunCLI(t, "forward", "--model", model, "--in", in, "--out", out, "--backend", "cpu")
	// The input's fields come first, in their order and with their bytes, unescaped.
	const kept = `{"input_ids":[1, 2, 3],"id":"a","tag":"<|im_end|>",`
	if b, _ := os.ReadFile(out); !strings.HasPrefix(string(b), kept+`"logits_last":[`) {
		t.Errorf("forward output starts %.80q, want %q", b, kept+`"logits_last":[`)
	}
	lines := readLines(t, out)
	if len(lines) != 2 || lines[0]["id"] != "a" || len(lines[0]["logits_last"].([]any)) != 300 {
		t.Fatalf("forward output %v", lines)
	}
	mustRunCLI(t, "generate", "--model", model, "--in", in, "--out", out, "--backend", "cpu", "--max-new-tokens", "5",
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
	mustRunCLI(t, "generate", "--model", model, "--in", in, "--out", out, "--backend", "cpu", "--max-new-tokens", "4", "--stop=")
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
	_, _, err := runCLI(t, "", "forward", "--model", model, "--in", in, "--backend", "cpu")
	if err == nil || !strings.Contains(err.Error(), in+":2") || !strings.Contains(err.Error(), "input_ids") {
		t.Errorf("bad id: %v", err)
	}
}

// TestForwardCommandMatchesTransformers runs `mathrl forward` on the tiny
// Hugging Face checkpoint and compares with transformers' logits.
func TestForwardCommandMatchesTransformers(t *testing.T) {
	dir := testenv.Model(t, "tiny-qwen3-hf")
	data, err := os.ReadFile(filepath.Join(dir, "reference.json"))
	if err != nil {
		t.Fatal(err)
	}
	var ref struct {
		InputIDs   [][]int     `json:"input_ids"`
		LogitsLast [][]float64 `json:"logits_last"`
	}
	json.Unmarshal(data, &ref)
	line, _ := json.Marshal(map[string]any{"input_ids": ref.InputIDs[0]})
	in := filepath.Join(t.TempDir(), "in.jsonl")
	os.WriteFile(in, append(line, '\n'), 0o644)
	out := mustRunCLI(t, "forward", "--model", dir, "--in", in, "--backend", "cpu")
	var got struct {
		LogitsLast []float64 `json:"logits_last"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	scale := 0.0
	for _, v := range ref.LogitsLast[0] {
		scale = math.Max(scale, math.Abs(v))
	}
	for i, want := range ref.LogitsLast[0] {
		if math.Abs(got.LogitsLast[i]-want) > 1e-4*scale {
			t.Fatalf("logit %d: %g, transformers %g", i, got.LogitsLast[i], want)
		}
	}
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
