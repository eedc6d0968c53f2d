package ablation

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeRun writes a run folder: evaluations (step, avg@k) and final samples,
// correct[problem][sample].
func writeRun(t *testing.T, dir, name string, evals [][2]float64, correct [][]bool) {
	t.Helper()
	d := filepath.Join(dir, name)
	if err := os.MkdirAll(d, 0o755); err != nil {
		t.Fatal(err)
	}
	var e strings.Builder
	for _, p := range evals {
		fmt.Fprintf(&e, `{"step":%d,"rollout":%d,"k":2,"avg_at_k":%g,"pass_at_k":%g,"truncation_rate":0,"tool_calls_mean":0,"scorer_errors":0}`+"\n", int(p[0]), int(p[0]), p[1], p[1])
	}
	var s strings.Builder
	for pi, samples := range correct {
		for si, c := range samples {
			score := 0
			if c {
				score = 1
			}
			fmt.Fprintf(&s, `{"version":1,"problem_id":"p%d","sample_index":%d,"response":"r","response_tokens":3,"finish":"stop","tool_calls":0,"score":%d,"scorer":"math","budget":8,"model":"m","seed":1}`+"\n", pi, si, score)
		}
	}
	train := `{"version":1,"step":1,"samples":4,"reward_mean":0,"reward_std":0,"accuracy":0,"response_len_mean":1,"response_len_max":1,"truncation_rate":0,"tool_calls_per_sample":0,"tool_error_rate":0,"loss":0,"clip_fraction":0,"entropy":0,"grad_norm":0,"lr":0,"rollout_seconds":0,"tool_seconds":0,"score_seconds":0,"train_seconds":0,"tokens_per_second":0,"extra":{"groups_drawn":3,"groups_kept":2}}` + "\n"
	for f, text := range map[string]string{"eval.jsonl": e.String(), "final_samples.jsonl": s.String(), "train.jsonl": train} {
		if err := os.WriteFile(filepath.Join(d, f), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestSummarizeAndCurves(t *testing.T) {
	dir := t.TempDir()
	// arm a: seed 1 ends with problems at 1/2 and 2/2 (avg 0.75); seed 2 at 0/2 and 1/2 (avg 0.25)
	writeRun(t, dir, "a-seed1", [][2]float64{{0, 0.1}, {5, 0.75}}, [][]bool{{true, false}, {true, true}})
	writeRun(t, dir, "a-seed2", [][2]float64{{0, 0.3}, {5, 0.25}}, [][]bool{{false, false}, {false, true}})
	writeRun(t, dir, "b-seed1", [][2]float64{{0, 0.2}, {5, 0.5}}, [][]bool{{true, true}, {false, false}})
	os.MkdirAll(filepath.Join(dir, "not-a-run"), 0o755) // ignored
	runs, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got := Arms(runs); len(got) != 2 || got[0] != "a" || got[1] != "b" {
		t.Fatalf("arms %v", got)
	}
	res, err := Summarize(runs, 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	a := res[0]
	// pairs (seed, problem) of a: 0.5, 1, 0, 0.5 -> 0.5; pass@2: 1, 1, 0, 1 -> 0.75
	if a.AvgAtK != 0.5 || a.PassAtK != 0.75 || a.Start != 0.2 || len(a.PerSeed) != 2 || a.PerSeed[0] != 0.75 || a.PerSeed[1] != 0.25 {
		t.Errorf("arm a: %+v", a)
	}
	// the start of each seed is its first evaluation's avg@k (0.1 and 0.3), not its last
	if len(a.StartPerSeed) != 2 || a.StartPerSeed[0] != 0.1 || a.StartPerSeed[1] != 0.3 {
		t.Errorf("arm a: StartPerSeed %v, want [0.1 0.3]", a.StartPerSeed)
	}
	if a.AvgAtKCI.Lo != 0.5 || a.AvgAtKCI.Hi != 0.5 {
		t.Errorf("no resamples: interval %+v, want the mean alone", a.AvgAtKCI)
	}
	res, _ = Summarize(runs, 2000, 1)
	if ci := res[0].AvgAtKCI; !(ci.Lo < 0.5 && ci.Hi > 0.5 && ci.Lo >= 0 && ci.Hi <= 1) {
		t.Errorf("bootstrap interval %+v does not hold the mean 0.5", ci)
	}
	curves, err := Curves(runs)
	if err != nil {
		t.Fatal(err)
	}
	c := curves[0]
	if c.Seeds != 2 || c.Steps[1] != 5 || math.Abs(c.Mean[1]-0.5) > 1e-12 || c.Lo[1] != 0.25 || c.Hi[1] != 0.75 {
		t.Errorf("curve a: %+v", c)
	}
	if md := Markdown(res); !strings.Contains(md, "| a | 2 | 0.200 | 0.500 (") || !strings.Contains(md, "0.750, 0.250") {
		t.Errorf("markdown:\n%s", md)
	}
	if md := DrawsMarkdown(runs); !strings.Contains(md, "| a | 3.00 | 2.00 |") {
		t.Errorf("draws:\n%s", md)
	}
}

func TestLoadErrors(t *testing.T) {
	if _, err := Load(t.TempDir()); err == nil || !strings.Contains(err.Error(), "no run folder") {
		t.Errorf("empty folder: %v", err)
	}
	dir := t.TempDir()
	writeRun(t, dir, "a-seed1", [][2]float64{{0, 0.1}}, [][]bool{{true, false}})
	os.WriteFile(filepath.Join(dir, "a-seed1", "eval.jsonl"), []byte(`{"step":0,"k":2,"avg_at_k":"x"}`+"\n"), 0o644)
	if _, err := Load(dir); err == nil || !strings.Contains(err.Error(), "eval.jsonl") || !strings.Contains(err.Error(), "1") {
		t.Errorf("bad eval line: %v, want an error naming the file and line", err)
	}
	dir = t.TempDir()
	writeRun(t, dir, "a-seed1", [][2]float64{{0, 0.1}, {5, 0.2}}, [][]bool{{true, false}})
	writeRun(t, dir, "a-seed2", [][2]float64{{0, 0.1}, {6, 0.2}}, [][]bool{{true, false}})
	runs, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Curves(runs); err == nil || !strings.Contains(err.Error(), "step 6") {
		t.Errorf("different steps: %v", err)
	}
}
