package grpo

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/mathrl/mathrl/analysis/metrics"
	"github.com/mathrl/mathrl/gomlx_trainer/backend"
	"github.com/mathrl/mathrl/internal/vcs"
)

// stepLine is a valid train.jsonl line for step.
func stepLine(step int) metrics.StepMetrics {
	return metrics.StepMetrics{Step: step, Samples: 4, RewardMean: 0.5, Loss: 0.1 * float64(step), LR: 1e-3}
}

// writeRun fills a fresh run folder's train.jsonl with the lines of steps 1
// to n and its eval.jsonl with evaluations at the given steps, each through
// the trainer's appends.
func writeRun(t testing.TB, n int, evals ...int) RunFolder {
	t.Helper()
	r := RunFolder(t.TempDir())
	for s := 1; s <= n; s++ {
		if err := r.AppendStep(stepLine(s)); err != nil {
			t.Fatal(err)
		}
	}
	for _, s := range evals {
		if err := r.AppendEval(metrics.EvalPoint{Step: s, K: 2, AvgAtK: 0.25}); err != nil {
			t.Fatal(err)
		}
	}
	return r
}

func readFile(t testing.TB, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// Appending leaves the earlier bytes as they were, in the same file (an
// append, not a rewrite under the same name).
func TestAppendStepKeepsEarlierLines(t *testing.T) {
	r := writeRun(t, 3)
	before := readFile(t, r.StepsFile())
	info := stat(t, r.StepsFile())
	if err := r.AppendStep(stepLine(4)); err != nil {
		t.Fatal(err)
	}
	after := readFile(t, r.StepsFile())
	if !bytes.HasPrefix(after, before) || bytes.Count(after, []byte("\n")) != 4 {
		t.Errorf("train.jsonl went from\n%s\nto\n%s", before, after)
	}
	if now, err := os.Stat(r.StepsFile()); err != nil || !os.SameFile(info, now) {
		t.Errorf("train.jsonl was replaced by another file (%v)", err)
	}
	steps, err := r.ReadSteps(1 << 30)
	if err != nil || len(steps) != 4 || steps[3].Step != 4 {
		t.Errorf("ReadSteps = %d lines, %v", len(steps), err)
	}
}

func TestTruncateMetrics(t *testing.T) {
	for _, tc := range []struct {
		name           string
		step           int
		partial        string // appended to both files after the whole lines
		wantSteps      int    // train lines kept: steps 1..wantSteps
		wantEvals      int    // eval lines kept, of those at 0, 2, 4
		untouched      [2]bool
		appendEval     int   // the step of an evaluation appended after the truncation
		wantEvalsAfter []int // then in eval.jsonl
	}{
		{name: "resume mid-run", step: 3, wantSteps: 3, wantEvals: 2, appendEval: 3, wantEvalsAfter: []int{0, 2, 3}},
		{name: "resume at an evaluated step", step: 2, wantSteps: 2, wantEvals: 2, appendEval: 2, wantEvalsAfter: []int{0, 2}},
		{name: "evaluation not repeated", step: 4, wantSteps: 4, wantEvals: 3, untouched: [2]bool{false, true}, appendEval: 6, wantEvalsAfter: []int{0, 2, 4, 6}},
		{name: "nothing to cut", step: 5, wantSteps: 5, wantEvals: 3, untouched: [2]bool{true, true}, appendEval: 5, wantEvalsAfter: []int{0, 2, 4, 5}},
		{name: "fresh run over a crashed one", step: 0, wantSteps: 0, wantEvals: 1, appendEval: 0, wantEvalsAfter: []int{0}},
		{name: "partial last lines", step: 5, partial: `{"step":6,"loss`, wantSteps: 5, wantEvals: 3, appendEval: 5, wantEvalsAfter: []int{0, 2, 4, 5}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := writeRun(t, 5, 0, 2, 4)
			for _, p := range []string{r.StepsFile(), r.EvalsFile()} {
				f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND, 0)
				if err != nil {
					t.Fatal(err)
				}
				f.WriteString(tc.partial)
				f.Close()
			}
			paths := []string{r.StepsFile(), r.EvalsFile()}
			was, infos := make([][]byte, 2), make([]os.FileInfo, 2)
			for i, p := range paths {
				was[i], infos[i] = readFile(t, p), stat(t, p)
			}
			steps, err := r.TruncateMetrics(tc.step)
			if err != nil {
				t.Fatal(err)
			}
			for i, p := range paths {
				if same := os.SameFile(infos[i], stat(t, p)); same != tc.untouched[i] {
					t.Errorf("%s left as it was: %v, want %v", p, same, tc.untouched[i])
				}
			}
			if len(steps) != tc.wantSteps {
				t.Errorf("TruncateMetrics(%d) kept %d steps, want %d", tc.step, len(steps), tc.wantSteps)
			}
			checkPrefix(t, r.StepsFile(), was[0], tc.wantSteps)
			checkPrefix(t, r.EvalsFile(), was[1], tc.wantEvals)
			if err := r.AppendStep(stepLine(tc.step + 1)); err != nil {
				t.Fatal(err)
			}
			if got, err := r.ReadSteps(1 << 30); err != nil || len(got) != tc.wantSteps+1 {
				t.Errorf("after an append: %d steps, %v", len(got), err)
			}
			if err := r.AppendEval(metrics.EvalPoint{Step: tc.appendEval, K: 2}); err != nil {
				t.Fatal(err)
			}
			checkEvalSteps(t, r, tc.wantEvalsAfter)
		})
	}
}

