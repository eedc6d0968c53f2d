package jsonl

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
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

// versioned is a line with a version that WriteValid's defaults fill and a
// value that must not be negative.
type versioned struct {
	V int `json:"v"`
	X int `json:"x"`
}

func (l versioned) Validate() error {
	if l.X < 0 {
		return errors.New("x is negative")
	}
	return nil
}

// TestWriteValid checks that WriteValid fills defaults, leaves the caller's
// lines as they were, and stops at the first invalid line with its name.
func TestWriteValid(t *testing.T) {
	lines := []versioned{{X: 1}, {V: 7, X: 2}, {X: -1}, {X: 3}}
	var w writes
	err := WriteValid(&w, lines, func(l *versioned) { l.V = cmp.Or(l.V, 1) },
		func(i int, l versioned) string { return fmt.Sprintf("line %d (x %d)", i, l.X) })
	if err == nil || err.Error() != "line 2 (x -1): x is negative" {
		t.Errorf("error %v, want line 2 (x -1): x is negative", err)
	}
	if want := "{\"v\":1,\"x\":1}\n{\"v\":7,\"x\":2}\n"; string(w.b) != want {
		t.Errorf("wrote %q, want %q", w.b, want)
	}
	if lines[0].V != 0 {
		t.Errorf("the caller's line changed: %+v", lines[0])
	}
}
