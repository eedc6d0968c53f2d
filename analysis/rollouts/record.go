package rollouts

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/mathrl/mathrl/analysis/metrics"
	"github.com/mathrl/mathrl/analysis/runs"
	"github.com/mathrl/mathrl/internal/jsonl"
)

// Version is the version of the rollouts JSONL schema that this package
// writes and reads. A file with another version is refused.
const Version = 1

// Dir is the folder of a run that holds the records: DIR/rollouts.
func Dir(run string) string { return filepath.Join(run, runs.RolloutsDir) }

// Path is the file of the rollout sampled by the policy after step optimizer
// steps: DIR/rollouts/step-NNNNNN.jsonl.
func Path(run string, step int) string {
	return filepath.Join(Dir(run), runs.StepName(step)+".jsonl")
}

// Record is one line of a rollouts file: one training sample, token by token,
// as the loss took it. Mask, LogProbs and Tokens have one entry per response
// id.
type Record struct {
	Version     int            `json:"version"`      // Version
	Step        int            `json:"step"`         // optimizer steps the sampling policy had taken (the file's N); with async_rollouts, the trainer's before the rollout's updates, its sampling weights being train.jsonl's rollout_staleness steps older
	Rollout     int            `json:"rollout"`      // 1 for the run's first rollout
	TrainStep   int            `json:"train_step"`   // the optimizer step (train.jsonl's step) whose loss took the sample; 0: none (dynamic sampling left its group out)
	ProblemID   string         `json:"problem_id"`   // the dataset row's id
	Problem     string         `json:"problem"`      // the problem text
	Label       string         `json:"label"`        // the reference answer
	Group       int            `json:"group"`        // the prompt's group within the rollout, from 0
	SampleIndex int            `json:"sample_index"` // the sample within its group, from 0
	PromptIDs   []int          `json:"prompt_ids"`   // the chat prompt's ids
	Prompt      string         `json:"prompt"`       // PromptIDs decoded, special tokens kept
	ResponseIDs []int          `json:"response_ids"` // sampled tokens and injected tool responses, after the prompt
	Tokens      []string       `json:"tokens"`       // each response id decoded on its own, special tokens kept
	Mask        []float32      `json:"mask"`         // the loss mask: 1 on tokens the loss trained on; 0 on injected tokens (tool responses, template glue) and on samples left out
	LogProbs    []float32      `json:"logprobs"`     // the old log-prob of the PPO ratio: the training graph's, recomputed before the rollout's first update, or with use_rollout_logprobs (and for a sample left out) the sampler's; 0 where the policy did not sample
	Advantage   float64        `json:"advantage"`    // the sequence's advantage in the loss (0 when left out)
	Reward      float64        `json:"reward"`       // the reward the advantage came from (overlong penalty included)
	Correct     bool           `json:"correct"`      // the scorer's verdict
	Pred        string         `json:"pred"`         // the answer the scorer read ("" when none)
	ScorerError string         `json:"scorer_error,omitempty"`
	Finish      metrics.Finish `json:"finish"`      // stop, length or tool-limit
	ToolCalls   int            `json:"tool_calls"`  // code_interpreter calls run
	ToolErrors  int            `json:"tool_errors"` // calls that failed to parse or run, or whose program failed
}

// required lists the fields every line must carry.
var required = []string{"version", "step", "rollout", "train_step", "problem_id", "problem", "label", "group",
	"sample_index", "prompt_ids", "prompt", "response_ids", "tokens", "mask", "logprobs", "advantage", "reward",
	"correct", "pred", "finish", "tool_calls", "tool_errors"}

