package grpo

import (
	"context"
	"fmt"
	"os/exec"
	"reflect"
	"runtime"
	"testing"

	"github.com/mathrl/mathrl/data/arith"
)

// TestToolCallsRepeatUnderLoad runs the warm start's tool path (traceSequences
// through the run's sandbox, wired by newToolRunner) on the machine as it is,
// then again beside 8 busy processes per CPU, and wants the same sequences
// both times, each with the tool output computed here in Go. Every call
// computes for about half a second of CPU under tool_timeout 2 s: beside that
// load it takes several times as long in wall time, which a wall-clock limit
// of tool_timeout would have cut (a cut call's trace is left out).
func TestToolCallsRepeatUnderLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: runs busy processes")
	}
	cfg := Default()
	cfg.Tokenizer, cfg.UseTools = "bytes", true
	cfg.ToolTimeout, cfg.ToolConcurrency = 2, 2
	proto, _, err := newProtocol(cfg, 300)
	if err != nil {
		t.Fatal(err)
	}
	tools, closeTools, _, err := newToolRunner(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer closeTools()

	var problems []Problem
	var want []Sequence
	for k := range 4 {
		const n = 2_000_000 // about 0.5 s of CPU in CPython
		tr := arith.Trace{Task: arith.New("+", int64(k), 1), Final: fmt.Sprintf(`\boxed{%d}`, k+1),
			Code: fmt.Sprintf("s = 0\nfor i in range(%d):\n    s += i * i %% %d\nprint(s)", n, 7+k)}
		problems = append(problems, Problem{ID: fmt.Sprint(k), Text: tr.Problem, Trace: &tr})
		var s int64
		for i := range int64(n) {
			s += i * i % int64(7+k)
		}
		seq, err := traceSequence(proto, tr, fmt.Sprintf("%d\n", s))
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, seq)
	}

	quiet, err := traceSequences(context.Background(), proto, tools, problems, cfg.ToolConcurrency)
	if err != nil {
		t.Fatal(err)
	}
	stop := busyProcesses(t, 8*runtime.GOMAXPROCS(0))
	loaded, err := traceSequences(context.Background(), proto, tools, problems, cfg.ToolConcurrency)
	stop()
	if err != nil {
		t.Fatal(err)
	}
	for _, run := range []struct {
		name string
		seqs []Sequence
	}{{"quiet", quiet}, {"loaded", loaded}} {
		if !reflect.DeepEqual(run.seqs, want) {
			t.Errorf("%s run: %d sequences, want %d; the first that differs:\n%s", run.name, len(run.seqs), len(want), firstDiff(proto.Decode, run.seqs, want))
		}
	}
}

// firstDiff decodes the first response of got that differs from want's.
func firstDiff(decode func([]int) string, got, want []Sequence) string {
	for i := range min(len(got), len(want)) {
		if !reflect.DeepEqual(got[i], want[i]) {
			return fmt.Sprintf("got  %q\nwant %q", decode(got[i].Response), decode(want[i].Response))
		}
	}
	return "(a sequence is missing)"
}

// busyProcesses starts n processes that spin until stop is called (or the test ends).
func busyProcesses(t *testing.T, n int) (stop func()) {
	t.Helper()
	var cmds []*exec.Cmd
	stop = func() {
		for _, c := range cmds {
			c.Process.Kill()
			c.Wait()
		}
		cmds = nil
	}
	t.Cleanup(stop)
	for range n {
		c := exec.Command("/bin/sh", "-c", "while :; do :; done")
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		cmds = append(cmds, c)
	}
	return stop
}
