package grpo

import (
	"bufio"
	"fmt"
	"os"
	"sync"
)

// PhaseMarksEnv names the environment variable that, set to "1", makes the
// trainer stop at each phase it enters (an evaluation, a rollout's sampling,
// a tool call, an optimizer step, a checkpoint write): it writes one line
//
//	mathrl-phase: WHAT
//
// to standard error, WHAT naming the phase and where the run is ("step 5",
// "save step-000004"), then waits for a line on standard input before going
// on. Crash tests use it to kill a trainer inside a chosen phase, knowing that
// the run cannot get past the next mark until they answer it. It changes
// nothing else; unset, a mark costs one boolean test.
const PhaseMarksEnv = "MATHRL_PHASE_MARKS"

// phaseMarks is the state of PhaseMarksEnv, read once at start.
var phaseMarks = struct {
	on bool
	mu sync.Mutex // one mark and its answer at a time (tool calls run concurrently)
	in *bufio.Reader
}{on: os.Getenv(PhaseMarksEnv) == "1", in: bufio.NewReader(os.Stdin)}

// markPhase writes a phase mark and waits for its answer when PhaseMarksEnv
// is set. A closed standard input answers every mark.
func markPhase(format string, args ...any) {
	if !phaseMarks.on {
		return
	}
	phaseMarks.mu.Lock()
	defer phaseMarks.mu.Unlock()
	fmt.Fprintf(os.Stderr, "mathrl-phase: "+format+"\n", args...)
	_, _ = phaseMarks.in.ReadString('\n') // at EOF (nobody answers) go on
}
