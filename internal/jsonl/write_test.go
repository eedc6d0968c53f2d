package jsonl

import (
	"encoding/json"
	"testing"
)

// writes counts the Write calls it gets and keeps their bytes.
type writes struct {
	n int
	b []byte
}

func (w *writes) Write(p []byte) (int, error) { w.n++; w.b = append(w.b, p...); return len(p), nil }

// TestWriteLine writes special tokens and HTML characters as they are, in one
// Write ending in a newline, and reads back as encoding/json wrote them.
func TestWriteLine(t *testing.T) {
	v := map[string]any{"text": "<|im_end|>\n<tool_call>a & b</tool_call>", "n": 1.5}
	var w writes
	if err := WriteLine(&w, v); err != nil {
		t.Fatal(err)
	}
	const want = `{"n":1.5,"text":"<|im_end|>\n<tool_call>a & b</tool_call>"}` + "\n"
	if string(w.b) != want || w.n != 1 {
		t.Errorf("WriteLine wrote %q in %d writes, want %q in one", w.b, w.n, want)
	}
	var back map[string]any
	if err := json.Unmarshal(w.b, &back); err != nil || back["text"] != v["text"] || back["n"] != v["n"] {
		t.Errorf("read back %v, %v; want %v", back, err, v)
	}
	if err := WriteLine(&w, func() {}); err == nil {
		t.Error("a func: no error")
	}
}
