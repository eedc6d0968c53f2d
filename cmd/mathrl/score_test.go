package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestNewScoreCmd(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want scoreOptions
		err  string
	}{
		{[]string{"--scorer", "math"}, scoreOptions{Scorer: "math", In: "-", Out: "-"}, ""},
		{[]string{"--scorer", "dapo", "--in", "a.jsonl", "--out", "b.jsonl", "--workers", "3"}, scoreOptions{Scorer: "dapo", In: "a.jsonl", Out: "b.jsonl", Workers: 3}, ""},
		{[]string{"--scorer", "boxed_deepscaler"}, scoreOptions{Scorer: "boxed_deepscaler", In: "-", Out: "-"}, ""},
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
		got.Stderr = nil
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
	if err := runScore(context.Background(), &scoreOptions{Scorer: "dapo", In: in, Out: out, Stderr: &stderr}); err != nil {
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
