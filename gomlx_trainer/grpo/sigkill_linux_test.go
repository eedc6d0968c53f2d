package grpo

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mathrl/mathrl/analysis/metrics"
)

// trainerConfigEnv names the config file (JSON) of the trainer process that
// TestSIGKILLAndResume starts: this test binary, running TestTrainerProcess.
const trainerConfigEnv = "MATHRL_TEST_TRAINER_CONFIG"

// TestTrainerProcess is the trainer process of TestSIGKILLAndResume: `mathrl
// train --resume` on the config it is given, with the sandbox's tools. Run by
// itself it does nothing.
func TestTrainerProcess(t *testing.T) {
	path := os.Getenv(trainerConfigEnv)
	if path == "" {
		t.Skip("the trainer process of TestSIGKILLAndResume")
	}
	var cfg Config
	if err := json.Unmarshal(readFile(t, path), &cfg); err != nil {
		t.Fatal(err)
	}
	opt := TrainOptions{Backend: testBackend(t), Resume: true, Progress: os.Stdout, PhaseMarks: NewPhaseMarks(os.Stderr, os.Stdin)}
	if err := Train(context.Background(), cfg, opt); err != nil {
		t.Fatal(err)
	}
}

// TestSIGKILLAndResume runs a tiny run with the sandbox's tools once straight
// through, recording the phase marks (see PhaseMarks) it passes. It then
// runs it again in another folder as a chain of trainer processes, each
// started with --resume and killed with SIGKILL a seeded 0-20 ms after a mark
// chosen (seeded) among those of the straight run: 10 kills, during sampling,
// a tool call (the warm start's: its traces run their code in the sandbox),
// an optimizer step and a checkpoint write, the first checkpoint's write
// included. The last process runs to the end. Both runs must end with
// the same weights and optimizer state, byte for byte, and the same metrics.
//
// Each process is killed while it waits at the mark after its target at the
// latest, so it never gets past the next target; where inside the phase the
// kill lands depends on timing, and nothing asserted does.
func TestSIGKILLAndResume(t *testing.T) {
	if testing.Short() {
		t.Skip("trains a tiny model in 12 processes")
	}
	cfg := smokeConfig(t)
	cfg.NumRollout, cfg.SaveInterval, cfg.EvalInterval = 3, 1, 1
	cfg.ToolTimeout = 30 // a tool call must not time out on a loaded machine: its output would change
	straight := writeConfig(t, cfg)
	marks := runTrainer(t, straight, "", 0)
	var prov metrics.Provenance
	if err := json.Unmarshal(readFile(t, filepath.Join(cfg.Save, "provenance.json")), &prov); err != nil {
		t.Fatal(err)
	}
	if prov.Sandbox != "namespaces" {
		t.Skipf("sandbox isolation %q: below namespaces a tool's error names a random folder, so two runs differ", prov.Sandbox)
	}

	killed := cfg
	killed.Save = filepath.Join(t.TempDir(), "killed")
	chain := writeConfig(t, killed)
	rng := rand.New(rand.NewPCG(1, 2))
	for i, k := range killPlan(t, marks, rng) {
		delay := time.Duration(rng.IntN(20)) * time.Millisecond
		runTrainer(t, chain, marks[k], delay)
		t.Logf("kill %2d: %s + %s; ckpt holds %v", i+1, marks[k], delay, dirNames(RunFolder(killed.Save).CkptDir()))
	}
	runTrainer(t, chain, "", 0)

	sameFinalCheckpoint(t, cfg.Save, killed.Save)
	sameStepLines(t, cfg.Save, killed.Save)
	ea, errA := RunFolder(cfg.Save).ReadEvals()
	eb, errB := RunFolder(killed.Save).ReadEvals()
	if errA != nil || errB != nil || !reflect.DeepEqual(ea, eb) {
		t.Errorf("eval.jsonl: straight %+v, killed %+v (%v, %v)", ea, eb, errA, errB)
	}
	final := CheckpointName(cfg.NumRollout * cfg.StepsPerRollout())
	if names := dirNames(RunFolder(killed.Save).CkptDir()); !slices.Equal(names, []string{final}) {
		t.Errorf("ckpt holds %v at the end, want only %s", names, final)
	}
}