// checkPrefix checks that path holds the first n whole lines of was, byte for
// byte.
func checkPrefix(t *testing.T, path string, was []byte, n int) {
	t.Helper()
	want := was[:bytes.LastIndexByte(was, '\n')+1] // without a partial last line
	for range bytes.Count(want, []byte("\n")) - n {
		want = want[:bytes.LastIndexByte(want[:len(want)-1], '\n')+1]
	}
	if got := readFile(t, path); !bytes.Equal(got, want) {
		t.Errorf("%s:\n%s\nwant the first %d lines:\n%s", path, got, n, want)
	}
}

func stat(t *testing.T, path string) os.FileInfo {
	t.Helper()
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return info
}

func checkEvalSteps(t *testing.T, r RunFolder, want []int) {
	t.Helper()
	points, err := r.ReadEvals()
	if err != nil {
		t.Fatal(err)
	}
	got := make([]int, len(points))
	for i, p := range points {
		got[i] = p.Step
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("eval.jsonl steps %v, want %v", got, want)
	}
}

// In a run folder without metrics files, the truncation makes an empty
// train.jsonl (a run may take no step) and no eval.jsonl.
func TestTruncateMetricsNoFiles(t *testing.T) {
	r := RunFolder(t.TempDir())
	if steps, err := r.TruncateMetrics(3); err != nil || len(steps) != 0 {
		t.Fatalf("TruncateMetrics = %v, %v", steps, err)
	}
	if data := readFile(t, r.StepsFile()); len(data) != 0 {
		t.Errorf("train.jsonl holds %q, want nothing", data)
	}
	if _, err := os.Stat(r.EvalsFile()); !os.IsNotExist(err) {
		t.Errorf("eval.jsonl: %v, want no file", err)
	}
}

// An eval.jsonl line longer than lastLine's 4 KiB chunks is still found and
// replaced whole.
func TestAppendEvalLongLastLine(t *testing.T) {
	r := writeRun(t, 0, 0)
	long := `{"step":3,"rollout":1,"k":2,"avg_at_k":0.5` + strings.Repeat(" ", 9000) + "}\n"
	if err := os.WriteFile(r.EvalsFile(), append(readFile(t, r.EvalsFile()), long...), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := r.AppendEval(metrics.EvalPoint{Step: 3, K: 2}); err != nil {
		t.Fatal(err)
	}
	checkEvalSteps(t, r, []int{0, 3})
}

// BenchmarkAppendStep times AppendStep on a train.jsonl of 10 lines and on
// one of 10,000, in turn, and reports the ratio of the two: about 1 when a
// step's cost does not grow with the length of the run. Run it with
//
//	go test ./gomlx_trainer/grpo -run '^$' -bench AppendStep -benchtime 300x
func BenchmarkAppendStep(b *testing.B) {
	sizes := []int{10, 10000}
	runs := make([]RunFolder, len(sizes))
	lengths := make([]int64, len(sizes))
	for i, n := range sizes {
		var lines bytes.Buffer
		for s := 1; s <= n; s++ {
			if err := metrics.WriteStepMetrics(&lines, stepLine(s)); err != nil {
				b.Fatal(err)
			}
		}
		runs[i], lengths[i] = RunFolder(b.TempDir()), int64(lines.Len())
		if err := os.WriteFile(runs[i].StepsFile(), lines.Bytes(), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	spent := make([]time.Duration, len(sizes))
	b.ResetTimer()
	for range b.N {
		for i, r := range runs {
			start := time.Now()
			if err := r.AppendStep(stepLine(sizes[i] + 1)); err != nil {
				b.Fatal(err)
			}
			spent[i] += time.Since(start)
			if err := os.Truncate(r.StepsFile(), lengths[i]); err != nil { // back to n lines
				b.Fatal(err)
			}
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(spent[0].Nanoseconds())/float64(b.N), "ns/append-10")
	b.ReportMetric(float64(spent[1].Nanoseconds())/float64(b.N), "ns/append-10000")
	b.ReportMetric(spent[1].Seconds()/spent[0].Seconds(), "ratio-10000/10")
}

// TestProvenanceKernels checks that provenance.json names the Go backend's
// matrix-product kernels on the Go backend, and nothing on XLA.
func TestProvenanceKernels(t *testing.T) {
	b := testBackend(t)
	p := provenanceOf(metrics.Provenance{}, Default(), b, "none")
	want := ""
	if b.String() == "go" {
		want = backend.GoKernels()
	}
	if p.Kernels != want || p.Backend != b.String() {
		t.Errorf("provenance on %s: kernels %q, backend %q; want %q", b, p.Kernels, p.Backend, want)
	}
}

// TestProvenanceCommit checks that provenance.json takes the commit from
// internal/vcs, with what named it.
func TestProvenanceCommit(t *testing.T) {
	p := provenanceOf(metrics.Provenance{}, Default(), nil, "none")
	want := vcs.Current()
	if p.GitCommit != want.Commit || p.GitDirty != want.Dirty || p.GitSource != want.Source || p.GitSource == "" {
		t.Errorf("provenance commit %q, dirty %v, source %q; want %+v", p.GitCommit, p.GitDirty, p.GitSource, want)
	}
}
