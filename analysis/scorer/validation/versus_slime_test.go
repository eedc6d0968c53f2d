package validation

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mathrl/mathrl/analysis/scorer"
)

// slimeHubEnv names the folder that holds slime's scorer files as they are in
// slime/rollout/rm_hub/ (the RM_HUB of scorer/testdata/make_verdicts.py).
// They are read from there and never copied into this project.
const slimeHubEnv = "MATHRL_SLIME_RM_HUB"

// goPasses is how many times one op of a Go sub-benchmark scores all the
// cases: one pass of the math scorer takes well under a second, and a few
// make a pause of a busy machine weigh less.
const goPasses = 5

// speedCase is one line of the Python driver's input.
type speedCase struct {
	Response string `json:"response"`
	Label    string `json:"label"`
}

// slimeRun is the output of testdata/slime_speed.py.
type slimeRun struct {
	Cases        int     `json:"cases"`
	ScoreSeconds float64 `json:"score_seconds"`     // the scoring loop alone, by the clock
	CPUSeconds   float64 `json:"score_cpu_seconds"` // the scoring loop alone, CPU time of the process
	Verdicts     []int   `json:"verdicts"`          // 1 where grade_answer_verl was true
}

// BenchmarkVersusSlime times slime's Python `math` scorer and each Go scorer
// on the same cases: the true- and false-positive construction of every MATH
// train and test label in the boxed template (24,992 cases).
//
// Sub-benchmark slime-math runs testdata/slime_speed.py with Debian's
// /usr/bin/python3 (MATHRL_REF_PYTHON overrides it) on the files in
// $MATHRL_SLIME_RM_HUB and reports the cases/s of its scoring loop and of the
// whole process (e2e-cases/s); it is skipped, with the reason, when either is
// missing. Each Go scorer then runs on one goroutine with GOMAXPROCS 1,
// scoring the cases goPasses times per op, and reports cases/s, x-slime (its
// cases/s over those of slime's scoring loop in the same run) and, for math,
// the number of cases where its verdict differs from slime's. Both sides also
// report their rate in process CPU time (cpu-cases/s, x-slime-cpu), which
// other work on a busy machine inflates less than the clock. On this template
// deepscaler finds no </think> and dapo no Answer: line, so those two return
// before grading.
//
// Sub-benchmarks cli-math and cli-verify then time the command end to end,
// process start included, the way slime's rate is compared in practice: the
// mathrl binary, built once into a temporary folder, runs `mathrl score
// --scorer NAME --workers 1` with GOMAXPROCS=1 on the same cases written as a
// JSONL file, goPasses times per op. They report e2e-cases/s (by the clock)
// and e2e-cpu-cases/s (the child's user and system time), and x-slime-e2e and
// x-slime-e2e-cpu against slime's scoring loop alone; cli-math also counts
// the lines whose score differs from slime's verdict. Run with:
//
//	go test ./analysis/scorer/validation -run XXX -bench VersusSlime -benchtime 1x
func BenchmarkVersusSlime(b *testing.B) {
	cases := boxedCases(mathLabels(b))
	var slime *slimeRun
	noSlime := "slime-math did not run in this benchmark run"
	b.Run("slime-math", func(b *testing.B) {
		py, hub, why := slimeSetup()
		if why != "" {
			noSlime = "slime part skipped: " + why
			b.Skip(noSlime)
		}
		input := encodeCases(b, cases)
		var run slimeRun
		for b.Loop() {
			run = runSlime(b, py, hub, input, len(cases))
		}
		e2e := b.Elapsed() / time.Duration(b.N)
		b.ReportMetric(float64(len(cases))/run.ScoreSeconds, "cases/s")
		b.ReportMetric(float64(len(cases))/run.CPUSeconds, "cpu-cases/s")
		b.ReportMetric(float64(len(cases))/e2e.Seconds(), "e2e-cases/s")
		slime = &run
	})
	for _, name := range scorer.Names() {
		b.Run(name, func(b *testing.B) {
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
			verdicts := make([]bool, len(cases))
			cpu0 := cpuTime(b)
			for b.Loop() {
				for range goPasses {
					for i, c := range cases {
						r, _ := scorer.ScoreLabel(name, c.Response, scorer.TextLabel(c.Label))
						verdicts[i] = r.Correct
					}
				}
			}
			cpu := cpuTime(b) - cpu0
			scored := float64(b.N * goPasses * len(cases))
			rate, cpuRate := scored/b.Elapsed().Seconds(), scored/cpu.Seconds()
			b.ReportMetric(rate, "cases/s")
			b.ReportMetric(cpuRate, "cpu-cases/s")
			if slime == nil {
				b.Log("no ratio: " + noSlime)
				return
			}
			b.ReportMetric(rate*slime.ScoreSeconds/float64(len(cases)), "x-slime")
			b.ReportMetric(cpuRate*slime.CPUSeconds/float64(len(cases)), "x-slime-cpu")
			if name == scorer.Math {
				b.ReportMetric(float64(disagreements(b, cases, verdicts, slime.Verdicts)), "disagreements")
			}
		})
	}
	dir, cli := b.TempDir(), (*cliFiles)(nil)
	for _, name := range []string{scorer.Math, scorer.Verify} {
		b.Run("cli-"+name, func(b *testing.B) {
			if cli == nil { // built on first use, for a -bench that picks no cli- part
				cli = cliSetup(b, dir, cases)
			}
			benchCLI(b, *cli, name, cases, slime, noSlime)
		})
	}
}

