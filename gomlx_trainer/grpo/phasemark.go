package grpo

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"sync"

	"github.com/mathrl/mathrl/gomlx_trainer/toolloop"
)

// PhaseMarks stops a trainer at each phase it enters (an evaluation, a
// rollout's sampling, a tool call, an optimizer step, a checkpoint write): it
// writes one line
//
//	mathrl-phase: WHAT
//
// WHAT naming the phase and where the run is ("step 5", "save step-000004"),
// then waits for a line of answer before going on. Crash tests give it to
// Train (TrainOptions.PhaseMarks) to kill a trainer inside a chosen phase,
// knowing that the run cannot get past the next mark until they answer it. It
// changes nothing else; a nil *PhaseMarks marks nothing.
type PhaseMarks struct {
	mu  sync.Mutex // one mark and its answer at a time (tool calls run concurrently)
	out io.Writer
	in  *bufio.Reader
}

// NewPhaseMarks writes the marks to out and reads their answers from in. At
// the end of in (nobody answers) every mark goes on at once.
func NewPhaseMarks(out io.Writer, in io.Reader) *PhaseMarks {
	return &PhaseMarks{out: out, in: bufio.NewReader(in)}
}

// mark writes a phase mark and waits for its answer; on a nil m it does nothing.
func (m *PhaseMarks) mark(format string, args ...any) {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	fmt.Fprintf(m.out, "mathrl-phase: "+format+"\n", args...)
	_, _ = m.in.ReadString('\n') // at EOF (nobody answers) go on
}

// markedTools marks each tool call before it runs.
type markedTools struct {
	toolloop.ToolRunner
	marks *PhaseMarks
}

func (m markedTools) Run(ctx context.Context, code string) (toolloop.ToolOutput, error) {
	m.marks.mark("tool")
	return m.ToolRunner.Run(ctx, code)
}
