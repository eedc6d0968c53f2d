package metrics

import (
	"bytes"
	"encoding/json"
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

// ReadEvalPoints reads an eval.jsonl; name (the file's path) goes into errors,
// which name the line and refuse unknown fields.
func ReadEvalPoints(r io.Reader, name string) ([]EvalPoint, error) {
	var out []EvalPoint
	err := jsonl.Read(r, name, func(_ int, raw []byte) error {
		var p EvalPoint
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&p); err != nil {
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
