package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/mathrl/mathrl/gomlx_trainer/backend/backendtest"
	"github.com/mathrl/mathrl/gomlx_trainer/qwen3"
)

// TestModelUntie: `mathrl model untie` writes a tied checkpoint with
// tie_word_embeddings false and lm_head.weight, and `mathrl forward` gives
// the same output, byte for byte, from both.
func TestModelUntie(t *testing.T) {
	dir := t.TempDir()
	tied, untied := filepath.Join(dir, "tied"), filepath.Join(dir, "untied")
	mustRunCLI(t, "model", "init", "--config", "tiny", "--out", tied, "--seed", "1")
	mustRunCLI(t, "model", "untie", "--model", tied, "--out", untied)
	cfg, err := qwen3.LoadConfig(untied)
	if err != nil {
		t.Fatal(err)
	}
	ck, err := qwen3.OpenCheckpoint(untied)
	if err != nil {
		t.Fatal(err)
	}
	_, head := ck.Info("lm_head.weight")
	ck.Close()
	if cfg.TieEmbeddings || !head {
		t.Fatalf("untied: tie_word_embeddings %v, lm_head.weight present %v", cfg.TieEmbeddings, head)
	}
	in := filepath.Join(dir, "in.jsonl")
	os.WriteFile(in, []byte("{\"input_ids\": [1, 2, 3, 200, 17]}\n{\"input_ids\": [4, 258]}\n"), 0o644)
	var outs [][]byte
	for _, m := range []string{tied, untied} {
		out := filepath.Join(dir, filepath.Base(m)+".jsonl")
		mustRunCLI(t, "forward", "--model", m, "--in", in, "--out", out, "--backend", backendtest.Kind())
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		outs = append(outs, b)
	}
	if string(outs[0]) != string(outs[1]) {
		t.Errorf("mathrl forward differs between the tied checkpoint and its untied copy")
	}
}
