package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestNewPlotCmd(t *testing.T) {
	for _, tc := range []struct {
		args  []string
		what  string
		check func(o *plotOptions) bool
		err   string
	}{
		{[]string{"cards"}, "cards", func(o *plotOptions) bool {
			return o.Out == filepath.Join("results", "figures") && o.Cards == filepath.Join("results", "model_cards")
		}, ""},
		{[]string{"budgets", "--samples", "a.jsonl,b.jsonl", "--budgets", "1024", "--card", ""}, "budgets", func(o *plotOptions) bool {
			return len(o.Samples) == 2 && len(o.Budgets) == 1 && o.Budgets[0] == 1024 && o.Card == ""
		}, ""},
		{[]string{"scorers", "--set", "math500"}, "scorers", func(o *plotOptions) bool {
			return o.Set == "math500" && o.Variant == "boxed+answer_line" && o.Card == "math-grpo-qwen3-8b"
		}, ""},
		{[]string{"train", "--metrics", "r/train.jsonl", "--out", "x"}, "train", func(o *plotOptions) bool {
			return o.Metrics == "r/train.jsonl" && o.Out == "x"
		}, ""},
		{[]string{"budgets"}, "", nil, `"samples" not set`},
		{[]string{"train"}, "", nil, `"metrics" not set`},
	} {
		var gotWhat string
		var got *plotOptions
		_, _, err := execute(newPlotCmd(func(what string, o *plotOptions) error { gotWhat, got = what, o; return nil }), "", tc.args...)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("plot %q: err = %v, want %q", tc.args, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("plot %q: %v", tc.args, err)
		}
		if gotWhat != tc.what || !tc.check(got) {
			t.Errorf("plot %q: %s %+v", tc.args, gotWhat, got.Inputs)
		}
	}
}

func TestPlotRunWritesFigures(t *testing.T) {
	out := t.TempDir()
	var stdout bytes.Buffer
	cards := filepath.Join("..", "..", "results", "model_cards")
	o := &plotOptions{Stdout: &stdout}
	o.Out, o.Cards = out, cards
	if err := runPlot("cards", o); err != nil {
		t.Fatal(err)
	}
	for _, ext := range []string{".png", ".svg"} {
		if fi, err := os.Stat(filepath.Join(out, "card_benchmarks"+ext)); err != nil || fi.Size() < 1000 {
			t.Errorf("card_benchmarks%s: %v", ext, err)
		}
	}
	if !strings.Contains(stdout.String(), "card_benchmarks.png") {
		t.Errorf("stdout: %s", stdout.String())
	}
}
