package tokenizer

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// bytesJSON returns NewBytes() as a decoded tokenizer.json.
func bytesJSON(t *testing.T) map[string]any {
	var b bytes.Buffer
	if err := NewBytes().WriteJSON(&b); err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b.Bytes(), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestParseRefusesOtherKinds(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(m map[string]any)
		want   string
	}{
		{"WordPiece model", func(m map[string]any) { m["model"].(map[string]any)["type"] = "WordPiece" }, `model type "WordPiece"`},
		{"Unigram model", func(m map[string]any) { m["model"].(map[string]any)["type"] = "Unigram" }, `model type "Unigram"`},
		{"byte fallback", func(m map[string]any) { m["model"].(map[string]any)["byte_fallback"] = true }, "byte_fallback"},
		{"dropout", func(m map[string]any) { m["model"].(map[string]any)["dropout"] = 0.1 }, "dropout"},
		{"subword prefix", func(m map[string]any) { m["model"].(map[string]any)["continuing_subword_prefix"] = "##" }, "continuing_subword_prefix"},
		{"NFKC", func(m map[string]any) { m["normalizer"] = map[string]any{"type": "NFKC"} }, "normalizer"},
		{"Metaspace", func(m map[string]any) { m["pre_tokenizer"] = map[string]any{"type": "Metaspace"} }, "pre_tokenizer"},
		{"GPT-2 ByteLevel", func(m map[string]any) {
			m["pre_tokenizer"] = map[string]any{"type": "ByteLevel", "add_prefix_space": false, "use_regex": true}
		}, "pre_tokenizer"},
		{"other regex", func(m map[string]any) {
			m["pre_tokenizer"].(map[string]any)["pretokenizers"].([]any)[0].(map[string]any)["pattern"] = map[string]any{"Regex": `\s+`}
		}, "pre_tokenizer"},
		{"WordPiece decoder", func(m map[string]any) { m["decoder"] = map[string]any{"type": "WordPiece"} }, "decoder"},
		{"BOS template", func(m map[string]any) { m["post_processor"] = map[string]any{"type": "TemplateProcessing"} }, "post_processor"},
		{"truncation", func(m map[string]any) { m["truncation"] = map[string]any{"max_length": 10} }, "truncation"},
		{"lstrip", func(m map[string]any) { m["added_tokens"].([]any)[0].(map[string]any)["lstrip"] = true }, "lstrip"},
		{"missing byte", func(m map[string]any) { delete(m["model"].(map[string]any)["vocab"].(map[string]any), "Ġ") }, "byte 0x20"},
		{"bad merge", func(m map[string]any) { m["model"].(map[string]any)["merges"] = []any{[]any{"a", "b"}} }, "merge 0"},
		{"added id", func(m map[string]any) { m["added_tokens"].([]any)[0].(map[string]any)["id"] = 300 }, "gives it id 256"},
		{"bad merge line", func(m map[string]any) { m["model"].(map[string]any)["merges"] = []any{"a b c"} }, "merge 0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := bytesJSON(t)
			tc.change(m)
			data, _ := json.Marshal(m)
			_, err := Parse(data)
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "tokenizer: ") {
				t.Errorf("Parse: err = %v, want one mentioning %q", err, tc.want)
			}
		})
	}
	if _, err := Parse([]byte("not json")); err == nil {
		t.Error("Parse(not json) succeeded")
	}
	dir := t.TempDir()
	if _, err := Load(filepath.Join(dir, "missing.json")); err == nil {
		t.Error("Load of a missing file succeeded")
	}
	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(bad, []byte(`{"model": {"type": "WordLevel"}}`), 0o644)
	if _, err := Load(bad); err == nil || !strings.Contains(err.Error(), bad) {
		t.Errorf("Load error %v does not name the file", err)
	}
}

// TestSmallMerges builds a small BPE vocabulary, writes its merges in both
// formats ("a b" and ["a", "b"]) and checks the encodings against Hugging Face.
func TestSmallMerges(t *testing.T) {
	merges := [][2]string{{"Ġ", "t"}, {"h", "e"}, {"Ġt", "he"}, {"i", "n"}, {"in", "g"}, {"Ġ", "Ġ"}, {"ĠĠ", "ĠĠ"},
		{"e", "r"}, {"Ġ", "a"}, {"o", "n"}, {"Ġa", "n"}, {"Ġan", "d"}, {"r", "e"}, {"Ċ", "Ċ"}, {"ä", "¸"}, {"å", "¤"}, {"1", "2"}}
	for _, form := range []string{"pairs", "lines"} {
		m := bytesJSON(t)
		model := m["model"].(map[string]any)
		vocab := model["vocab"].(map[string]any)
		next := 256 // the added tokens move up after the merged tokens
		var list []any
		for _, mg := range merges {
			if _, ok := vocab[mg[0]+mg[1]]; !ok {
				vocab[mg[0]+mg[1]] = next
				next++
			}
			if form == "pairs" {
				list = append(list, []any{mg[0], mg[1]})
			} else {
				list = append(list, mg[0]+" "+mg[1])
			}
		}
		model["merges"] = list
		for _, a := range m["added_tokens"].([]any) {
			a.(map[string]any)["id"] = float64(next)
			next++
		}
		data, _ := json.Marshal(m)
		path := filepath.Join(t.TempDir(), "small.json")
		os.WriteFile(path, data, 0o644)
		tok, err := Load(path)
		if err != nil {
			t.Fatal(err)
		}
		n := compareEncode(t, tok, path, append(append([]string{}, handWritten...), fuzzCorpus(6, 300)...))
		t.Logf("%s: %d strings match", form, n)
		if got := fmt.Sprint(tok.Encode("the thing and 12")); got == fmt.Sprint(NewBytes().Encode("the thing and 12")) {
			t.Errorf("merges were not applied: %s", got)
		}
	}
}
