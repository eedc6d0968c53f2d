package rollout

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
	Generate(ctx context.Context, active []int, maxNew []int) ([]Turn, error)
	// Append adds tokens the model did not sample (a tool response) to the end
	// of sequence i, without recomputing its prefix.
	Append(i int, ids []int) error
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
	var st Stats
	samples := make([]Sample, n)
	done := make([]bool, n)
	for {
		// --- who still generates, and how far each may go
		var active, maxNew []int
		for i := range samples {
			if done[i] {
				continue
			}
			left := opt.Budget - len(samples[i].IDs)
			if left <= 0 {
				samples[i].Finish, done[i] = metrics.FinishLength, true
				continue
			}
			active, maxNew = append(active, i), append(maxNew, left)
		}
		if len(active) == 0 {
			break
		}

		// --- generate one turn for every active sequence
		t0 := time.Now()
		turns, err := session.Generate(ctx, active, maxNew)
		st.GenerateSeconds += time.Since(t0).Seconds()
		if err != nil {
			return nil, st, fmt.Errorf("rollout: %w", err)
		}
		if len(turns) != len(active) {
			return nil, st, fmt.Errorf("rollout: sampler returned %d turns for %d sequences", len(turns), len(active))
		}

		// --- end of turn, budget, or a tool call
		var calls []pendingCall
		for j, i := range active {
			tr := turns[j]
			if len(tr.IDs) != len(tr.LogProbs) || len(tr.IDs) > maxNew[j] {
				return nil, st, fmt.Errorf("rollout: sequence %d: sampler returned %d ids, %d log-probs for at most %d", i, len(tr.IDs), len(tr.LogProbs), maxNew[j])
			}
			s := &samples[i]
			s.IDs = append(s.IDs, tr.IDs...)
			s.LogProbs = append(s.LogProbs, tr.LogProbs...)
			for range tr.IDs {
				s.Mask = append(s.Mask, 1)
			}
			st.SampledTokens += len(tr.IDs)
			last := -1
			if len(tr.IDs) > 0 {
				last = tr.IDs[len(tr.IDs)-1]
			}
			switch {
			case slices.Contains(opt.EndIDs, last):
				s.Finish, done[i] = metrics.FinishStop, true
			case opt.UseTools && last == opt.ToolCallEnd:
				if s.ToolCalls >= opt.MaxTurns {
					s.Finish, done[i] = metrics.FinishToolLimit, true
					continue
				}
				calls = append(calls, pendingCall{seq: i, text: proto.Decode(tr.IDs)})
			default: // the budget (or the sampler's cache) ran out mid-turn
				s.Finish, done[i] = metrics.FinishLength, true
			}
		}

		// --- run the tool calls, append their responses as tokens
		t0 = time.Now()
		runCalls(ctx, calls, proto, tools, opt)
		st.ToolSeconds += time.Since(t0).Seconds()
		if err := ctx.Err(); err != nil {
			return nil, st, fmt.Errorf("rollout: %w", err)
		}
		for _, c := range calls {
			s := &samples[c.seq]
			s.ToolCalls++
			if c.failed {
				s.ToolErrors++
			}
			if c.noOutput {
				s.NoOutput++
			}
			ids := proto.ToolResponseIDs(c.response)
			if room := opt.Budget - len(s.IDs); len(ids) > room {
				ids = ids[:room] // the response does not fit: cut it, and the sample ends on length
			}
			if err := session.Append(c.seq, ids); err != nil {
				return nil, st, fmt.Errorf("rollout: sequence %d: %w", c.seq, err)
			}
			s.IDs = append(s.IDs, ids...)
			for range ids {
				s.LogProbs = append(s.LogProbs, 0)
				s.Mask = append(s.Mask, 0)
			}
		}
	}
	for i := range samples {
		samples[i].Text = proto.Decode(samples[i].IDs)
	}
	return samples, st, nil
}

type pendingCall struct {
	seq      int
	text     string // the turn's text, ending in </tool_call>
	response string
	failed   bool
	noOutput bool
}

// runCalls parses and runs calls, at most opt.Concurrency at a time, filling
// in each response. A parse error or runner error becomes the response text.
func runCalls(ctx context.Context, calls []pendingCall, proto Protocol, tools ToolRunner, opt Options) {
	conc := max(opt.Concurrency, 1)
	sem := make(chan struct{}, conc)
	var wg sync.WaitGroup
	for k := range calls {
		c := &calls[k]
		code, err := proto.ParseToolCall(c.text)
		if err != nil {
			c.response, c.failed = err.Error(), true
			continue
		}
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
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
