package toolloop

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/mathrl/mathrl/analysis/metrics"
)

// Session is a batch of sequences being generated, as the rollout loop drives
// it. The sampler implements it (keeping its KV cache between calls).
type Session interface {
	// Generate continues the sequences listed in active, sequence active[j] by
	// at most maxNew[j] tokens, each stopping after the first token that is one
	// of the session's stop tokens. It returns one Turn per active sequence.
	// When step is not nil, Generate calls it after each decoding step with
	// what the step did.
	Generate(ctx context.Context, active []int, maxNew []int, step func(StepReport)) ([]Turn, error)
	// Append adds tokens the model did not sample (a tool response) to the end
	// of sequence i, without recomputing its prefix.
	Append(i int, ids []int) error
}

// StepReport is what one decoding step inside Session.Generate did.
type StepReport struct {
	Sampled int   // tokens sampled, over all sequences
	Stopped []int // the last token of each sequence that stopped sampling in this step
}

// Turn is what one Generate call added to one sequence.
type Turn struct {
	IDs      []int     // sampled tokens, the stop token included
	LogProbs []float32 // log-probability of each sampled token under the sampling distribution
}

// ToolRunner runs one code_interpreter call and returns the text the model
// sees. An error means the runner itself failed (not the program): the loop
// then shows the model the error text and counts a tool error; it never stops.
type ToolRunner interface {
	Run(ctx context.Context, code string) (ToolOutput, error)
}

// ToolOutput is the result of one tool call.
type ToolOutput struct {
	Text     string // what the model sees
	Failed   bool   // the program failed (error exit, killed, timed out): counted as a tool error
	NoOutput bool   // the program ran and exited cleanly but printed nothing (a forgotten print())
}

// Protocol is the text side of the tool protocol (the tokenizer implements it).
type Protocol interface {
	// Decode turns sampled ids into text, special tokens kept.
	Decode(ids []int) string
	// ParseToolCall returns the code of the last <tool_call> block in text. A
	// malformed call gives an error whose message is shown to the model as the
	// tool response.
	ParseToolCall(text string) (code string, err error)
	// ToolResponseIDs renders the tool-response turn appended after a call:
	// <|im_end|>\n<|im_start|>user\n<tool_response>\n...\n</tool_response><|im_end|>\n<|im_start|>assistant\n
	ToolResponseIDs(response string) []int
}

// Options are the rollout loop's limits.
type Options struct {
	Budget       int // response tokens per sample, tool responses included
	MaxTurns     int // tool calls per sample; the model's next call ends it with finish tool-limit
	UseTools     bool
	EndIDs       []int // <|im_end|>, <|endoftext|>: tokens that end the assistant's answer
	ToolCallEnd  int   // </tool_call>: generation pauses here for the tool
	Concurrency  int   // tool calls run at once (at least 1)
	ToolDeadline time.Duration
	Progress     Progress // hears how the Run goes (nil: nobody)
}

// Progress hears how a Run goes. Run calls Update after every decoding step,
// every tool call and every turn, never from two goroutines at once; Update
// should return quickly, and it must not keep s's slices (s has none).
type Progress interface {
	Update(s Status)
}

// Status is how far a Run has got.
type Status struct {
	Total     int // sequences in the Run
	Finished  int // sequences that are done; one that stops at a tool call is not, until it ends
	Tokens    int // tokens the policy sampled so far
	ToolCalls int // tool calls run so far (malformed ones included)
	Steps     int // decoding steps so far
	// StepsLeft bounds the decoding steps still to come: the largest budget
	// left to a running sequence (tool responses, if any, take part of it).
	StepsLeft int
}

// Sample is one finished response.
type Sample struct {
	IDs        []int          // response ids after the prompt: sampled tokens and tool responses
	LogProbs   []float32      // sampling log-prob per id; 0 where Mask is 0
	Mask       []float32      // 1 on tokens the policy sampled, 0 on tool responses and template glue
	Text       string         // the response decoded, tool responses included
	Finish     metrics.Finish // stop, length or tool-limit
	ToolCalls  int            // code_interpreter calls run
	ToolErrors int            // calls that failed to parse or to run, or whose program failed
	NoOutput   int            // calls whose program ran cleanly but printed nothing
}

// Stats are the wall-clock times of a Run.
type Stats struct {
	GenerateSeconds float64 // in Session.Generate
	ToolSeconds     float64 // running tool calls
	SampledTokens   int     // tokens the policy sampled
}

