package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mathrl/mathrl/analysis/rollouts"
)

func TestNewShowCmd(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want showRolloutOptions
		err  string
	}{
		{[]string{"rollout", "--run", "r", "--step", "5", "--out", "x.html"}, showRolloutOptions{Run: "r", Step: 5, Sample: -1, Out: "x.html"}, ""},
		{[]string{"rollout", "--run", "r", "--step", "0", "--sample", "3", "--out", "x.html"}, showRolloutOptions{Run: "r", Step: 0, Sample: 3, Out: "x.html"}, ""},
		{[]string{"rollout", "--run", "r", "--out", "x.html"}, showRolloutOptions{}, `"step" not set`},
	} {
		var got *showRolloutOptions
		_, _, err := execute(newShowCmd(func(o *showRolloutOptions) error { got = o; return nil }), "", tc.args...)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("show %q: err = %v, want %q", tc.args, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("show %q: %v", tc.args, err)
		}
		got.Stdout = nil
		if *got != tc.want {
			t.Errorf("show %q: %+v, want %+v", tc.args, *got, tc.want)
		}
	}
}

func TestShowRolloutWritesThePageOrNothing(t *testing.T) {
	run := t.TempDir()
	rec := rollouts.Record{Version: rollouts.Version, Step: 2, Rollout: 3, TrainStep: 3, ProblemID: "p", Group: 0,
		PromptIDs: []int{1}, ResponseIDs: []int{7, 8}, Tokens: []string{"a", "<b>"}, Mask: []float32{1, 0},
		LogProbs: []float32{-0.1, 0}, Advantage: 1, Finish: "stop"}
	if err := rollouts.WriteFile(rollouts.Path(run, 2), []rollouts.Record{rec}); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "page.html")
	var stdout strings.Builder
	if err := runShowRollout(&showRolloutOptions{Run: run, Step: 2, Sample: -1, Out: out, Stdout: &stdout}); err != nil {
		t.Fatal(err)
	}
	page, err := os.ReadFile(out)
	if err != nil || !strings.Contains(string(page), `<span class="tok masked" title="id 8 · mask 0`) || !strings.Contains(string(page), "&lt;b&gt;") {
		t.Errorf("page (%v):\n%s", err, page)
	}
	other := filepath.Join(t.TempDir(), "none.html")
	err = runShowRollout(&showRolloutOptions{Run: run, Step: 4, Sample: -1, Out: other, Stdout: &stdout})
	if !errors.Is(err, rollouts.ErrNotRecorded) || !strings.Contains(err.Error(), "recorded steps: 2") {
		t.Errorf("step 4: %v", err)
	}
	if _, err := os.Stat(other); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a page was written for a step not recorded: %v", err)
	}
}
