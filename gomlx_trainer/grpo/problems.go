package grpo

import (
	"fmt"
	"math/rand/v2"
	"os"
	"slices"

	"github.com/mathrl/mathrl/data"
	"github.com/mathrl/mathrl/data/arith"
)

// Problem is one prompt of a run: the dataset row's id, text and label.
type Problem struct {
	ID, Text, Answer string
	Trace            *arith.Trace // a warm-start solution, for generated tasks
}

// ArithTasks says which arithmetic tasks to generate.
type ArithTasks struct {
	MaxDigits int    // largest operand length, 1..18
	Ops       string // one of arith.Ops
}

// loadProblems returns the problems named by spec: "arith" (n tasks of kind
// drawn with seed), a dataset name known to the data package, or a JSONL file.
// Rows without an answer are left out.
func loadProblems(spec string, n int, seed uint64, kind ArithTasks) ([]Problem, error) {
	if spec == "arith" {
		if !slices.Contains(arith.Ops, kind.Ops) || kind.MaxDigits < 1 || kind.MaxDigits > 18 {
			return nil, fmt.Errorf("grpo: arithmetic tasks of %d digits and ops %q (want 1..18 digits, ops one of %q)", kind.MaxDigits, kind.Ops, arith.Ops)
		}
		prefix := fmt.Sprintf("arith/d%d/%d/", kind.MaxDigits, seed)
		if kind.Ops != "*+" {
			prefix = fmt.Sprintf("arith/d%d%s/%d/", kind.MaxDigits, kind.Ops, seed)
		}
		tasks := arith.Generate(rand.New(rand.NewPCG(seed, 0xa417)), n, kind.MaxDigits, kind.Ops, prefix)
		out := make([]Problem, len(tasks))
		for i, t := range tasks {
			tr := arith.WarmStart(t)
			out[i] = Problem{ID: t.ID, Text: t.Problem, Answer: t.Answer, Trace: &tr}
		}
		return out, nil
	}
	var rows []data.Row
	var err error
	if _, statErr := os.Stat(spec); statErr == nil {
		if rows, err = data.ReadFile(spec); err != nil {
			return nil, fmt.Errorf("grpo: prompts: %w", err) // it names the file and the line
		}
	} else if rows, err = data.LoadSet(data.DefaultDir(), spec); err != nil {
		return nil, fmt.Errorf("grpo: prompts %q: %w", spec, err)
	}
	return problemsOf(rows, spec)
}

// problemsOf returns the rows that have an answer as Problems; spec names them in errors.
func problemsOf(rows []data.Row, spec string) ([]Problem, error) {
	var out []Problem
	for _, r := range rows {
		if r.Answer != nil {
			out = append(out, Problem{ID: r.ID, Text: r.Problem, Answer: *r.Answer})
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("grpo: prompts %q: no row has an answer", spec)
	}
	return out, nil
}
