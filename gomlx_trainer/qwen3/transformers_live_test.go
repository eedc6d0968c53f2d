package qwen3

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/gomlx/compute/dtypes"

	"github.com/mathrl/mathrl/gomlx_trainer/backend/backendtest"
	"github.com/mathrl/mathrl/internal/hfref"
)

// TestLogitsMatchTransformersLive computes, live, transformers' logits at every
// position for the tiny reference checkpoint and for a random checkpoint that
// mathrl writes in another shape (GQA, head_dim != hidden/heads, untied
// embeddings), and compares the graph's logits on the test backend: within
// 1e-5 of each row's largest, the parity bound.
func TestLogitsMatchTransformersLive(t *testing.T) {
	ref, _ := loadReference(t)
	wide := t.TempDir()
	if err := WriteRandom(wideHeads, wide, "F32", 11); err != nil {
		t.Fatal(err)
	}
	b := backendtest.New(t)
	for name, dir := range map[string]string{"tiny-qwen3-hf": ref, "wide-heads": wide} {
		m, err := Load(dir, dtypes.Float32)
		if err != nil {
			t.Fatal(err)
		}
		ids := [][]int32{{1, 5, 9, 2, 7, 3, 30, 12, 8}, {4, 4, 11, 0, 6, 21, 13, 2, 9}}
		want := hfref.Logits(t, dir, ids)
		got := logitsOf(t, b, m, ids)
		worst := 0.0
		for r := range want {
			for p := range want[r] {
				worst = max(worst, relErr(got[r][p], want[r][p]))
			}
		}
		t.Logf("%s on %s: logits against transformers, max error relative to the row's largest %.2e", name, b.String(), worst)
		if worst > 1e-5 {
			t.Errorf("%s: logits differ from transformers' by %.2e of the row's largest", name, worst)
		}
	}
}

// TestConfigWithoutTieMatchesTransformersLive writes the untied wide-heads
// checkpoint with a config.json that leaves tie_word_embeddings out, as
// Qwen3's own configs do when they keep a separate lm_head, and compares the
// logits with transformers', which reads the key's default (Qwen3Config's).
func TestConfigWithoutTieMatchesTransformersLive(t *testing.T) {
	dir := t.TempDir()
	if err := WriteRandom(wideHeads, dir, "F32", 13); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "config.json")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var raw map[string]any
	if err := json.Unmarshal(data, &raw); err != nil {
		t.Fatal(err)
	}
	delete(raw, "tie_word_embeddings")
	if data, err = json.Marshal(raw); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	m, err := Load(dir, dtypes.Float32)
	if err != nil {
		t.Fatal(err)
	}
	ids := [][]int32{{1, 5, 9, 2, 7, 3, 30, 12, 8}}
	want := hfref.Logits(t, dir, ids)
	got := logitsOf(t, backendtest.New(t), m, ids)
	for p := range want[0] {
		if e := relErr(got[0][p], want[0][p]); e > 1e-5 {
			t.Fatalf("position %d: logits differ from transformers' by %.2e of the row's largest (tied: %v)", p, e, m.Config.TieEmbeddings)
		}
	}
}

// TestGreedyMatchesTransformersLive runs transformers' greedy generate on the
// wide-heads checkpoint and compares GreedyNoCache's continuation.
func TestGreedyMatchesTransformersLive(t *testing.T) {
	dir := t.TempDir()
	if err := WriteRandom(wideHeads, dir, "F32", 5); err != nil {
		t.Fatal(err)
	}
	m, err := Load(dir, dtypes.Float32)
	if err != nil {
		t.Fatal(err)
	}
	prompt := []int32{3, 17, 1, 39, 5}
	want := hfref.Greedy(t, dir, [][]int32{prompt}, 12)[0]
	ids := make([]int, len(prompt))
	for i, id := range prompt {
		ids[i] = int(id)
	}
	got := GreedyNoCache(t, backendtest.New(t), m, ids, 12)[len(prompt):]
	if len(got) != len(want) {
		t.Fatalf("greedy continuation %v, transformers %v", got, want)
	}
	for i := range want {
		if int(want[i]) != got[i] {
			t.Fatalf("greedy continuation %v, transformers %v", got, want)
		}
	}
}
