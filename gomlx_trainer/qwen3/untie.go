package qwen3

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/gomlx/compute/dtypes"
)

// WriteUntied writes into dst the Hugging Face folder src (config.json and
// its safetensors) with its embeddings untied: every tensor as it is, plus
// lm_head.weight, a copy of model.embed_tokens.weight in its dtype, and
// tie_word_embeddings false in config.json (its other keys kept). The same
// model, for servers that cannot reload a tied head (vLLM 0.32's in-place
// reload keeps a tied lm_head at its old weights). A folder already untied
// (tie_word_embeddings false, or left out: Qwen3Config's default) is copied
// as it is.
func WriteUntied(src, dst string) error {
	data, err := os.ReadFile(filepath.Join(src, "config.json"))
	if err != nil {
		return fmt.Errorf("qwen3: untie: %w", err)
	}
	var raw map[string]any
	if err := json.Unmarshal(data, &raw); err != nil {
		return fmt.Errorf("qwen3: untie: %s: %w", filepath.Join(src, "config.json"), err)
	}
	ck, err := OpenCheckpoint(src)
	if err != nil {
		return err
	}
	defer ck.Close()
	embed, ok := ck.Info("model.embed_tokens.weight")
	if !ok {
		return fmt.Errorf("qwen3: untie %s: no model.embed_tokens.weight", src)
	}
	if tie, _ := raw["tie_word_embeddings"].(bool); !tie {
		return copyFolder(src, dst)
	}
	var list []WriteTensor
	read := func(name string) func() ([]float32, error) {
		return func() ([]float32, error) {
			t, err := ck.Read(name, dtypes.Float32)
			if err != nil {
				return nil, err
			}
			return Float32s(t)
		}
	}
	for _, name := range ck.Names() {
		if name == "lm_head.weight" { // a tied checkpoint's copy, if any, is ignored: the head is the embedding
			continue
		}
		info, _ := ck.Info(name)
		if info.DType != embed.DType {
			return fmt.Errorf("qwen3: untie %s: %s is %s, the embedding %s (one dtype a file)", src, name, info.DType, embed.DType)
		}
		list = append(list, WriteTensor{Name: name, Shape: info.Shape, Values: read(name)})
	}
	list = append(list, WriteTensor{Name: "lm_head.weight", Shape: embed.Shape, Values: read("model.embed_tokens.weight")})
	raw["tie_word_embeddings"] = false
	if data, err = json.MarshalIndent(raw, "", "  "); err != nil {
		return fmt.Errorf("qwen3: untie: %w", err)
	}
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return fmt.Errorf("qwen3: untie: %w", err)
	}
	if err := WriteSafetensors(filepath.Join(dst, "model.safetensors"), embed.DType, list); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dst, "config.json"), append(data, '\n'), 0o644); err != nil {
		return fmt.Errorf("qwen3: untie: %w", err)
	}
	return nil
}

// copyFolder copies the files of src (config.json, safetensors) into dst.
func copyFolder(src, dst string) error {
	entries, err := os.ReadDir(src)
	if err != nil {
		return fmt.Errorf("qwen3: untie: %w", err)
	}
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return fmt.Errorf("qwen3: untie: %w", err)
	}
	for _, e := range entries {
		if !e.Type().IsRegular() {
			continue
		}
		data, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			return fmt.Errorf("qwen3: untie: %w", err)
		}
		if err := os.WriteFile(filepath.Join(dst, e.Name()), data, 0o644); err != nil {
			return fmt.Errorf("qwen3: untie: %w", err)
		}
	}
	return nil
}

// UntiedName is the subfolder of a checkpoint folder that UntiedFolder
// writes its untied copy into.
const UntiedName = "untied"

// UntiedFolder is a folder of the model in the Hugging Face folder dir with
// its embeddings untied: dir itself when they are, else dir/untied, written
// once (WriteUntied, whole or not at all). The weights a vLLM server
// reloads in place (rollout_engine openai): its reload leaves a tied
// lm_head at the old embedding.
func UntiedFolder(dir string) (string, error) {
	cfg, err := LoadConfig(dir)
	if err != nil {
		return "", err
	}
	if !cfg.TieEmbeddings {
		return dir, nil
	}
	out := filepath.Join(dir, UntiedName)
	if _, err := os.Stat(filepath.Join(out, "config.json")); err == nil {
		return out, nil
	}
	tmp := out + ".tmp"
	if err := os.RemoveAll(tmp); err != nil {
		return "", fmt.Errorf("qwen3: untie: %w", err)
	}
	if err := WriteUntied(dir, tmp); err != nil {
		os.RemoveAll(tmp)
		return "", err
	}
	if err := os.Rename(tmp, out); err != nil {
		return "", fmt.Errorf("qwen3: untie: %w", err)
	}
	return out, nil
}
