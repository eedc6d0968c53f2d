package jsonl

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// addN is a JSONL filter: each object gets "n", its line number.
func addN(r io.Reader, name string, w io.Writer) error {
	return Read(r, name, func(line int, raw []byte) error {
		o, err := ParseOrdered(raw)
		if err != nil {
			return err
		}
		if err := o.Set("n", line); err != nil {
			return err
		}
		return o.WriteLine(w)
	})
}

func TestFilesRun(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.jsonl")
	os.WriteFile(good, []byte(`{"t":"<|im_end|>"}`+"\n"+`{"b":1,"a":2}`+"\n"), 0o644)
	const want = `{"t":"<|im_end|>","n":1}` + "\n" + `{"b":1,"a":2,"n":2}` + "\n"
	for _, tc := range []struct{ name, in, stdin, out string }{
		{"file to file", good, "", filepath.Join(dir, "sub", "out.jsonl")},
		{"- to -", "-", `{"t":"<|im_end|>"}` + "\n" + `{"b":1,"a":2}` + "\n", "-"},
		{"empty names are the streams", "", `{"t":"<|im_end|>"}` + "\n" + `{"b":1,"a":2}` + "\n", ""},
		{"file to stdout", good, "", "-"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stdout strings.Builder
			f := Files{In: tc.in, Out: tc.out, Stdin: strings.NewReader(tc.stdin), Stdout: &stdout}
			if err := f.Run(addN); err != nil {
				t.Fatal(err)
			}
			got := stdout.String()
			if !isStd(tc.out) {
				b, err := os.ReadFile(tc.out)
				if err != nil {
					t.Fatal(err)
				}
				got = string(b)
			}
			if got != want {
				t.Errorf("output %q, want %q", got, want)
			}
		})
	}
}

// A malformed line stops the run with an error naming the file and the line,
// and leaves no output file (and no temporary file) behind.
func TestFilesRunFailureLeavesNoFile(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.jsonl")
	os.WriteFile(in, []byte(`{"a":1}`+"\n\n"+`"a"`+"\n"), 0o644)
	out := filepath.Join(dir, "out.jsonl")
	err := Files{In: in, Out: out}.Run(addN)
	var je *Error
	if !errors.As(err, &je) || je.Name != in || je.Line != 3 || !strings.HasPrefix(err.Error(), in+":3: not a JSON object") {
		t.Fatalf("err = %v, want %s line 3", err, in)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("files left: %v, want only in.jsonl", entries)
	}
	if err := (Files{In: filepath.Join(dir, "none.jsonl"), Out: out}).Run(addN); err == nil || !strings.Contains(err.Error(), "none.jsonl") {
		t.Errorf("missing input: err = %v, want one naming it", err)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("a failed run left %s", out)
	}
}

// Lines written to standard output before a bad line are not lost.
func TestFilesRunStdoutKeepsLinesBeforeError(t *testing.T) {
	var stdout strings.Builder
	err := Files{Stdin: strings.NewReader(`{"a":1}` + "\n" + `[2]` + "\n"), Stdout: &stdout}.Run(addN)
	if err == nil || !strings.HasPrefix(err.Error(), "-:2: not a JSON object") {
		t.Errorf("err = %v, want -:2", err)
	}
	if got := stdout.String(); got != `{"a":1,"n":1}`+"\n" {
		t.Errorf("stdout %q", got)
	}
	if err := (Files{}).Run(addN); err == nil {
		t.Error("no stdin given: no error")
	}
}
