package arith

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"

	"github.com/mathrl/mathrl/data"
)

// Task is one generated problem.
type Task struct {
	ID      string // "arith/<seed>/<index>"
	Op      string // "*" or "+"
	A, B    int64  // the operands
	Problem string // the text shown to the model, e.g. "Compute 4821*37."
	Answer  string // the exact result in decimal
}

// Row returns the task as a dataset row, so it can go wherever dataset rows go.
func (t Task) Row() data.Row {
	ans := t.Answer
	return data.Row{ID: t.ID, Problem: t.Problem, Answer: &ans, Source: "arith"}
}

// Ops names the operations Generate draws from: "*+" (multiplication or
// addition, 3 to 1), "*" or "+".
var Ops = []string{"*+", "*", "+"}

// Generate returns n tasks drawn with rng: an operation of ops (see Ops) on
// two numbers with 1..maxDigits digits each. The same seed and arguments give
// the same tasks; idPrefix goes in front of each index in the ids. It panics
// on a maxDigits outside 1..18 or an ops not in Ops.
func Generate(rng *rand.Rand, n, maxDigits int, ops, idPrefix string) []Task {
	if maxDigits < 1 || maxDigits > 18 {
		panic(fmt.Sprintf("arith: maxDigits %d outside 1..18", maxDigits))
	}
	if !slices.Contains(Ops, ops) {
		panic(fmt.Sprintf("arith: ops %q, want one of %q", ops, Ops))
	}
	tasks := make([]Task, n)
	for i := range tasks {
		op := ops
		if ops == "*+" {
			op = "*"
			if rng.IntN(4) == 0 {
				op = "+"
			}
		}
		a := number(rng, 1+rng.IntN(maxDigits))
		b := number(rng, 1+rng.IntN(maxDigits))
		tasks[i] = New(op, a, b)
		tasks[i].ID = fmt.Sprintf("%s%d", idPrefix, i)
	}
	return tasks
}

// New returns the task a op b (op is "*" or "+"), without an id. It panics on
// another op, or when the result does not fit in an int64.
func New(op string, a, b int64) Task {
	var ans int64
	switch op {
	case "*":
		ans = a * b
		if a != 0 && ans/a != b {
			panic("arith: product overflows int64")
		}
	case "+":
		ans = a + b
	default:
		panic(fmt.Sprintf("arith: unknown op %q", op))
	}
	return Task{
		Op: op, A: a, B: b,
		Problem: fmt.Sprintf("Compute %d%s%d.", a, op, b),
		Answer:  strconv.FormatInt(ans, 10),
	}
}

// number returns a uniformly drawn number with exactly digits digits.
func number(rng *rand.Rand, digits int) int64 {
	lo := int64(1)
	for range digits - 1 {
		lo *= 10
	}
	if digits == 1 {
		return rng.Int64N(10)
	}
	return lo + rng.Int64N(9*lo)
}

// Hard reports whether the task is one where the tool helps: every task
// except those on two single-digit numbers (a small model cannot multiply
// 7*4821 in its head either).
func (t Task) Hard() bool {
	return t.A >= 10 || t.B >= 10
}

// Trace is a warm-start solution of a task. With Code set, the assistant first
// calls code_interpreter with Code, then, after the tool's real output, writes
// Final; without Code it writes Final straight away.
type Trace struct {
	Task
	Code  string // Python for the tool call; empty: answer directly
	Final string // the assistant's last message, ending in \boxed{answer}
}

// WarmStart returns the warm-start trace of t: a tool call for hard tasks, a
// direct answer for easy ones.
func WarmStart(t Task) Trace {
	final := `\boxed{` + t.Answer + `}`
	if !t.Hard() {
		return Trace{Task: t, Final: final}
	}
	return ToolTrace(t)
}

// ToolTrace returns the trace of t that calls the tool, whether or not the
// task is hard.
func ToolTrace(t Task) Trace {
	return Trace{Task: t, Code: fmt.Sprintf("print(%d%s%d)", t.A, t.Op, t.B), Final: `\boxed{` + t.Answer + `}`}
}

// UnprintedToolTrace returns the trace of t whose tool call evaluates the
// expression without printing it, the slip models make in a Python script: the
// tool answers "[no output]" and the trace writes the answer from memory.
func UnprintedToolTrace(t Task) Trace {
	return Trace{Task: t, Code: fmt.Sprintf("%d%s%d", t.A, t.Op, t.B), Final: `\boxed{` + t.Answer + `}`}
}
