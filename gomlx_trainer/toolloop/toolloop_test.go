package toolloop

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mathrl/mathrl/analysis/metrics"
)

// A fake byte-level protocol: ids 0..255 are bytes, 256 ends the turn, 257
// closes a tool call.
const (
	endID  = 256
	callID = 257
)

type fakeProto struct{}

func (fakeProto) Decode(ids []int) string {
	var b strings.Builder
	for _, id := range ids {
		switch id {
		case endID:
			b.WriteString("<|im_end|>")
		case callID:
			b.WriteString("</tool_call>")
		default:
			b.WriteByte(byte(id))
		}
	}
	return b.String()
}

func (fakeProto) ParseToolCall(text string) (string, error) {
	_, after, ok := strings.Cut(text, "<tool_call>code:")
	if !ok {
		return "", errors.New("malformed tool call")
	}
	return strings.TrimSuffix(after, "</tool_call>"), nil
}

func (fakeProto) ToolResponseIDs(resp string) []int {
	return append([]int{endID}, bytesIDs("\nRESP:"+resp+"\n")...)
}

func bytesIDs(s string) []int {
	ids := make([]int, len(s))
	for i := range s {
		ids[i] = int(s[i])
	}
	return ids
}

// fakeSession plays a script of turns per sequence; a turn ends with endID or
// callID unless it is cut by maxNew.
type fakeSession struct {
	script   [][][]int
	next     []int
	appended [][]int
}

func turnOf(text string, stop int) []int { return append(bytesIDs(text), stop) }

// Generate plays the next turn of each active sequence, as a sampler would:
// step k samples token k of every turn that is that long.
func (f *fakeSession) Generate(_ context.Context, active, maxNew []int, step func(StepReport)) ([]Turn, error) {
	out := make([]Turn, len(active))
	longest := 0
	for j, i := range active {
		ids := f.script[i][f.next[i]]
		f.next[i]++
		if len(ids) > maxNew[j] {
			ids = ids[:maxNew[j]]
		}
		lp := make([]float32, len(ids))
		for k := range lp {
			lp[k] = -0.5
		}
		out[j] = Turn{IDs: ids, LogProbs: lp}
		longest = max(longest, len(ids))
	}
	for k := 1; step != nil && k <= longest; k++ {
		var r StepReport
		for _, tr := range out {
			if len(tr.IDs) >= k {
				r.Sampled++
			}
			if len(tr.IDs) == k {
				r.Stopped = append(r.Stopped, tr.IDs[k-1])
			}
		}
		step(r)
	}
	return out, nil
}

func (f *fakeSession) Append(i int, ids []int) error {
	f.appended[i] = append(f.appended[i], ids...)
	return nil
}

type fakeTools struct {
	running, peak atomic.Int32
}

func (f *fakeTools) Run(ctx context.Context, code string) (ToolOutput, error) {
	n := f.running.Add(1)
	defer f.running.Add(-1)
	for {
		p := f.peak.Load()
		if n <= p || f.peak.CompareAndSwap(p, n) {
			break
		}
	}
	// A slow tool: calls overlap, so that peak can exceed the concurrency
	// limit if runCalls ignores it. Nothing in the test waits on this timing.
	time.Sleep(20 * time.Millisecond)
	switch code {
	case "fail":
		return ToolOutput{}, errors.New("sandbox broke")
	case "panic":
		panic("runner crashed")
	case "exit1":
		return ToolOutput{Text: "Traceback", Failed: true}, nil
	case "silent":
		return ToolOutput{Text: "[no output]", NoOutput: true}, nil
	}
	return ToolOutput{Text: "out(" + code + ")"}, nil
}

func call(code string) []int { return turnOf("<tool_call>code:"+code, callID) }