// cliFiles are what the cli- sub-benchmarks share: the mathrl binary and the
// cases as a JSONL file, in a folder removed when BenchmarkVersusSlime ends.
type cliFiles struct {
	bin, in, dir string
}

// cliSetup builds the mathrl binary into dir with the go command on $PATH and
// writes the cases there for it to read.
func cliSetup(b *testing.B, dir string, cases []speedCase) *cliFiles {
	f := &cliFiles{bin: filepath.Join(dir, "mathrl"), in: filepath.Join(dir, "cases.jsonl"), dir: dir}
	if err := os.WriteFile(f.in, encodeCases(b, cases), 0o644); err != nil {
		b.Fatal(err)
	}
	build := exec.Command("go", "build", "-o", f.bin, "github.com/mathrl/mathrl/cmd/mathrl")
	if out, err := build.CombinedOutput(); err != nil {
		b.Fatalf("go build of cmd/mathrl: %v\n%s", err, out)
	}
	return f
}

// benchCLI times `mathrl score --scorer name --workers 1` with GOMAXPROCS=1
// on the cases, goPasses runs per op, and reports its rates against slime's.
func benchCLI(b *testing.B, cli cliFiles, name string, cases []speedCase, slime *slimeRun, noSlime string) {
	out := filepath.Join(cli.dir, "scored-"+name+".jsonl")
	var cpu time.Duration
	for b.Loop() {
		for range goPasses {
			cmd := exec.Command(cli.bin, "score", "--scorer", name, "--workers", "1", "--in", cli.in, "--out", out)
			cmd.Env = append(os.Environ(), "GOMAXPROCS=1")
			if msg, err := cmd.CombinedOutput(); err != nil {
				b.Fatalf("mathrl score --scorer %s: %v\n%s", name, err, msg)
			}
			cpu += cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
		}
	}
	b.StopTimer()
	scored := float64(b.N * goPasses * len(cases))
	rate, cpuRate := scored/b.Elapsed().Seconds(), scored/cpu.Seconds()
	b.ReportMetric(rate, "e2e-cases/s")
	b.ReportMetric(cpuRate, "e2e-cpu-cases/s")
	scores := cliScores(b, out, len(cases))
	if slime == nil {
		b.Log("no ratio: " + noSlime)
		return
	}
	b.ReportMetric(rate*slime.ScoreSeconds/float64(len(cases)), "x-slime-e2e")
	b.ReportMetric(cpuRate*slime.CPUSeconds/float64(len(cases)), "x-slime-e2e-cpu")
	if name == scorer.Math {
		verdicts := make([]bool, len(scores))
		for i, s := range scores {
			verdicts[i] = s > 0
		}
		b.ReportMetric(float64(disagreements(b, cases, verdicts, slime.Verdicts)), "disagreements")
	}
}