// Run drives session over n sequences (the session already holds their
// prompts) until each ends its turn, runs out of budget, or reaches the
// tool-call limit. Tool calls of one round run concurrently through tools.
func Run(ctx context.Context, session Session, n int, proto Protocol, tools ToolRunner, opt Options) ([]Sample, Stats, error) {
	l := &loop{session: session, proto: proto, opt: opt,
		samples: make([]Sample, n), done: make([]bool, n), status: Status{Total: n}}
	for {
		// --- who still generates, and how far each may go
		active, maxNew := l.plan()
		if len(active) == 0 {
			break
		}

		// --- generate one turn for every active sequence
		t0 := time.Now()
		turns, err := l.generate(ctx, active, maxNew)
		l.st.GenerateSeconds += time.Since(t0).Seconds()
		if err != nil {
			return nil, l.st, err
		}

		// --- end of turn, budget, or a tool call
		calls := l.endTurns(active, turns)

		// --- run the tool calls, append their responses as tokens
		t0 = time.Now()
		runCalls(ctx, calls, proto, tools, opt, l.toolCallDone)
		l.st.ToolSeconds += time.Since(t0).Seconds()
		if err := ctx.Err(); err != nil {
			return nil, l.st, fmt.Errorf("rollout: %w", err)
		}
		if err := l.appendResponses(calls); err != nil {
			return nil, l.st, err
		}
	}
	for i := range l.samples {
		l.samples[i].Text = proto.Decode(l.samples[i].IDs)
	}
	return l.samples, l.st, nil
}

// loop is one Run in progress.
type loop struct {
	session Session
	proto   Protocol
	opt     Options
	samples []Sample
	done    []bool
	st      Stats

	mu     sync.Mutex // guards status while tool calls run
	status Status     // what Progress last heard
}

// plan returns the sequences that still generate, with the budget left to
// each, and marks those out of budget as finished on length.
func (l *loop) plan() (active, maxNew []int) {
	for i := range l.samples {
		if l.done[i] {
			continue
		}
		left := l.opt.Budget - len(l.samples[i].IDs)
		if left <= 0 {
			l.samples[i].Finish, l.done[i] = metrics.FinishLength, true
			continue
		}
		active, maxNew = append(active, i), append(maxNew, left)
	}
	return active, maxNew
}

// generate runs one turn of the active sequences, telling Progress of every
// decoding step, and checks what the session returned.
func (l *loop) generate(ctx context.Context, active, maxNew []int) ([]Turn, error) {
	var step func(StepReport)
	if l.opt.Progress != nil {
		l.status.Finished, l.status.StepsLeft = l.finished(), slices.Max(maxNew)
		step = l.stepDone
	}
	turns, err := l.session.Generate(ctx, active, maxNew, step)
	if err != nil {
		return nil, fmt.Errorf("rollout: %w", err)
	}
	if len(turns) != len(active) {
		return nil, fmt.Errorf("rollout: sampler returned %d turns for %d sequences", len(turns), len(active))
	}
	for j, tr := range turns {
		if len(tr.IDs) != len(tr.LogProbs) || len(tr.IDs) > maxNew[j] {
			return nil, fmt.Errorf("rollout: sequence %d: sampler returned %d ids, %d log-probs for at most %d", active[j], len(tr.IDs), len(tr.LogProbs), maxNew[j])
		}
	}
	return turns, nil
}

// endTurns appends each turn to its sample and decides how it ended: the
// answer's end, a tool call (returned, to run), the tool-call limit, or the
// budget.
func (l *loop) endTurns(active []int, turns []Turn) []pendingCall {
	var calls []pendingCall
	for j, i := range active {
		tr := turns[j]
		s := &l.samples[i]
		s.IDs = append(s.IDs, tr.IDs...)
		s.LogProbs = append(s.LogProbs, tr.LogProbs...)
		for range tr.IDs {
			s.Mask = append(s.Mask, 1)
		}
		l.st.SampledTokens += len(tr.IDs)
		last := -1
		if len(tr.IDs) > 0 {
			last = tr.IDs[len(tr.IDs)-1]
		}
		switch {
		case slices.Contains(l.opt.EndIDs, last):
			s.Finish, l.done[i] = metrics.FinishStop, true
		case l.opt.UseTools && last == l.opt.ToolCallEnd:
			if s.ToolCalls >= l.opt.MaxTurns {
				s.Finish, l.done[i] = metrics.FinishToolLimit, true
				continue
			}
			calls = append(calls, pendingCall{seq: i, text: l.proto.Decode(tr.IDs)})
		default: // the budget (or the sampler's cache) ran out mid-turn
			s.Finish, l.done[i] = metrics.FinishLength, true
		}
	}
	l.status.Tokens, l.status.Finished, l.status.StepsLeft = l.st.SampledTokens, l.finished(), l.budgetLeft()
	l.report(l.status)
	return calls
}