// script plays every way a sample can end.
func script() [][][]int {
	return [][][]int{
		{turnOf("hi", endID)},                                   // 0: plain answer
		{call("1+1"), turnOf("ans 2", endID)},                   // 1: one tool call
		{call("a"), call("b"), call("c"), turnOf("x", endID)},   // 2: third call passes the limit of 2
		{turnOf(strings.Repeat("z", 200), endID)},               // 3: runs out of budget
		{call("fail"), call("panic"), turnOf("ok", endID)},      // 4: runner errors do not stop anything
		{turnOf("<tool_call>oops", callID), turnOf("k", endID)}, // 5: malformed call
		{call(strings.Repeat("q", 60))},                         // 6: tool response overflows the budget
		{call("exit1"), turnOf("k", endID)},                     // 7: a failing program is a tool error
		{turnOf("abc", 'z')},                                    // 8: the sampler stopped early (cache full)
		{call("silent"), call("1"), turnOf("k", endID)},         // 9: a call that printed nothing
	}
}

func newFakeSession(script [][][]int) *fakeSession {
	return &fakeSession{script: script, next: make([]int, len(script)), appended: make([][]int, len(script))}
}

func TestRun(t *testing.T) {
	sess := newFakeSession(script())
	n := len(sess.script)
	tools := &fakeTools{}
	opt := Options{Budget: 120, MaxTurns: 2, UseTools: true, EndIDs: []int{endID}, ToolCallEnd: callID, Concurrency: 2}
	samples, st, err := Run(context.Background(), sess, n, fakeProto{}, tools, opt)
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		finish              metrics.Finish
		calls, errs, silent int
	}{
		{metrics.FinishStop, 0, 0, 0},
		{metrics.FinishStop, 1, 0, 0},
		{metrics.FinishToolLimit, 2, 0, 0},
		{metrics.FinishLength, 0, 0, 0},
		{metrics.FinishStop, 2, 2, 0},
		{metrics.FinishStop, 1, 1, 0},
		{metrics.FinishLength, 1, 0, 0},
		{metrics.FinishStop, 1, 1, 0},
		{metrics.FinishLength, 0, 0, 0},
		{metrics.FinishStop, 2, 0, 1},
	}
	for i, s := range samples {
		if s.Finish != want[i].finish || s.ToolCalls != want[i].calls || s.ToolErrors != want[i].errs || s.NoOutput != want[i].silent {
			t.Errorf("sample %d: finish %s, calls %d, errors %d, no output %d; want %+v (text %q)", i, s.Finish, s.ToolCalls, s.ToolErrors, s.NoOutput, want[i], s.Text)
		}
		if len(s.IDs) > opt.Budget || len(s.Mask) != len(s.IDs) || len(s.LogProbs) != len(s.IDs) {
			t.Errorf("sample %d: %d ids, %d mask, %d log-probs, budget %d", i, len(s.IDs), len(s.Mask), len(s.LogProbs), opt.Budget)
		}
		// the tokens with mask 0 are exactly the ones appended by the loop
		var masked []int
		for k, m := range s.Mask {
			if m == 0 {
				masked = append(masked, s.IDs[k])
				if s.LogProbs[k] != 0 {
					t.Errorf("sample %d token %d: log-prob %v on a tool token", i, k, s.LogProbs[k])
				}
			} else if s.LogProbs[k] != -0.5 {
				t.Errorf("sample %d token %d: log-prob %v, want the sampler's -0.5", i, k, s.LogProbs[k])
			}
		}
		if !equalInts(masked, sess.appended[i]) {
			t.Errorf("sample %d: masked tokens %v, appended %v", i, masked, sess.appended[i])
		}
	}
	if got := samples[3].IDs; len(got) != opt.Budget {
		t.Errorf("budget sample has %d ids, want %d", len(got), opt.Budget)
	}
	if !strings.Contains(samples[1].Text, "RESP:out(1+1)") || !strings.HasSuffix(samples[1].Text, "ans 2<|im_end|>") {
		t.Errorf("sample 1 text %q", samples[1].Text)
	}
	if !strings.Contains(samples[4].Text, "tool error: sandbox broke") || !strings.Contains(samples[4].Text, "runner crashed") {
		t.Errorf("sample 4 text %q", samples[4].Text)
	}
	if !strings.Contains(samples[5].Text, "RESP:malformed tool call") {
		t.Errorf("sample 5 text %q", samples[5].Text)
	}
	if p := tools.peak.Load(); p > 2 {
		t.Errorf("%d tool calls ran at once, limit 2", p)
	}
	if st.SampledTokens == 0 || st.ToolSeconds <= 0 {
		t.Errorf("stats %+v", st)
	}
}

