package ablation

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mathrl/mathrl/analysis/metrics"
)

// answer is one diversity sample: problem, response text, tool calls, and
// whether it is correct.
type answer struct {
	problem, response string
	calls             int
	correct           bool
}

// writeDiversity writes a run folder (writeRun's) with diversity samples.
func writeDiversity(t *testing.T, dir, name string, answers []answer) {
	t.Helper()
	writeRun(t, dir, name, [][2]float64{{0, 0}, {30, 0.5}}, [][]bool{{true, false}})
	var b strings.Builder
	for i, a := range answers {
		score := 0
		if a.correct {
			score = 1
		}
		line, err := json.Marshal(map[string]any{"version": 1, "problem_id": a.problem, "sample_index": i % 3, "response": a.response,
			"response_tokens": 5, "finish": "stop", "tool_calls": a.calls, "score": score, "scorer": "math", "budget": 160, "model": "m", "seed": 1})
		if err != nil {
			t.Fatal(err)
		}
		b.Write(append(line, '\n'))
	}
	if err := os.WriteFile(filepath.Join(dir, name, "diversity_samples.jsonl"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestDiversityAndToolUse checks Diversity and ToolUse on two seeds of one
// arm whose values are counted by hand: seed 1 solves p1 twice with the
// same text and p2 once (three different final answers there, one of them
// none); seed 2 solves p1 three ways and p2 never.
func TestDiversityAndToolUse(t *testing.T) {
	dir := t.TempDir()
	writeDiversity(t, dir, "a-seed1", []answer{
		{"p1", `x \boxed{1}`, 0, true}, {"p1", `x \boxed{1}`, 0, true}, {"p1", `y \boxed{2}`, 0, false},
		{"p2", `z \boxed{3}`, 1, false}, {"p2", `w`, 0, false}, {"p2", `v \boxed{4}`, 2, true},
	})
	writeDiversity(t, dir, "a-seed2", []answer{
		{"p1", `a \boxed{1}`, 1, true}, {"p1", `b \boxed{1}`, 1, true}, {"p1", `c \boxed{1}`, 1, true},
		{"p2", `\boxed{5}`, 0, false}, {"p2", `\boxed{5}`, 0, false}, {"p2", `\boxed{5}`, 0, false},
	})
	runs, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	div, err := Diversity(runs)
	if err != nil {
		t.Fatal(err)
	}
	want := DiversityResult{Arm: "a", Seeds: 2, K: 3, Correct: 6.0 / 12, Solved: 3.0 / 4, DistinctCorrect: 5.0 / 3, DistinctAnswers: 7.0 / 4}
	if len(div) != 1 || !sameDiversity(div[0], want) {
		t.Errorf("Diversity = %+v, want %+v", div, want)
	}
	tools, err := ToolUse(runs)
	if err != nil {
		t.Fatal(err)
	}
	wantTools := ToolResult{Arm: "a", CallsPerAnswer: 6.0 / 12, WithCall: 5.0 / 12, CorrectWithCall: 4.0 / 5, CorrectWithout: 2.0 / 7}
	if len(tools) != 1 || !sameTools(tools[0], wantTools) {
		t.Errorf("ToolUse = %+v, want %+v", tools, wantTools)
	}
	for _, table := range []string{DiversityMarkdown(div), ToolMarkdown(tools)} {
		if !strings.Contains(table, "| a |") {
			t.Errorf("table without the arm:\n%s", table)
		}
	}
}

func sameDiversity(a, b DiversityResult) bool {
	return a.Arm == b.Arm && a.Seeds == b.Seeds && a.K == b.K && nearly(a.Correct, b.Correct) && nearly(a.Solved, b.Solved) &&
		nearly(a.DistinctCorrect, b.DistinctCorrect) && nearly(a.DistinctAnswers, b.DistinctAnswers)
}

func sameTools(a, b ToolResult) bool {
	return a.Arm == b.Arm && nearly(a.CallsPerAnswer, b.CallsPerAnswer) && nearly(a.WithCall, b.WithCall) &&
		nearly(a.CorrectWithCall, b.CorrectWithCall) && nearly(a.CorrectWithout, b.CorrectWithout)
}

func nearly(a, b float64) bool { return math.Abs(a-b) < 1e-12 }

// TestDiversityErrors: a run without diversity samples, one whose problems
// have different numbers of answers, and seeds of one arm with different
// numbers of answers per problem are errors naming the run.
func TestDiversityErrors(t *testing.T) {
	dir := t.TempDir()
	writeRun(t, dir, "a-seed1", [][2]float64{{0, 0}}, [][]bool{{true}})
	runs, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Diversity(runs); err == nil || !strings.Contains(err.Error(), "a-seed1 has no diversity samples") {
		t.Errorf("Diversity without samples: %v", err)
	}
	if _, err := ToolUse(runs); err == nil || !strings.Contains(err.Error(), "a-seed1 has no diversity samples") {
		t.Errorf("ToolUse without samples: %v", err)
	}
	dir = t.TempDir()
	writeDiversity(t, dir, "b-seed1", []answer{{"p1", "x", 0, true}, {"p1", "y", 0, false}, {"p2", "z", 0, false}})
	if runs, err = Load(dir); err != nil {
		t.Fatal(err)
	}
	if _, err := Diversity(runs); err == nil || !strings.Contains(err.Error(), "problem p2 has 1 diversity samples, problem p1 2") {
		t.Errorf("ragged problems: %v", err)
	}
	dir = t.TempDir()
	writeDiversity(t, dir, "c-seed1", []answer{{"p1", "x", 0, true}, {"p1", "y", 0, false}})
	writeDiversity(t, dir, "c-seed2", []answer{{"p1", "x", 0, true}, {"p1", "y", 0, false}, {"p1", "z", 0, false}})
	if runs, err = Load(dir); err != nil {
		t.Fatal(err)
	}
	if _, err := Diversity(runs); err == nil || !strings.Contains(err.Error(), "c-seed2: 3 answers per problem, other runs of c 2") {
		t.Errorf("seeds with different numbers of answers: %v", err)
	}
}

// TestTrends: an arm that logged the key on every step gets the means of its
// first and last window steps over its seeds; an arm that did not log it on
// every step gets none.
func TestTrends(t *testing.T) {
	runs := []Run{
		{Arm: "p", Seed: 1, Steps: stepsWith("k", 1, 2, 3, 4)},
		{Arm: "p", Seed: 2, Steps: stepsWith("k", 5, 6, 7, 8)},
		{Arm: "q", Seed: 1, Steps: stepsWith("other", 1, 2, 3, 4)},
	}
	got := Trends(runs, "k", 2)
	want := []Trend{{Arm: "p", Key: "k", First: (1 + 2 + 5 + 6) / 4.0, Last: (3 + 4 + 7 + 8) / 4.0}}
	if len(got) != 1 || got[0] != want[0] {
		t.Errorf("Trends = %+v, want %+v", got, want)
	}
	if table := TrendsMarkdown(got, 2); !strings.Contains(table, "| p | `k` | 3.5000 | 5.5000 |") {
		t.Errorf("table:\n%s", table)
	}
}

// TestTrendsNeedEveryStep: an arm that missed the key on any one step of any
// seed gets no trend, whether the gap is in its first seed (p: the second
// step) or on a first step (q), even when its last step logged the key.
func TestTrendsNeedEveryStep(t *testing.T) {
	gapFirstSeed := stepsWith("k", 1, 2, 3, 4)
	delete(gapFirstSeed[1].Extra, "k")
	gapFirstStep := stepsWith("k", 1, 2, 3, 4)
	delete(gapFirstStep[0].Extra, "k")
	runs := []Run{
		{Arm: "p", Seed: 1, Steps: gapFirstSeed},
		{Arm: "p", Seed: 2, Steps: stepsWith("k", 5, 6, 7, 8)},
		{Arm: "q", Seed: 1, Steps: gapFirstStep},
		{Arm: "r", Seed: 1, Steps: stepsWith("k", 1, 2, 3, 4)},
	}
	got := Trends(runs, "k", 2)
	want := []Trend{{Arm: "r", Key: "k", First: 1.5, Last: 3.5}}
	if len(got) != 1 || got[0] != want[0] {
		t.Errorf("Trends = %+v, want %+v (p and q missed a step)", got, want)
	}
}

// stepsWith returns steps that log key with the values, one a step.
func stepsWith(key string, values ...float64) []metrics.StepMetrics {
	var out []metrics.StepMetrics
	for i, v := range values {
		out = append(out, metrics.StepMetrics{Step: i + 1, Extra: map[string]float64{key: v}})
	}
	return out
}

// TestGainShares: each student's gain (final minus start avg@k) over the
// teacher's, in the mean and per seed; no teacher, or a teacher that did
// not gain, is an error.
func TestGainShares(t *testing.T) {
	results := []Result{
		{Arm: "teacher", Start: 0.5, AvgAtK: 0.9, StartPerSeed: []float64{0.5}, PerSeed: []float64{0.9}},
		{Arm: "opd", Start: 0.4, AvgAtK: 0.6, StartPerSeed: []float64{0.3, 0.5}, PerSeed: []float64{0.6, 0.6}},
	}
	got, err := GainShares(results, "teacher")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Arm != "opd" || !nearly(got[0].Gain, 0.2) || !nearly(got[0].TeacherGain, 0.4) || !nearly(got[0].Share, 0.5) ||
		len(got[0].PerSeedShare) != 2 || !nearly(got[0].PerSeedShare[0], 0.75) || !nearly(got[0].PerSeedShare[1], 0.25) {
		t.Errorf("GainShares = %+v", got)
	}
	if table := GainSharesMarkdown(got); !strings.Contains(table, "| opd | +0.200 | 0.50 | 0.75, 0.25 |") {
		t.Errorf("table:\n%s", table)
	}
	if _, err := GainShares(results[1:], "teacher"); err == nil || !strings.Contains(err.Error(), `no arm "teacher"`) {
		t.Errorf("without the teacher: %v", err)
	}
	flat := []Result{{Arm: "teacher", Start: 0.5, AvgAtK: 0.5}}
	if _, err := GainShares(flat, "teacher"); err == nil || !strings.Contains(err.Error(), "gained 0.0000") {
		t.Errorf("a teacher without gain: %v", err)
	}
}

// TestGainSharesAreOverTheTeachersGain: a student's share is its gain over
// the teacher's gain, not over its own start: the teacher gains 0.6 - 0.2 =
// 0.4; the student starts at 0.1 and ends at 0.3 (seeds 0.0 to 0.2 and 0.2
// to 0.4), a gain of 0.2 and a share of 0.5 (0.2 over its start would be 2),
// 0.5 on each seed.
func TestGainSharesAreOverTheTeachersGain(t *testing.T) {
	results := []Result{
		{Arm: "student", Start: 0.1, AvgAtK: 0.3, StartPerSeed: []float64{0, 0.2}, PerSeed: []float64{0.2, 0.4}},
		{Arm: "teacher", Start: 0.2, AvgAtK: 0.6, StartPerSeed: []float64{0.2}, PerSeed: []float64{0.6}},
	}
	got, err := GainShares(results, "teacher")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Arm != "student" || !nearly(got[0].Gain, 0.2) || !nearly(got[0].TeacherGain, 0.4) || !nearly(got[0].Share, 0.5) ||
		len(got[0].PerSeedShare) != 2 || !nearly(got[0].PerSeedShare[0], 0.5) || !nearly(got[0].PerSeedShare[1], 0.5) {
		t.Errorf("GainShares = %+v, want the student's gain 0.2, a share of 0.5 in the mean and on each seed", got)
	}
}
