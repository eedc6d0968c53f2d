package grpo

import (
	"bytes"
	"context"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/mathrl/mathrl/gomlx_trainer/engine/inprocess"
	"github.com/mathrl/mathrl/gomlx_trainer/sampler"
	"github.com/mathrl/mathrl/gomlx_trainer/toolloop"
)

// TestPhaseLines drives a phase of two batches of 4 sequences on a fake
// clock: a line only once 30 s have passed since the last, counts summed over
// the batches, and the time left at the time per decoding step since the
// last line, when there were enough steps to tell.
func TestPhaseLines(t *testing.T) {
	var buf bytes.Buffer
	clock := time.Unix(0, 0)
	p := &progress{w: &buf, now: func() time.Time { return clock }, every: 30 * time.Second}
	ph := p.phase("rollout 1", 8, 4, 100)
	at := func(s int, pr toolloop.Progress, st toolloop.Status) {
		clock = time.Unix(int64(s), 0)
		pr.Update(st)
	}
	b := ph.batch()
	at(10, b, toolloop.Status{Total: 4, Tokens: 40, Steps: 10, StepsLeft: 90})
	// 30 steps in 30 s; 70 steps left in this batch and at most 100 in the next
	at(30, b, toolloop.Status{Total: 4, Finished: 1, Tokens: 120, Steps: 30, StepsLeft: 70})
	at(45, b, toolloop.Status{Total: 4, Finished: 4, Tokens: 300, Steps: 100})
	b = ph.batch()
	// 80 steps in the 30 s since the last line; 50 steps left, in the last batch
	at(60, b, toolloop.Status{Total: 4, Finished: 2, Tokens: 20, ToolCalls: 3, Steps: 10, StepsLeft: 50})
	// 5 steps in the 30 s since the last line: too few to tell the time left
	at(90, b, toolloop.Status{Total: 4, Finished: 3, Tokens: 25, ToolCalls: 3, Steps: 15, StepsLeft: 45})
	want := "mathrl: rollout 1: 1/8 sequences done, 120 tokens (4/s); 30s, at most 2m50s left\n" +
		"mathrl: rollout 1: 6/8 sequences done, 320 tokens (5.33/s), 3 tool calls; 1m0s, at most 19s left\n" +
		"mathrl: rollout 1: 7/8 sequences done, 325 tokens (3.61/s), 3 tool calls; 1m30s\n"
	if got := buf.String(); got != want {
		t.Errorf("phase lines:\n%s\nwant\n%s", got, want)
	}
	if pr := (*phase)(nil).batch(); pr != nil {
		t.Errorf("a nil phase's batch has the Progress %v, want nil", pr)
	}
}

// statusLog keeps every Status it hears.
type statusLog []toolloop.Status

func (l *statusLog) Update(s toolloop.Status) { *l = append(*l, s) }

// TestGenerateProgress runs the tool loop on a tiny random policy with and
// without a Progress: listening changes no sample, and the sampler adapter
// reports every sampled token, step by step.
func TestGenerateProgress(t *testing.T) {
	cfg := Default()
	cfg.TinyModel, cfg.Tokenizer = "tiny", "bytes"
	model, proto := policyAndProtocol(t, cfg)
	prompt, err := proto.PromptIDs("What is 6*7?")
	if err != nil {
		t.Fatal(err)
	}
	prompts := [][]int{prompt, prompt, prompt, prompt}
	smp := inprocess.New(sampler.New(testBackend(t), model))
	o := genOptions{budget: 24, temperature: 1, topP: 1, seed: 5}
	quiet, _, err := generate(context.Background(), smp, proto, nil, prompts, o)
	if err != nil {
		t.Fatal(err)
	}
	var heard statusLog
	o.progress = &heard
	loud, st, err := generate(context.Background(), smp, proto, nil, prompts, o)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(quiet, loud) {
		t.Error("the samples differ when a Progress listens")
	}
	// One turn (no tools): an update per decoding step, then one at its end.
	longest := 0
	for _, s := range loud {
		longest = max(longest, len(s.IDs))
	}
	steps := heard[:len(heard)-1]
	if len(steps) < longest {
		t.Fatalf("%d updates for at least %d decoding steps", len(steps), longest)
	}
	if last := steps[len(steps)-1]; last.Tokens != st.SampledTokens || last.Finished != len(prompts) || last.Steps != len(steps) {
		t.Errorf("after the last step: %+v; want %d tokens, %d finished, %d steps", last, st.SampledTokens, len(prompts), len(steps))
	}
}

// TestProgressFromTwoGoroutines writes phase lines from one goroutine (an
// async_rollouts draw) and log lines from another (the trainer) to one plain
// buffer: every line arrives whole. Without the progress's lock the buffer's
// writes race (go test -race reports it; without -race they may interleave).
func TestProgressFromTwoGoroutines(t *testing.T) {
	var buf bytes.Buffer
	p := newProgress(&buf)
	p.every = 0 // a line at every update
	ph := p.phase("rollout 2", 4, 4, 10)
	done := make(chan struct{})
	go func() {
		defer close(done)
		b := ph.batch()
		for i := range 100 {
			b.Update(toolloop.Status{Total: 4, Tokens: i, Steps: i})
		}
	}()
	for i := range 100 {
		p.Printf("step %d", i)
	}
	<-done
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	if len(lines) != 200 {
		t.Fatalf("%d lines, want 200", len(lines))
	}
	for _, l := range lines {
		if !strings.HasPrefix(l, "mathrl: step ") && !strings.HasPrefix(l, "mathrl: rollout 2: ") {
			t.Errorf("line %q is not whole", l)
		}
	}
}