// statusLog keeps every Status it hears.
type statusLog []Status

func (l *statusLog) Update(s Status) { *l = append(*l, s) }

func TestRunProgress(t *testing.T) {
	sess := newFakeSession(script())
	n := len(sess.script)
	var got statusLog
	opt := Options{Budget: 120, MaxTurns: 2, UseTools: true, EndIDs: []int{endID}, ToolCallEnd: callID, Concurrency: 2, Progress: &got}
	samples, st, err := Run(context.Background(), sess, n, fakeProto{}, &fakeTools{}, opt)
	if err != nil {
		t.Fatal(err)
	}
	// Mid-turn: sequence 0 ends its answer at step 3, sequence 8 is cut by its
	// sampler at step 4 (sequence 0 samples nothing there); sequences stopped
	// at a tool call are not finished.
	if len(got) < 4 {
		t.Fatalf("%d updates, want at least one per decoding step", len(got))
	}
	if want := (Status{Total: n, Finished: 1, Tokens: 3 * n, Steps: 3, StepsLeft: 117}); got[2] != want {
		t.Errorf("after step 3: %+v, want %+v", got[2], want)
	}
	if want := (Status{Total: n, Finished: 2, Tokens: 4*n - 1, Steps: 4, StepsLeft: 116}); got[3] != want {
		t.Errorf("after step 4: %+v, want %+v", got[3], want)
	}
	calls := 0
	for _, s := range samples {
		calls += s.ToolCalls
	}
	last := got[len(got)-1]
	if want := (Status{Total: n, Finished: n, Tokens: st.SampledTokens, ToolCalls: calls, Steps: last.Steps}); last != want {
		t.Errorf("last update %+v, want %+v", last, want)
	}
	for k := 1; k < len(got); k++ {
		a, b := got[k-1], got[k]
		if b.Finished < a.Finished || b.Tokens < a.Tokens || b.Steps < a.Steps || b.ToolCalls < a.ToolCalls || b.ToolCalls > a.ToolCalls+1 {
			t.Errorf("update %d went from %+v to %+v", k, a, b)
		}
	}
}

func TestRunWithoutTools(t *testing.T) {
	// With tools off, </tool_call> is an ordinary token inside the turn.
	turn := append(append(bytesIDs("<tool_call>code:x"), callID), turnOf("y", endID)...)
	sess := newFakeSession([][][]int{{turn}})
	samples, _, err := Run(context.Background(), sess, 1, fakeProto{}, nil, Options{Budget: 100, EndIDs: []int{endID}, ToolCallEnd: callID})
	if err != nil {
		t.Fatal(err)
	}
	if s := samples[0]; s.Finish != metrics.FinishStop || s.ToolCalls != 0 || len(sess.appended[0]) != 0 || len(s.IDs) != len(turn) {
		t.Errorf("sample %+v", s)
	}
}

// TestRunWithoutToolsEndingOnToolCall has the budget cut a turn right after
// </tool_call> with tools off: the turn ended on the budget, and no call runs.
func TestRunWithoutToolsEndingOnToolCall(t *testing.T) {
	call := append(bytesIDs("<tool_call>code:x"), callID)
	sess := newFakeSession([][][]int{{append(call, turnOf("y", endID)...)}})
	tools := &fakeTools{}
	samples, _, err := Run(context.Background(), sess, 1, fakeProto{}, tools, Options{Budget: len(call), MaxTurns: 2, EndIDs: []int{endID}, ToolCallEnd: callID})
	if err != nil {
		t.Fatal(err)
	}
	s := samples[0]
	if s.Finish != metrics.FinishLength || s.ToolCalls != 0 || len(sess.appended[0]) != 0 || !equalInts(s.IDs, call) || tools.peak.Load() != 0 {
		t.Errorf("sample %+v (appended %v, tool calls run: %v), want %v ending on %q", s, sess.appended[0], tools.peak.Load() > 0, call, metrics.FinishLength)
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
