package grpo

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/mathrl/mathrl/data/arith"
	"github.com/mathrl/mathrl/gomlx_trainer/toolloop"
)

func TestWarmStartTracesToolFraction(t *testing.T) {
	probs, err := loadProblems("arith", 4000, 7, ArithTasks{MaxDigits: 2, Ops: "*+"})
	if err != nil {
		t.Fatal(err)
	}
	count := func(traces []Problem) (easyTool, easy, hardDirect int) {
		for _, p := range traces {
			switch {
			case !p.Trace.Hard():
				easy++
				if p.Trace.Code != "" {
					easyTool++
				}
			case p.Trace.Code == "":
				hardDirect++
			}
		}
		return
	}
	for _, tc := range []struct {
		fraction float64
		lo, hi   float64 // accepted share of easy tasks that call the tool
	}{{0, 0, 0}, {1, 1, 1}, {0.5, 0.42, 0.58}, {0.2, 0.13, 0.27}} {
		traces := warmStartTraces(probs, tc.fraction, 0, 3)
		if len(traces) != len(probs) {
			t.Fatalf("fraction %g: %d traces from %d problems", tc.fraction, len(traces), len(probs))
		}
		easyTool, easy, hardDirect := count(traces)
		if easy < 500 {
			t.Fatalf("only %d easy tasks among %d", easy, len(probs))
		}
		if hardDirect != 0 {
			t.Errorf("fraction %g: %d hard tasks answer directly", tc.fraction, hardDirect)
		}
		if share := float64(easyTool) / float64(easy); share < tc.lo || share > tc.hi {
			t.Errorf("fraction %g: %d of %d easy traces call the tool (%.3f)", tc.fraction, easyTool, easy, share)
		}
		for i, p := range traces {
			if p.ID != probs[i].ID || p.Trace.Task != probs[i].Trace.Task {
				t.Fatalf("fraction %g: trace %d is %s, want %s", tc.fraction, i, p.ID, probs[i].ID)
			}
		}
	}
	// The same seed picks the same traces; another seed picks others.
	a, b, c := warmStartTraces(probs, 0.5, 0, 3), warmStartTraces(probs, 0.5, 0, 3), warmStartTraces(probs, 0.5, 0, 4)
	same, differ := true, false
	for i := range a {
		same = same && a[i].Trace.Code == b[i].Trace.Code
		differ = differ || a[i].Trace.Code != c[i].Trace.Code
	}
	if !same || !differ {
		t.Errorf("seeded choice: same seed equal %v, other seed differs %v", same, differ)
	}
	// The input is left alone.
	if probs[0].Trace == nil || (probs[0].Trace.Code == "") == probs[0].Trace.Hard() {
		t.Errorf("input trace changed: %+v", probs[0].Trace)
	}
}

func TestWarmStartTracesUnprinted(t *testing.T) {
	probs, err := loadProblems("arith", 2000, 9, ArithTasks{MaxDigits: 1, Ops: "*"})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range probs {
		if p.Trace.Op != "*" || !strings.Contains(p.ID, "d1*") {
			t.Fatalf("ops \"*\" gave %s (%s)", p.Text, p.ID)
		}
	}
	traces := warmStartTraces(probs, 1, 0.5, 3)
	unprinted := 0
	for _, p := range traces {
		switch {
		case p.Trace.Code == "":
			t.Fatalf("%s: no tool call with sft_tool_fraction 1", p.Text)
		case !strings.HasPrefix(p.Trace.Code, "print("):
			unprinted++
			if want := arith.UnprintedToolTrace(p.Trace.Task); *p.Trace != want {
				t.Fatalf("%s: trace %+v, want %+v", p.Text, *p.Trace, want)
			}
		}
	}
	if share := float64(unprinted) / float64(len(traces)); share < 0.45 || share > 0.55 {
		t.Errorf("%d of %d traces unprinted (%.3f), want about half", unprinted, len(traces), share)
	}
	if _, err := loadProblems("arith", 10, 9, ArithTasks{MaxDigits: 1, Ops: "/"}); err == nil {
		t.Error("ops \"/\" accepted")
	}
}

// countingRunner answers "out:"+code, fails the programs in fail, returns an
// error (the sandbox's own) for those in broken, and counts the calls per
// program.
type countingRunner struct {
	mu     sync.Mutex
	calls  map[string]int
	fail   map[string]bool
	broken map[string]bool
}

func (c *countingRunner) Run(_ context.Context, code string) (toolloop.ToolOutput, error) {
	c.mu.Lock()
	c.calls[code]++
	c.mu.Unlock()
	if c.broken[code] {
		return toolloop.ToolOutput{Text: "partial"}, errors.New("sandbox: worker lost")
	}
	if c.fail[code] {
		return toolloop.ToolOutput{Text: "Traceback", Failed: true}, nil
	}
	return toolloop.ToolOutput{Text: "out:" + code}, nil
}

