package metrics

import (
	"cmp"
	"fmt"
	"io"
	"math"
	"os"
	"strings"

	"github.com/mathrl/mathrl/internal/jsonl"
)

// SamplesVersion is the version of the eval-samples JSONL schema that this
// package writes and reads. A file with another version is refused.
const SamplesVersion = 1

// Finish says why generation of one response stopped.
type Finish string

// The finish reasons of a sample.
const (
	FinishStop      Finish = "stop"       // the model ended its turn (<|im_end|>) within the budget
	FinishLength    Finish = "length"     // the response budget ran out
	FinishToolLimit Finish = "tool-limit" // the tool-turn limit was reached before the model ended its turn
)

// Valid reports whether f is one of the three finish reasons.
func (f Finish) Valid() bool {
	return f == FinishStop || f == FinishLength || f == FinishToolLimit
}

// Sample is one line of an eval-samples JSONL file: one response of a model to
// one problem, with its score.
//
// ResponseTokens counts every token of the response after the prompt, tool
// responses included (they count against the budget too), so it never exceeds
// Budget. A sample is correct when Score > 0: the math and deepscaler scorers
// give 0 or 1, dapo gives -1 or +1. When the scorer could not score the sample
// (for example dapo on a non-numeric label), Error says why and Score is 0; such
// a sample counts as not correct and is also counted in its own column.
type Sample struct {
	Version        int     `json:"version"`         // SamplesVersion
	ProblemID      string  `json:"problem_id"`      // the dataset row's id
	SampleIndex    int     `json:"sample_index"`    // 0..k-1 within the problem
	Response       string  `json:"response"`        // the response text, tool turns included
	ResponseTokens int     `json:"response_tokens"` // tokens after the prompt, tool responses included
	Finish         Finish  `json:"finish"`          // stop, length or tool-limit
	ToolCalls      int     `json:"tool_calls"`      // code_interpreter calls made
	Score          float64 `json:"score"`           // the scorer's reward; correct when > 0
	Scorer         string  `json:"scorer"`          // math, dapo, deepscaler, ...
	Budget         int     `json:"budget"`          // the response budget in tokens it was generated with
	Model          string  `json:"model"`           // model name or checkpoint folder
	Seed           int64   `json:"seed"`            // sampling seed of this sample
	Label          string  `json:"label,omitempty"` // the reference answer, when known
	Error          string  `json:"error,omitempty"` // why the scorer could not score, if it could not
}

// Correct reports whether the scorer accepted the response.
func (s Sample) Correct() bool { return s.Error == "" && s.Score > 0 }

// sampleRequired lists the fields every line must carry; the rest are optional.
var sampleRequired = []string{"version", "problem_id", "sample_index", "response", "response_tokens",
	"finish", "tool_calls", "score", "scorer", "budget", "model", "seed"}

// Validate checks one sample's fields, returning a *jsonl.FieldError naming
// the first bad field.
func (s Sample) Validate() error {
	bad := func(field, format string, args ...any) error {
		return &jsonl.FieldError{Field: field, Err: fmt.Errorf(format, args...)}
	}
	switch {
	case s.Version != SamplesVersion:
		return bad("version", "got %d, this reader knows version %d", s.Version, SamplesVersion)
	case strings.TrimSpace(s.ProblemID) == "":
		return bad("problem_id", "empty")
	case s.SampleIndex < 0:
		return bad("sample_index", "negative (%d)", s.SampleIndex)
	case s.ResponseTokens < 0:
		return bad("response_tokens", "negative (%d)", s.ResponseTokens)
	case !s.Finish.Valid():
		return bad("finish", "%q is not one of stop, length, tool-limit", s.Finish)
	case s.ToolCalls < 0:
		return bad("tool_calls", "negative (%d)", s.ToolCalls)
	case math.IsNaN(s.Score) || math.IsInf(s.Score, 0):
		return bad("score", "not a finite number")
	case s.Error != "" && s.Score != 0:
		return bad("score", "is %g but error is set; an unscored sample has score 0", s.Score)
	case strings.TrimSpace(s.Scorer) == "":
		return bad("scorer", "empty")
	case s.Budget <= 0:
		return bad("budget", "must be positive, got %d", s.Budget)
	case s.ResponseTokens > s.Budget:
		return bad("response_tokens", "%d exceeds the budget %d", s.ResponseTokens, s.Budget)
	case strings.TrimSpace(s.Model) == "":
		return bad("model", "empty")
	}
	return nil
}

// sampleKey identifies a sample within a file: the same model, budget, problem
// and index may appear only once.
type sampleKey struct {
	model, problem string
	budget, index  int
}

// ReadSamplesFile reads the eval-samples JSONL file at path (see ReadSamples).
func ReadSamplesFile(path string) ([]Sample, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("metrics: %w", err)
	}
	defer f.Close()
	return ReadSamples(f, path)
}

// ReadSamples reads an eval-samples JSONL stream. Every line is checked: known
// fields only, required fields present and of the right type, values valid,
// no duplicate (model, budget, problem_id, sample_index). The first bad line
// gives a *jsonl.Error naming name, the line and the field.
func ReadSamples(r io.Reader, name string) ([]Sample, error) {
	var out []Sample
	seen := map[sampleKey]int{}
	err := jsonl.Read(r, name, func(line int, raw []byte) error {
		var s Sample
		if err := jsonl.DecodeStrict(raw, sampleRequired, &s); err != nil {
			return err
		}
		if err := s.Validate(); err != nil {
			return err
		}
		k := sampleKey{s.Model, s.ProblemID, s.Budget, s.SampleIndex}
		if first, dup := seen[k]; dup {
			return &jsonl.FieldError{Field: "sample_index", Err: fmt.Errorf(
				"problem %q sample %d (model %q, budget %d) already on line %d", s.ProblemID, s.SampleIndex, s.Model, s.Budget, first)}
		}
		seen[k] = line
		out = append(out, s)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("metrics: %w", err)
	}
	return out, nil
}

// WriteSamples writes samples as JSONL, one line each. A zero Version is set to
// SamplesVersion; an invalid sample is an error naming its index and field,
// and nothing after it is written.
func WriteSamples(w io.Writer, samples ...Sample) error {
	err := jsonl.WriteValid(w, samples, func(s *Sample) { s.Version = cmp.Or(s.Version, SamplesVersion) },
		func(i int, _ Sample) string { return fmt.Sprintf("sample %d", i) })
	if err != nil {
		return fmt.Errorf("metrics: %w", err)
	}
	return nil
}
