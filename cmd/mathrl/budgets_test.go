package main

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/mathrl/mathrl/analysis/metrics"
)

func TestNewBudgetsCmd(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want budgetsOptions
		err  string
	}{
		{[]string{"--samples", "s.jsonl"}, budgetsOptions{Samples: "s.jsonl", Budgets: []int{4096, 8192, 16384}, Resamples: 2000, Seed: 1}, ""},
		{[]string{"--samples", "s.jsonl", "--budgets", "1024,2048", "--json", "--k", "4", "--seed", "9"},
			budgetsOptions{Samples: "s.jsonl", Budgets: []int{1024, 2048}, K: 4, JSON: true, Resamples: 2000, Seed: 9}, ""},
		{nil, budgetsOptions{}, `"samples" not set`},
		{[]string{"--samples", "s", "--budgets", "4k"}, budgetsOptions{}, "invalid argument"},
	} {
		var got *budgetsOptions
		_, _, err := execute(newBudgetsCmd(func(o *budgetsOptions) error { got = o; return nil }), "", tc.args...)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("budgets %q: err = %v, want %q", tc.args, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("budgets %q: %v", tc.args, err)
		}
		got.Out = nil
		if !reflect.DeepEqual(*got, tc.want) {
			t.Errorf("budgets %q: options %+v, want %+v", tc.args, *got, tc.want)
		}
	}
}

// TestBudgetsRun derives two budgets from four hand-made samples of one problem:
// lengths 10 (correct), 30 (correct), 50 (wrong) and 100 (cut at the generation budget 100).
func TestBudgetsRun(t *testing.T) {
	var lines []string
	for i, s := range []struct {
		tokens int
		finish string
		score  int
	}{{10, "stop", 1}, {30, "stop", 1}, {50, "stop", 0}, {100, "length", 0}} {
		lines = append(lines, `{"version":1,"problem_id":"p","sample_index":`+itoa(i)+`,"response":"r","response_tokens":`+itoa(s.tokens)+
			`,"finish":"`+s.finish+`","tool_calls":0,"score":`+itoa(s.score)+`,"scorer":"math","budget":100,"model":"m","seed":1}`)
	}
	path := filepath.Join(t.TempDir(), "s.jsonl")
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := runBudgets(&budgetsOptions{Samples: path, Budgets: []int{20, 100}, JSON: true, Resamples: 10, Seed: 1, Out: &out}); err != nil {
		t.Fatal(err)
	}
	var rows []metrics.Summary
	if err := json.Unmarshal(out.Bytes(), &rows); err != nil {
		t.Fatalf("%v in %s", err, out.String())
	}
	// budget 20: only the 10-token sample survives: avg 1/4, 3 of 4 cut, mean length (10+20+20+20)/4
	// budget 100: 2 of 4 correct, 1 cut, mean length 190/4; pass@4 is 1 at both
	want := [][4]float64{{0.25, 0.75, 17.5, 1}, {0.5, 0.25, 47.5, 1}}
	if len(rows) != 2 {
		t.Fatalf("got %d rows: %s", len(rows), out.String())
	}
	for i, r := range rows {
		got := [4]float64{r.AvgAtK, r.TruncationRate, r.MeanLength, r.PassAtK}
		for j := range got {
			if math.Abs(got[j]-want[i][j]) > 1e-12 {
				t.Errorf("budget %d: avg, truncation, length, pass = %v, want %v", r.Budget, got, want[i])
				break
			}
		}
	}
	out.Reset()
	if err := runBudgets(&budgetsOptions{Samples: path, Budgets: []int{20, 100}, Resamples: 10, Seed: 1, Out: &out}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "model m, scorer math, 1 problems, k=4") || !strings.Contains(out.String(), "avg@4") {
		t.Errorf("table:\n%s", out.String())
	}
	if err := runBudgets(&budgetsOptions{Samples: path, Budgets: []int{200}, Out: &out}); err == nil || !strings.Contains(err.Error(), "cannot derive budget 200") {
		t.Errorf("budget above the generation budget: err = %v", err)
	}
}

func TestBudgetsSimulate(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sim.jsonl")
	if _, _, err := execute(newBudgetsCmd(nil), "", "simulate", "--out", path, "--problems", "3", "--k", "4"); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	samples, err := metrics.ReadSamples(f, path)
	if err != nil {
		t.Fatal(err)
	}
	if len(samples) != 12 || samples[0].Model != metrics.SimulatedModel {
		t.Errorf("got %d samples, model %q", len(samples), samples[0].Model)
	}
}

func itoa(i int) string { b, _ := json.Marshal(i); return string(b) }

// TestBudgetsCheckRun checks a one-sample generation at 100 tokens against a
// generation at 10 that stopped where the derivation cuts.
func TestBudgetsCheckRun(t *testing.T) {
	dir := t.TempDir()
	line := func(tokens int, finish string, score, budget int) string {
		return `{"version":1,"problem_id":"p","sample_index":0,"response":"0123456789abc","response_tokens":` + itoa(tokens) +
			`,"finish":"` + finish + `","tool_calls":0,"score":` + itoa(score) + `,"scorer":"math","budget":` + itoa(budget) + `,"model":"m","seed":1}` + "\n"
	}
	large, at10 := filepath.Join(dir, "large.jsonl"), filepath.Join(dir, "at10.jsonl")
	if err := os.WriteFile(large, []byte(line(13, "stop", 1, 100)), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(at10, []byte(line(9, "stop", 1, 10)), 0o644); err != nil {
		t.Fatal(err)
	}
	out, _, err := execute(newBudgetsCmd(nil), "", "check", "--samples", large, "--at", at10)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"| 10 | longer than b | 1 | 0 | 0 | 1 | 0 |", "| 10 | length -> stop | 1 |"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if _, _, err := execute(newBudgetsCmd(nil), "", "check", "--samples", large); err == nil || !strings.Contains(err.Error(), `"at" not set`) {
		t.Errorf("no --at: err = %v", err)
	}
}