// writeConfig writes cfg as JSON for TestTrainerProcess and returns the file.
func writeConfig(t *testing.T, cfg Config) string {
	t.Helper()
	data, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "config.json")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// killPlan picks, with rng, the marks to kill at, as indices into marks in
// run order: 10 spread over the phases, the first checkpoint's write among
// them.
func killPlan(t *testing.T, marks []string, rng *rand.Rand) []int {
	t.Helper()
	byPhase := map[string][]int{}
	for i, m := range marks {
		if slices.Index(marks, m) != i {
			t.Fatalf("mark %q comes twice: the plan could not tell them apart", m)
		}
		phase, _, _ := strings.Cut(m, " ")
		byPhase[phase] = append(byPhase[phase], i)
	}
	plan := []int{slices.Index(marks, "save "+CheckpointName(0))}
	for _, want := range []struct {
		phase string
		n     int
	}{{"sample", 2}, {"tool", 3}, {"step", 2}, {"save", 2}} { // and the first save
		idx := byPhase[want.phase]
		if len(idx) <= want.n {
			t.Fatalf("the straight run passed %d %s marks, the plan needs more than %d:\n%s", len(idx), want.phase, want.n, strings.Join(marks, "\n"))
		}
		picked := 0
		for _, j := range rng.Perm(len(idx)) {
			if picked < want.n && !slices.Contains(plan, idx[j]) {
				plan, picked = append(plan, idx[j]), picked+1
			}
		}
	}
	slices.Sort(plan)
	return plan
}

// runTrainer runs TestTrainerProcess on the config file cfgPath, answering its
// phase marks, and returns their labels: each mark as written, but a tool
// call's as "tool N after MARK", the Nth since the last other mark (concurrent
// calls may come in any order, but their number is fixed). With kill set, it
// SIGKILLs the process delay after the mark so labelled, and fails the test
// unless it gets there; without, it fails unless the run ends well.
func runTrainer(t *testing.T, cfgPath, kill string, delay time.Duration) []string {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestTrainerProcess$", "-test.count=1")
	// TMPDIR: a killed trainer leaves its sandbox calls' folders behind
	cmd.Env = append(os.Environ(), trainerConfigEnv+"="+cfgPath, "TMPDIR="+t.TempDir())
	var out, other bytes.Buffer
	cmd.Stdout = &out
	cmd.WaitDelay = 10 * time.Second // bounds a wait on pipes held by leftovers
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var labels []string
	prev, tools, killed := "start", 0, false
	for sc := bufio.NewScanner(stderr); sc.Scan(); {
		what, ok := strings.CutPrefix(sc.Text(), "mathrl-phase: ")
		if !ok || killed {
			fmt.Fprintln(&other, sc.Text())
			continue
		}
		if what == "tool" {
			tools++
			what = fmt.Sprintf("tool %d after %s", tools, prev)
		} else {
			prev, tools = what, 0
		}
		labels = append(labels, what)
		_, _ = io.WriteString(stdin, "\n") // a trainer that died shows in Wait
		if what == kill {
			time.Sleep(delay)
			if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			killed = true
		}
	}
	err = cmd.Wait()
	var exit *exec.ExitError
	switch {
	case kill == "" && err != nil, kill != "" && !killed:
		t.Fatalf("trainer process (kill at %q): %v\n%s\n%s", kill, err, tail(out.String()), tail(other.String()))
	case killed && !(errors.As(err, &exit) && exit.Sys().(syscall.WaitStatus).Signal() == syscall.SIGKILL):
		t.Fatalf("trainer process killed at %q ended with %v", kill, err)
	}
	return labels
}

// tail is the end of a process's output.
func tail(s string) string { return s[max(len(s)-3000, 0):] }

// dirNames lists the folder dir.
func dirNames(dir string) []string {
	entries, _ := os.ReadDir(dir)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}