// cliScores reads the "score" of each line that mathrl score wrote to path,
// and fails unless there is one per case.
func cliScores(b *testing.B, path string, n int) []float64 {
	data, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	var scores []float64
	for line := range bytes.Lines(data) {
		var v struct {
			Score *float64 `json:"score"`
		}
		if err := json.Unmarshal(line, &v); err != nil || v.Score == nil {
			b.Fatalf("%s line %d: no score (%v): %s", path, len(scores)+1, err, line)
		}
		scores = append(scores, *v.Score)
	}
	if len(scores) != n {
		b.Fatalf("%s: %d lines, want %d", path, len(scores), n)
	}
	return scores
}

// boxedCases returns, label by label, the response in the Boxed template that
// states the label and (where it has a partner) the one that states its
// partner's label, both against the label.
func boxedCases(labels []string) []speedCase {
	partners := Partners(labels)
	cases := make([]speedCase, 0, 2*len(labels))
	for i, l := range labels {
		cases = append(cases, speedCase{Response(Boxed, l), l})
		if partners[i] >= 0 {
			cases = append(cases, speedCase{Response(Boxed, labels[partners[i]]), l})
		}
	}
	return cases
}

// slimeSetup returns the Python interpreter and slime's scorer folder, or why
// the slime part cannot run.
func slimeSetup() (py, hub, why string) {
	hub = os.Getenv(slimeHubEnv)
	if hub == "" {
		return "", "", slimeHubEnv + " is not set (a folder holding slime's slime/rollout/rm_hub/math_utils.py)"
	}
	if _, err := os.Stat(filepath.Join(hub, "math_utils.py")); err != nil {
		return "", "", fmt.Sprintf("%s=%s has no math_utils.py", slimeHubEnv, hub)
	}
	py = "/usr/bin/python3"
	if p := os.Getenv("MATHRL_REF_PYTHON"); p != "" {
		py = p
	}
	if out, err := exec.Command(py, "-c", "import sympy, pylatexenc").CombinedOutput(); err != nil {
		return "", "", fmt.Sprintf("%s cannot import sympy and pylatexenc (Debian python3-sympy, python3-pylatexenc): %v %s",
			py, err, strings.TrimSpace(string(out)))
	}
	return py, hub, ""
}

func encodeCases(b *testing.B, cases []speedCase) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	for _, c := range cases {
		if err := enc.Encode(c); err != nil {
			b.Fatal(err)
		}
	}
	return buf.Bytes()
}

// runSlime runs testdata/slime_speed.py once on the encoded cases.
func runSlime(b *testing.B, py, hub string, input []byte, n int) slimeRun {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, py, filepath.Join("testdata", "slime_speed.py"), hub)
	cmd.Stdin = bytes.NewReader(input)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		b.Fatalf("slime_speed.py: %v\n%s", err, stderr.Bytes())
	}
	var run slimeRun
	if err := json.Unmarshal(out, &run); err != nil {
		b.Fatalf("slime_speed.py output: %v", err)
	}
	if run.Cases != n || len(run.Verdicts) != n || run.ScoreSeconds <= 0 || run.CPUSeconds <= 0 {
		b.Fatalf("slime_speed.py scored %d cases (%d verdicts) in %gs, want %d", run.Cases, len(run.Verdicts),
			run.ScoreSeconds, n)
	}
	return run
}

// cpuTime returns the CPU time this process has used (user and system).
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// disagreements counts the cases where the Go verdict differs from slime's
// and logs the first few.
func disagreements(b *testing.B, cases []speedCase, got []bool, slime []int) int {
	n := 0
	for i, c := range cases {
		if got[i] != (slime[i] == 1) {
			if n++; n <= 5 {
				b.Logf("verdict differs: Go %v, slime %d: label %q, response %q", got[i], slime[i], c.Label, c.Response)
			}
		}
	}
	return n
}
