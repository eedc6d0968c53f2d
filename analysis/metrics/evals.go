package metrics

import (
	"fmt"
	"io"

	"github.com/mathrl/mathrl/internal/jsonl"
)

// EvalPoint is one line of a run's eval.jsonl: an evaluation of the policy on
// the run's held-out problems after Step optimizer steps.
type EvalPoint struct {
	Step       int     `json:"step"`            // optimizer steps taken before the evaluation
	Rollout    int     `json:"rollout"`         // rollouts done before it
	K          int     `json:"k"`               // samples per problem
	AvgAtK     float64 `json:"avg_at_k"`        // mean accuracy over all samples
	PassAtK    float64 `json:"pass_at_k"`       // problems solved by at least one of k samples
	Truncation float64 `json:"truncation_rate"` // samples cut at the budget
	ToolCalls  float64 `json:"tool_calls_mean"` // tool calls per sample
	Errors     int     `json:"scorer_errors"`   // samples the scorer could not score
}

// evalRequired lists the fields every eval.jsonl line must carry; the others
// are 0 when absent.
var evalRequired = []string{"step", "k"}

// Validate checks one evaluation's values, returning a *jsonl.FieldError
// naming the first bad field.
func (p EvalPoint) Validate() error {
	bad := func(field, format string, args ...any) error {
		return &jsonl.FieldError{Field: field, Err: fmt.Errorf(format, args...)}
	}
	switch {
	case p.Step < 0:
		return bad("step", "negative (%d)", p.Step)
	case p.Rollout < 0:
		return bad("rollout", "negative (%d)", p.Rollout)
	case p.K < 1:
		return bad("k", "must be at least 1, got %d", p.K)
	case p.Errors < 0:
		return bad("scorer_errors", "negative (%d)", p.Errors)
	case !(p.ToolCalls >= 0):
		return bad("tool_calls_mean", "negative (%g)", p.ToolCalls)
	}
	for _, r := range []struct {
		field string
		v     float64
	}{{"avg_at_k", p.AvgAtK}, {"pass_at_k", p.PassAtK}, {"truncation_rate", p.Truncation}} {
		if !(r.v >= 0 && r.v <= 1) {
			return bad(r.field, "%g is outside [0, 1]", r.v)
		}
	}
	return nil
}

// ReadEvalPoints reads an eval.jsonl; name (the file's path) goes into errors,
// which name the line and the field, and refuse unknown fields, values out of
// range (see Validate) and anything after the object on its line.
func ReadEvalPoints(r io.Reader, name string) ([]EvalPoint, error) {
	var out []EvalPoint
	err := jsonl.Read(r, name, func(_ int, raw []byte) error {
		var p EvalPoint
		if err := jsonl.DecodeStrict(raw, evalRequired, &p); err != nil {
			return err
		}
		if err := p.Validate(); err != nil {
			return err
		}
		out = append(out, p)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("metrics: %w", err)
	}
	return out, nil
}
