package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/mathrl/mathrl/analysis/scorer"
	"github.com/mathrl/mathrl/analysis/scorer/validation"
)

func TestNewScorersValidateCmd(t *testing.T) {
	t.Setenv("MATHRL_DATA_DIR", "/data/default")
	for _, tc := range []struct {
		args []string
		want scorersValidateOptions
	}{
		{nil, scorersValidateOptions{Data: "/data/default", Out: "results/scorer_validation"}},
		{[]string{"--data", "d", "--json", "--out", "o", "--no-pull", "--workers", "2"},
			scorersValidateOptions{Data: "d", Out: "o", JSON: true, NoPull: true, Workers: 2}},
	} {
		var got *scorersValidateOptions
		cmd := newScorersValidateCmd(func(_ context.Context, o *scorersValidateOptions) error { got = o; return nil })
		if _, _, err := execute(cmd, "", tc.args...); err != nil {
			t.Fatalf("scorers validate %q: %v", tc.args, err)
		}
		got.Stdout, got.Stderr = nil, nil
		if !reflect.DeepEqual(*got, tc.want) {
			t.Errorf("scorers validate %q: options %+v, want %+v", tc.args, *got, tc.want)
		}
	}
}

func TestScorersValidateRun(t *testing.T) {
	data, out := t.TempDir(), filepath.Join(t.TempDir(), "results")
	rows := `{"id":"a","problem":"p","answer":"42"}` + "\n" + `{"id":"b","problem":"p","answer":"\\frac{1}{2}"}` + "\n" +
		`{"id":"c","problem":"p","answer":null}` + "\n"
	if err := os.WriteFile(filepath.Join(data, "aime25.jsonl"), []byte(rows), 0o644); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	opts := &scorersValidateOptions{Data: data, Out: out, JSON: true, NoPull: true, Stdout: &stdout, Stderr: &stderr}
	if err := runScorersValidate(context.Background(), opts); err != nil {
		t.Fatal(err)
	}
	var counts []map[string]any
	want := len(scorer.Names()) * (len(validation.Variants) + len(validation.Restatements))
	if err := json.Unmarshal(stdout.Bytes(), &counts); err != nil || len(counts) != want {
		t.Fatalf("JSON output: %v, %d objects\n%s", err, len(counts), stdout.String())
	}
	first := map[string]any{"set": "aime25", "scorer": "math", "variant": "boxed", "labels": 2.0, "tp": 2.0, "fp": 0.0, "errors": 0.0}
	if !reflect.DeepEqual(counts[0], first) {
		t.Errorf("first count %v, want %v", counts[0], first)
	}
	for _, f := range []string{"validation.csv", "validation.md"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Error(err)
		}
	}
	stdout.Reset()
	opts.JSON = false
	if err := runScorersValidate(context.Background(), opts); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stdout.String(), "think+boxed+answer_line") || !strings.Contains(stdout.String(), "dapo errors") {
		t.Errorf("table:\n%s", stdout.String())
	}
	opts.Data = t.TempDir()
	if err := runScorersValidate(context.Background(), opts); err == nil || !strings.Contains(err.Error(), "no data set") {
		t.Errorf("empty data folder: err = %v", err)
	}
}
