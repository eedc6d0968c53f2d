package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/mathrl/mathrl/internal/jsonl"
)

func TestNewScoreCmd(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want scoreOptions
		err  string
	}{
		{[]string{"--scorer", "math"}, scoreOptions{Scorer: "math", Files: jsonl.Files{In: "-", Out: "-"}}, ""},
		{[]string{"--scorer", "dapo", "--in", "a.jsonl", "--out", "b.jsonl", "--workers", "3"}, scoreOptions{Scorer: "dapo", Files: jsonl.Files{In: "a.jsonl", Out: "b.jsonl"}, Workers: 3}, ""},
		{[]string{"--scorer", "boxed_deepscaler"}, scoreOptions{Scorer: "boxed_deepscaler", Files: jsonl.Files{In: "-", Out: "-"}}, ""},
		{[]string{"--scorer", "f1"}, scoreOptions{}, "unknown scorer"},
		{nil, scoreOptions{}, "scorer"},
	} {
		var got *scoreOptions
		_, _, err := execute(newScoreCmd(func(_ context.Context, o *scoreOptions) error { got = o; return nil }), "", tc.args...)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("score %q: err = %v, want %q", tc.args, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("score %q: %v", tc.args, err)
		}
		got.Stdin, got.Stdout, got.Stderr = nil, nil, nil
		if !reflect.DeepEqual(*got, tc.want) {
			t.Errorf("score %q: options %+v, want %+v", tc.args, *got, tc.want)
		}
	}
}

func TestScoreRun(t *testing.T) {
	dir := t.TempDir()
	in, out := filepath.Join(dir, "in.jsonl"), filepath.Join(dir, "out.jsonl")
	os.WriteFile(in, []byte(`{"id":1,"response":"Answer: 42","label":"42"}`+"\n"+`{"id":2,"response":"Answer: 1","label":"\\frac12"}`+"\n"), 0o644)
	var stderr bytes.Buffer
	if err := runScore(context.Background(), &scoreOptions{Scorer: "dapo", Files: jsonl.Files{In: in, Out: out}, Stderr: &stderr}); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(out)
	lines := strings.Split(strings.TrimSpace(string(got)), "\n")
	if len(lines) != 2 || lines[0] != `{"id":1,"response":"Answer: 42","label":"42","score":1}` ||
		!strings.HasPrefix(lines[1], `{"id":2,"response":"Answer: 1","label":"\\frac12","error":"scorer: dapo: label`) {
		t.Errorf("output:\n%s", got)
	}
	if !strings.Contains(stderr.String(), "scored 2 lines with dapo: 1 positive, 1 errors") {
		t.Errorf("stderr: %q", stderr.String())
	}
}

// TestScoreReadsCommandInput runs `mathrl score` on the command's own standard
// streams (cobra's SetIn and SetOut), not the process's.
func TestScoreReadsCommandInput(t *testing.T) {
	in := `{"id":1,"response":"so \\boxed{<|im_end|>}","label":"x"}` + "\n" + `{"b":2,"response":"\\boxed{42}","label":42}` + "\n"
	stdout, stderr, err := runCLI(t, in, "score", "--scorer", "math")
	if err != nil {
		t.Fatalf("mathrl score: %v\n%s", err, stderr)
	}
	want := `{"id":1,"response":"so \\boxed{<|im_end|>}","label":"x","score":0}` + "\n" + `{"b":2,"response":"\\boxed{42}","label":42,"score":1}` + "\n"
	if stdout != want {
		t.Errorf("stdout:\n%s\nwant\n%s", stdout, want)
	}
	if !strings.Contains(stderr, "scored 2 lines with math: 1 positive, 0 errors") {
		t.Errorf("stderr: %q", stderr)
	}
}