// Validate checks one record's fields, returning a *jsonl.FieldError naming
// the first bad field.
func (r Record) Validate() error {
	bad := func(field, format string, args ...any) error {
		return &jsonl.FieldError{Field: field, Err: fmt.Errorf(format, args...)}
	}
	n := len(r.ResponseIDs)
	switch {
	case r.Version != Version:
		return bad("version", "got %d, this reader knows version %d", r.Version, Version)
	case r.Step < 0 || r.Rollout < 1 || r.TrainStep < 0:
		return bad("step", "step %d, rollout %d, train_step %d: want step, train_step ≥ 0 and rollout ≥ 1", r.Step, r.Rollout, r.TrainStep)
	case r.Group < 0 || r.SampleIndex < 0:
		return bad("group", "group %d, sample_index %d: negative", r.Group, r.SampleIndex)
	case len(r.Tokens) != n:
		return bad("tokens", "%d tokens for %d response ids", len(r.Tokens), n)
	case len(r.Mask) != n:
		return bad("mask", "%d entries for %d response ids", len(r.Mask), n)
	case len(r.LogProbs) != n:
		return bad("logprobs", "%d entries for %d response ids", len(r.LogProbs), n)
	case slices.ContainsFunc(r.Mask, func(m float32) bool { return m != 0 && m != 1 }):
		return bad("mask", "entries must be 0 or 1")
	case slices.ContainsFunc(r.LogProbs, func(v float32) bool { return !finite(float64(v)) }):
		return bad("logprobs", "entries must be finite")
	case !finite(r.Advantage):
		return bad("advantage", "not a finite number")
	case !finite(r.Reward):
		return bad("reward", "not a finite number")
	case !r.Finish.Valid():
		return bad("finish", "%q is not one of stop, length, tool-limit", r.Finish)
	case r.ToolCalls < 0 || r.ToolErrors < 0 || r.ToolErrors > r.ToolCalls:
		return bad("tool_errors", "%d errors of %d calls", r.ToolErrors, r.ToolCalls)
	}
	return nil
}

func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

// Read reads a rollouts JSONL stream. Every line is checked: known fields
// only, required fields present, values valid, no repeated (group,
// sample_index). The first bad line gives an error naming name, the line and
// the field.
func Read(r io.Reader, name string) ([]Record, error) {
	var out []Record
	seen := map[[2]int]int{}
	err := jsonl.Read(r, name, func(line int, raw []byte) error {
		var rec Record
		if err := jsonl.DecodeStrict(raw, required, &rec); err != nil {
			return err
		}
		if err := rec.Validate(); err != nil {
			return err
		}
		k := [2]int{rec.Group, rec.SampleIndex}
		if first, dup := seen[k]; dup {
			return &jsonl.FieldError{Field: "sample_index", Err: fmt.Errorf("group %d sample %d already on line %d", k[0], k[1], first)}
		}
		seen[k] = line
		out = append(out, rec)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("rollouts: %w", err)
	}
	return out, nil
}

// ReadFile reads the rollouts file path (see Read).
func ReadFile(path string) ([]Record, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("rollouts: %w", err)
	}
	defer f.Close()
	return Read(f, path)
}

// WriteFile writes recs to path atomically, one JSON line each. A zero
// Version is set to Version; an invalid record is an error naming its index
// and field, and leaves path as it was.
func WriteFile(path string, recs []Record) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("rollouts: %w", err)
	}
	err := jsonl.WriteOutput(path, nil, func(w io.Writer) error {
		return jsonl.WriteValid(w, recs, func(r *Record) { r.Version = cmp.Or(r.Version, Version) },
			func(i int, _ Record) string { return fmt.Sprintf("record %d", i) })
	})
	if err != nil {
		return fmt.Errorf("rollouts: %s: %w", path, err)
	}
	return nil
}

// Steps returns the recorded steps of the run folder run, in order (none when
// it has no rollouts folder).
func Steps(run string) ([]int, error) {
	entries, err := os.ReadDir(Dir(run))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("rollouts: %w", err)
	}
	var steps []int
	for _, e := range entries {
		name, ok := strings.CutSuffix(strings.TrimPrefix(e.Name(), "step-"), ".jsonl")
		if n, err := strconv.Atoi(name); ok && err == nil && !e.IsDir() && Path(run, n) == filepath.Join(Dir(run), e.Name()) {
			steps = append(steps, n)
		}
	}
	slices.Sort(steps)
	return steps, nil
}

// ErrNotRecorded is wrapped by Load's error when the run has no record of
// the step asked for.
var ErrNotRecorded = errors.New("step not recorded")

// Load reads the records of step in the run folder run. A step that was not
// recorded gives an error wrapping ErrNotRecorded that lists the recorded
// steps.
func Load(run string, step int) ([]Record, error) {
	path := Path(run, step)
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		steps, serr := Steps(run)
		if serr != nil {
			return nil, serr
		}
		if len(steps) == 0 {
			return nil, fmt.Errorf("rollouts: %s: %w: the run has no recorded rollouts (%s is empty or missing; see save_rollouts_every)", run, ErrNotRecorded, Dir(run))
		}
		return nil, fmt.Errorf("rollouts: %s: step %d: %w; recorded steps: %s", run, step, ErrNotRecorded, joinInts(steps))
	}
	return ReadFile(path)
}

func joinInts(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, ", ")
}