// appendResponses appends each call's tool-response turn to its sequence,
// cut to the budget left.
func (l *loop) appendResponses(calls []pendingCall) error {
	for _, c := range calls {
		s := &l.samples[c.seq]
		s.ToolCalls++
		if c.failed {
			s.ToolErrors++
		}
		if c.noOutput {
			s.NoOutput++
		}
		ids := l.proto.ToolResponseIDs(c.response)
		if room := l.opt.Budget - len(s.IDs); len(ids) > room {
			ids = ids[:room] // the response does not fit: cut it, and the sample ends on length
		}
		if err := l.session.Append(c.seq, ids); err != nil {
			return fmt.Errorf("rollout: sequence %d: %w", c.seq, err)
		}
		s.IDs = append(s.IDs, ids...)
		for range ids {
			s.LogProbs = append(s.LogProbs, 0)
			s.Mask = append(s.Mask, 0)
		}
	}
	return nil
}

// finished counts the sequences that are done.
func (l *loop) finished() int {
	n := 0
	for _, d := range l.done {
		if d {
			n++
		}
	}
	return n
}

// budgetLeft is the largest budget left to a sequence that is not done.
func (l *loop) budgetLeft() int {
	left := 0
	for i, s := range l.samples {
		if !l.done[i] {
			left = max(left, l.opt.Budget-len(s.IDs))
		}
	}
	return left
}

// stepDone counts one decoding step of the turn being generated.
func (l *loop) stepDone(r StepReport) {
	s := l.status
	s.Tokens += r.Sampled
	s.Steps++
	s.StepsLeft = max(s.StepsLeft-1, 0)
	for _, id := range r.Stopped {
		if !l.opt.UseTools || id != l.opt.ToolCallEnd {
			s.Finished++ // stopped for good: an end token, or the budget
		}
	}
	l.report(s)
}

// toolCallDone counts one tool call run; runCalls calls it from the call's
// goroutine.
func (l *loop) toolCallDone() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.status.ToolCalls++
	l.report(l.status)
}

// report hands s to Progress, if any, and keeps it as the Run's status.
func (l *loop) report(s Status) {
	l.status = s
	if l.opt.Progress != nil {
		l.opt.Progress.Update(s)
	}
}

type pendingCall struct {
	seq      int
	text     string // the turn's text, ending in </tool_call>
	response string
	failed   bool
	noOutput bool
}

// runCalls parses and runs calls, at most opt.Concurrency at a time, filling
// in each response, and calls done after each call. A parse error or runner
// error becomes the response text.
func runCalls(ctx context.Context, calls []pendingCall, proto Protocol, tools ToolRunner, opt Options, done func()) {
	conc := max(opt.Concurrency, 1)
	sem := make(chan struct{}, conc)
	var wg sync.WaitGroup
	for k := range calls {
		c := &calls[k]
		code, err := proto.ParseToolCall(c.text)
		if err != nil {
			c.response, c.failed = err.Error(), true
			done()
			continue
		}
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer done()
			defer func() { <-sem }()
			defer func() { // a crashing runner is a tool error, never the end of the run
				if r := recover(); r != nil {
					c.response, c.failed = fmt.Sprintf("tool error: %v", r), true
				}
			}()
			cctx := ctx
			if opt.ToolDeadline > 0 {
				var cancel context.CancelFunc
				cctx, cancel = context.WithTimeout(ctx, opt.ToolDeadline)
				defer cancel()
			}
			out, err := tools.Run(cctx, code)
			if err != nil {
				c.response, c.failed = "tool error: "+err.Error(), true
				return
			}
			c.response, c.failed, c.noOutput = out.Text, out.Failed, out.NoOutput && !out.Failed
		}()
	}
	wg.Wait()
}
