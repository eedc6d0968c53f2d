package tokenizer

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// badTokenizerFiles are malformed tokenizer.json files, built from
// NewBytes()'s, and what the one error must say.
func badTokenizerFiles(t testing.TB) []struct{ name, file, want string } {
	var good bytes.Buffer
	if err := NewBytes().WriteJSON(&good); err != nil {
		t.Fatal(err)
	}
	g := good.String()
	edit := func(change func(m map[string]any)) string {
		var m map[string]any
		if err := json.Unmarshal(good.Bytes(), &m); err != nil {
			t.Fatal(err)
		}
		change(m)
		b, _ := json.Marshal(m)
		return string(b)
	}
	vocab := func(m map[string]any) map[string]any { return m["model"].(map[string]any)["vocab"].(map[string]any) }
	return []struct{ name, file, want string }{
		{"empty file", "", "not a tokenizer.json"},
		{"truncated", g[:len(g)/2], "not a tokenizer.json: unexpected end of JSON input"},
		{"not an object", "[1, 2]", "not a tokenizer.json"},
		{"vocab a list", edit(func(m map[string]any) { m["model"].(map[string]any)["vocab"] = []any{"a"} }), "not a tokenizer.json"},
		{"id a string", edit(func(m map[string]any) { vocab(m)["zz"] = "7" }), "not a tokenizer.json"},
		{"id a fraction", edit(func(m map[string]any) { vocab(m)["zz"] = 7.5 }), "not a tokenizer.json"},
		{"id past 2^63", strings.Replace(g, `"Ā": 0`, `"Ā": 1e400`, 1), "not a tokenizer.json"},
		{"negative id", edit(func(m map[string]any) { vocab(m)["zz"] = -1 }), `vocab entry "zz": id -1 is outside`},
		{"huge id", edit(func(m map[string]any) { vocab(m)["zz"] = 1 << 30 }), `vocab entry "zz": id 1073741824 is outside 0..`},
		{"huge added id", edit(func(m map[string]any) { m["added_tokens"].([]any)[0].(map[string]any)["id"] = 1 << 29 }), "id 536870912 is outside"},
		{"added token not a list", edit(func(m map[string]any) { m["added_tokens"] = map[string]any{} }), "not a tokenizer.json"},
		{"merges of numbers", edit(func(m map[string]any) { m["model"].(map[string]any)["merges"] = []any{1} }), "merge"},
	}
}

// TestParseBadFiles checks that each malformed tokenizer.json gives one
// error, prefixed by the package and saying what is wrong; and no panic.
func TestParseBadFiles(t *testing.T) {
	for _, tc := range badTokenizerFiles(t) {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.file))
			if err == nil || !strings.HasPrefix(err.Error(), "tokenizer: ") || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Parse: err = %v, want one saying %q", err, tc.want)
			}
		})
	}
}

// FuzzParse parses arbitrary tokenizer.json files: no panic, errors prefixed
// by the package, and what is accepted encodes and decodes text back.
func FuzzParse(f *testing.F) {
	var good bytes.Buffer
	if err := NewBytes().WriteJSON(&good); err != nil {
		f.Fatal(err)
	}
	f.Add(good.String())
	for _, tc := range badTokenizerFiles(f) {
		f.Add(tc.file)
	}
	f.Fuzz(func(t *testing.T, file string) {
		tok, err := Parse([]byte(file))
		if err != nil {
			if !strings.HasPrefix(err.Error(), "tokenizer: ") {
				t.Fatalf("error %q is not prefixed by the package", err)
			}
			return
		}
		const text = "Find $x^2$ in 3 steps: héllo 😀"
		if got := tok.Decode(tok.Encode(text), false); got != text {
			t.Fatalf("Decode(Encode(%q)) = %q", text, got)
		}
	})
}