func TestOnceEachRunsEachProgramOnce(t *testing.T) {
	inner := &countingRunner{calls: map[string]int{}, fail: map[string]bool{"bad": true}}
	once := &onceEach{run: inner, out: map[string]toolloop.ToolOutput{}}
	codes := []string{"print(2*3)", "print(4*5)", "bad", "2*3"}
	var wg sync.WaitGroup
	errs := make(chan string, 100)
	for range 25 {
		for _, code := range codes {
			wg.Go(func() {
				out, err := once.Run(context.Background(), code)
				switch {
				case err != nil:
					errs <- err.Error()
				case code == "bad" && !out.Failed:
					errs <- "bad: failure lost"
				case code != "bad" && (out.Failed || out.Text != "out:"+code):
					errs <- code + ": got " + out.Text
				}
			})
		}
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	// Concurrent first calls may each reach the sandbox, so the good programs
	// run at least once and at most a few times; after that they never do.
	before := map[string]int{}
	for _, code := range codes {
		before[code] = inner.calls[code]
		if before[code] == 0 {
			t.Errorf("%s never ran", code)
		}
	}
	for _, code := range codes {
		if _, err := once.Run(context.Background(), code); err != nil {
			t.Fatal(err)
		}
	}
	for _, code := range codes {
		want := before[code]
		if code == "bad" {
			want++ // a failed run is not kept: it runs again
		}
		if got := inner.calls[code]; got != want {
			t.Errorf("%s: %d runs after one more call, want %d", code, got, want)
		}
	}
	if inner.calls["bad"] != 26 {
		t.Errorf("the failing program ran %d times in 26 calls, want every time", inner.calls["bad"])
	}
}

// TestOnceEachKeepsNoErrorAndNoOtherCode checks that a call the sandbox
// answers with an error is not kept, and that programs which differ only in
// white space are different programs (Python refuses the indented one).
func TestOnceEachKeepsNoErrorAndNoOtherCode(t *testing.T) {
	inner := &countingRunner{calls: map[string]int{}, broken: map[string]bool{"print(1)": true}}
	once := &onceEach{run: inner, out: map[string]toolloop.ToolOutput{}}
	for i := range 3 {
		if _, err := once.Run(context.Background(), "print(1)"); err == nil {
			t.Errorf("call %d: the sandbox's error was lost", i+1)
		}
	}
	if got := inner.calls["print(1)"]; got != 3 {
		t.Errorf("a program whose run errs ran %d times in 3 calls, want every time", got)
	}
	codes := []string{"print(7)", " print(7)", "print(7)\n"}
	for range 2 {
		for _, code := range codes {
			out, err := once.Run(context.Background(), code)
			if err != nil || out.Text != "out:"+code {
				t.Errorf("%q: got %q, %v, want its own output", code, out.Text, err)
			}
		}
	}
	for _, code := range codes {
		if got := inner.calls[code]; got != 1 {
			t.Errorf("%q ran %d times in 2 calls, want once", code, got)
		}
	}
}

// TestWarmStartRunsEachProgramOnce runs a few warm-start steps over fewer
// traces than they take, one tool call at a time: each distinct program
// reaches the tool runner once however often its trace comes back.
func TestWarmStartRunsEachProgramOnce(t *testing.T) {
	cfg := smokeConfig(t)
	cfg.SFTSteps, cfg.SFTBatchSize, cfg.MicroBatchSize, cfg.ToolConcurrency = 3, 4, 4, 1
	cfg.SFTToolFraction, cfg.SFTUnprintedFraction = 1, 0
	train, err := loadProblems("arith", 3, 5, ArithTasks{MaxDigits: 2, Ops: "*"})
	if err != nil {
		t.Fatal(err)
	}
	distinct := map[string]bool{}
	for _, p := range warmStartTraces(train, cfg.SFTToolFraction, cfg.SFTUnprintedFraction, uint64(cfg.Seed)) {
		distinct[p.Trace.Code] = true
	}
	model, proto := policyAndProtocol(t, cfg)
	l := NewLearner(testBackend(t), model, LossConfig{EpsLow: 0.2, EpsHigh: 0.28}, AdamWConfig{Beta1: 0.9, Beta2: 0.999, Eps: 1e-8}, 1)
	inner := &countingRunner{calls: map[string]int{}}
	var st TrainState
	if err := runWarmStart(context.Background(), cfg, &st, l, proto, inner, train, newProgress(nil)); err != nil {
		t.Fatal(err)
	}
	if st.SFTStep != cfg.SFTSteps {
		t.Errorf("warm start ended at step %d, want %d", st.SFTStep, cfg.SFTSteps)
	}
	if len(distinct) == 0 || len(distinct) >= cfg.SFTSteps*cfg.SFTBatchSize {
		t.Fatalf("%d distinct programs in %d traces: want some repeated", len(distinct), cfg.SFTSteps*cfg.SFTBatchSize)
	}
	if len(inner.calls) != len(distinct) {
		t.Errorf("%d programs ran, want the %d of the traces", len(inner.calls), len(distinct))
	}
	for code, n := range inner.calls {
		if !distinct[code] || n != 1 {
			t.Errorf("%q ran %d times, want once", code, n)
		}
	}
}
