package grpo

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/mathrl/mathrl/data/arith"
	"github.com/mathrl/mathrl/gomlx_trainer/tokenizer"
	"github.com/mathrl/mathrl/gomlx_trainer/toolloop"
)

// warmStartTraces returns the problems that have a warm-start trace. A trace
// that answers directly (an easy task) is replaced by the task's tool-calling
// trace with probability toolFraction (0 keeps the direct answers, 1 calls the
// tool on every task); then a tool-calling trace is replaced by its unprinted
// form with probability unprinted. Both draws use seed.
func warmStartTraces(train []Problem, toolFraction, unprinted float64, seed uint64) []Problem {
	rng := rand.New(rand.NewPCG(seed, 0x5f7))
	slips := rand.New(rand.NewPCG(seed, 0x9a1))
	var traces []Problem
	for _, p := range train {
		if p.Trace == nil {
			continue
		}
		if p.Trace.Code == "" && rng.Float64() < toolFraction {
			tr := arith.ToolTrace(p.Trace.Task)
			p.Trace = &tr
		}
		if p.Trace.Code != "" && slips.Float64() < unprinted {
			tr := arith.UnprintedToolTrace(p.Trace.Task)
			p.Trace = &tr
		}
		traces = append(traces, p)
	}
	return traces
}

// runWarmStart runs the supervised warm start: sft_steps steps of sft_batch_size
// generated traces, whose tool calls are run for real so the tool responses the
// model learns from are real Python output.
func runWarmStart(ctx context.Context, cfg Config, st *TrainState, l *Learner, proto *tokenizer.Protocol, tools toolloop.ToolRunner, train []Problem, log *progress) error {
	traces := warmStartTraces(train, cfg.SFTToolFraction, cfg.SFTUnprintedFraction, uint64(cfg.Seed))
	if len(traces) == 0 {
		return errors.New("grpo: sft_steps needs generated tasks with traces (prompt_data: arith)")
	}
	log.Printf("warm start: %d steps of %d traces, lr %g", cfg.SFTSteps, cfg.SFTBatchSize, cfg.SFTLR)
	if tools != nil {
		tools = &onceEach{run: tools, out: map[string]toolloop.ToolOutput{}}
	}
	// The tool calls of step k+1's traces run while step k trains: they wait on
	// process start-up more than on the CPU, so the two overlap well.
	type prepared struct {
		seqs []Sequence
		err  error
	}
	prepare := func(step int) <-chan prepared {
		ch := make(chan prepared, 1)
		go func() {
			batch := make([]Problem, cfg.SFTBatchSize)
			for i := range batch {
				// traces are taken from the end of the list, training prompts from its start
				batch[i] = traces[len(traces)-1-(step*cfg.SFTBatchSize+i)%len(traces)]
			}
			seqs, err := traceSequences(ctx, proto, tools, batch, cfg.ToolConcurrency)
			ch <- prepared{seqs, err}
		}()
		return ch
	}
	start := time.Now()
	next := prepare(st.SFTStep)
	for st.SFTStep < cfg.SFTSteps {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("grpo: warm start interrupted: %w", err)
		}
		p := <-next
		if p.err != nil {
			return p.err
		}
		if st.SFTStep+1 < cfg.SFTSteps {
			next = prepare(st.SFTStep + 1)
		}
		ss, _, err := l.Step(p.seqs, StepOptions{SFT: true, PerTokenLoss: true, MicroBatch: cfg.MicroBatchSize, LR: cfg.SFTLR})
		if err != nil {
			return fmt.Errorf("grpo: warm-start step %d: %w", st.SFTStep+1, err)
		}
		st.SFTStep++
		if st.SFTStep%5 == 0 || st.SFTStep == cfg.SFTSteps {
			log.Printf("warm start step %d/%d: loss per token %.4f (%s)", st.SFTStep, cfg.SFTSteps, ss.Loss, time.Since(start).Round(time.Second))
		}
	}
	return nil
}

// onceEach runs each distinct program once: the warm start's traces repeat a
// few hundred programs, which always print the same, so the sandbox runs each
// for real the first time and its output is reused after. A failed run is not
// kept: the next trace with that code tries again.
type onceEach struct {
	run toolloop.ToolRunner
	mu  sync.Mutex
	out map[string]toolloop.ToolOutput
}

// Run returns code's output, from the sandbox the first time.
func (o *onceEach) Run(ctx context.Context, code string) (toolloop.ToolOutput, error) {
	o.mu.Lock()
	out, ok := o.out[code]
	o.mu.Unlock()
	if ok {
		return out, nil
	}
	out, err := o.run.Run(ctx, code)
	if err == nil && !out.Failed {
		o.mu.Lock()
		o.out[code] = out
		o.mu.Unlock()
	}
	return out, err
}

// traceSequences renders the traces of problems, running their code through
// tools (concurrently) to get the real tool output.
func traceSequences(ctx context.Context, proto *tokenizer.Protocol, tools toolloop.ToolRunner, problems []Problem, concurrency int) ([]Sequence, error) {
	outputs := make([]string, len(problems))
	errs := make([]error, len(problems))
	sem := make(chan struct{}, max(concurrency, 1))
	var wg sync.WaitGroup
	for i, p := range problems {
		if p.Trace.Code == "" {
			continue
		}
		if tools == nil {
			return nil, errors.New("grpo: warm-start traces call the tool, but no tool runner is set")
		}
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			out, err := tools.Run(ctx, p.Trace.Code)
			if err == nil && out.Failed {
				err = fmt.Errorf("trace code %q failed: %s", p.Trace.Code, out.Text)
			}
			outputs[i], errs[i] = out.Text, err
		}()
	}
	wg.Wait()
	var seqs []Sequence
	var failed []error
	for i, p := range problems {
		if errs[i] != nil { // a tool failure never stops the run: the trace is left out
			failed = append(failed, errs[i])
			continue
		}
		s, err := traceSequence(proto, *p.Trace, outputs[i])
		if err != nil {
			return nil, err
		}
		seqs = append(seqs, s)
	}
	if len(seqs) == 0 {
		return nil, fmt.Errorf("grpo: warm start: every trace's tool call failed, e.g. %w", failed[0])
	}
	return seqs, nil
}

// traceSequence renders a warm-start trace as the training sequence that
// sampling the same response would give: the prompt, then the response with mask 1 on what the
// assistant writes and 0 on the tool's response turn. toolOutput is the real
// output of the trace's code.
func traceSequence(proto *tokenizer.Protocol, tr arith.Trace, toolOutput string) (Sequence, error) {
	prompt, err := proto.PromptIDs(tr.Problem)
	if err != nil {
		return Sequence{}, err
	}
	s := Sequence{Prompt: prompt}
	add := func(ids []int, mask float32) {
		s.Response = append(s.Response, ids...)
		for range ids {
			s.Mask = append(s.Mask, mask)
			s.LogProbs = append(s.LogProbs, 0)
		}
	}
	if tr.Code != "" {
		call, err := proto.ToolCallIDs(tr.Code)
		if err != nil {
			return Sequence{}, err
		}
		add(call, 1)
		add(proto.ToolResponseIDs(toolOutput), 0)
	}
	add(proto.Tok.Encode(tr.Final+tokenizer.IMEnd), 1)
	return s, nil
}
