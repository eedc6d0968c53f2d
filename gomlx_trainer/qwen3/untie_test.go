package qwen3

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/gomlx/compute/dtypes"
)

// tiedCheckpoint writes a random tiny checkpoint with tied embeddings in
// dtype into dir and returns its config.
func tiedCheckpoint(t *testing.T, dir, dtype string) Config {
	t.Helper()
	cfg, err := NamedConfig("tiny")
	if err != nil {
		t.Fatal(err)
	}
	cfg.TieEmbeddings = true
	if err := WriteRandom(cfg, dir, dtype, 1); err != nil {
		t.Fatal(err)
	}
	return cfg
}

// readAll reads every tensor of the checkpoint in dir as float32s, with
// each one's stored dtype.
func readAll(t *testing.T, dir string) (map[string][]float32, map[string]string) {
	t.Helper()
	ck, err := OpenCheckpoint(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer ck.Close()
	values, stored := map[string][]float32{}, map[string]string{}
	for _, name := range ck.Names() {
		tensor, err := ck.Read(name, dtypes.Float32)
		if err != nil {
			t.Fatal(err)
		}
		if values[name], err = Float32s(tensor); err != nil {
			t.Fatal(err)
		}
		info, _ := ck.Info(name)
		stored[name] = info.DType
	}
	return values, stored
}

// TestWriteUntied: a tied BF16 checkpoint that also stores a stale
// lm_head.weight and a config key mathrl does not read is written untied:
// tie_word_embeddings false and the other key kept, every tensor as it is
// and in BF16, and lm_head.weight the embedding (not the stale copy).
func TestWriteUntied(t *testing.T) {
	dir := t.TempDir()
	tied, untied := filepath.Join(dir, "tied"), filepath.Join(dir, "untied")
	cfg := tiedCheckpoint(t, tied, "BF16")
	values, _ := readAll(t, tied)
	var list []WriteTensor
	for name, v := range values {
		shape := []int{}
		for _, spec := range cfg.Tensors() {
			if spec.Name == name {
				shape = spec.Shape
			}
		}
		list = append(list, WriteTensor{Name: name, Shape: shape, Values: func() ([]float32, error) { return v, nil }})
	}
	stale := make([]float32, len(values["model.embed_tokens.weight"]))
	for i := range stale {
		stale[i] = 0.5
	}
	list = append(list, WriteTensor{Name: "lm_head.weight", Shape: []int{cfg.VocabSize, cfg.Hidden},
		Values: func() ([]float32, error) { return stale, nil }})
	if err := WriteSafetensors(filepath.Join(tied, "model.safetensors"), "BF16", list); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(tied, "config.json"))
	if err != nil {
		t.Fatal(err)
	}
	var raw map[string]any
	if err := json.Unmarshal(data, &raw); err != nil {
		t.Fatal(err)
	}
	raw["transformers_version"] = "4.51.0"
	if data, err = json.Marshal(raw); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(tied, "config.json"), data, 0o644); err != nil {
		t.Fatal(err)
	}

	if err := WriteUntied(tied, untied); err != nil {
		t.Fatal(err)
	}
	if data, err = os.ReadFile(filepath.Join(untied, "config.json")); err != nil {
		t.Fatal(err)
	}
	raw = nil
	if err := json.Unmarshal(data, &raw); err != nil {
		t.Fatal(err)
	}
	if raw["tie_word_embeddings"] != false || raw["transformers_version"] != "4.51.0" {
		t.Errorf("untied config.json: tie_word_embeddings %v, transformers_version %v; want false and 4.51.0 kept",
			raw["tie_word_embeddings"], raw["transformers_version"])
	}
	got, stored := readAll(t, untied)
	if len(got) != len(values)+1 {
		t.Errorf("%d tensors untied, want the %d of the tied checkpoint and lm_head.weight", len(got), len(values))
	}
	for name, dtype := range stored {
		if dtype != "BF16" {
			t.Errorf("%s stored as %s, want the checkpoint's BF16", name, dtype)
		}
	}
	for name, v := range values {
		if !slices.Equal(got[name], v) {
			t.Errorf("%s changed in the untied copy", name)
		}
	}
	if !slices.Equal(got["lm_head.weight"], values["model.embed_tokens.weight"]) {
		t.Errorf("the untied lm_head.weight is not the embedding")
	}
}

// TestUntiedFolder: an untied checkpoint is its own untied folder, with
// nothing written into it; a tied one's is dir/untied, written at the first
// call and returned as it is at the next, with no temporary folder left.
func TestUntiedFolder(t *testing.T) {
	dir := t.TempDir()
	tied, untied := filepath.Join(dir, "tied"), filepath.Join(dir, "untied")
	tiedCheckpoint(t, tied, "F32")
	if err := WriteUntied(tied, untied); err != nil {
		t.Fatal(err)
	}
	if got, err := UntiedFolder(untied); err != nil || got != untied {
		t.Errorf("UntiedFolder(untied) = %q, %v; want the folder itself", got, err)
	}
	if _, err := os.Stat(filepath.Join(untied, UntiedName)); !os.IsNotExist(err) {
		t.Errorf("UntiedFolder wrote into an untied folder (%v)", err)
	}
	want := filepath.Join(tied, UntiedName)
	for range 2 {
		if got, err := UntiedFolder(tied); err != nil || got != want {
			t.Fatalf("UntiedFolder(tied) = %q, %v; want %s", got, err, want)
		}
	}
	entries, err := os.ReadDir(tied)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if !slices.Equal(names, []string{"config.json", "model.safetensors", UntiedName}) {
		t.Errorf("the tied checkpoint holds %v, want its files and %s", names, UntiedName)
	}
	if cfg, err := LoadConfig(want); err != nil || cfg.TieEmbeddings {
		t.Errorf("%s: tie_word_embeddings %v, %v; want false", want, cfg.TieEmbeddings, err)
	}
}
