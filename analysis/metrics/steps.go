package metrics

import (
	"cmp"
	"fmt"
	"io"
	"math"

	"github.com/mathrl/mathrl/internal/jsonl"
)

// StepMetricsVersion is the version of the trainer's per-step metrics JSONL
// (train.jsonl in a run folder). A file with another version is refused.
const StepMetricsVersion = 1

// StepMetrics is one line of a run's train.jsonl: what one optimizer step saw
// and did. When one rollout feeds several optimizer steps, each of them writes
// a line, repeating the rollout's fields and giving its own loss, clip
// fraction, entropy, grad norm and learning rate.
//
// Rates are fractions in [0, 1]; lengths are in tokens and count tool
// responses; seconds are wall-clock time spent in that phase for this step.
type StepMetrics struct {
	Version int `json:"version"` // StepMetricsVersion
	Step    int `json:"step"`    // optimizer step, counted from 1; strictly increasing in a file

	// Rollout: the samples this step trained on.
	Samples            int     `json:"samples"`               // responses in the rollout
	RewardMean         float64 `json:"reward_mean"`           // mean reward over the rollout
	RewardStd          float64 `json:"reward_std"`            // standard deviation of the reward
	Accuracy           float64 `json:"accuracy"`              // fraction of responses the scorer accepted
	ResponseLenMean    float64 `json:"response_len_mean"`     // mean response length in tokens
	ResponseLenMax     int     `json:"response_len_max"`      // longest response in tokens
	TruncationRate     float64 `json:"truncation_rate"`       // fraction that hit the budget (finish length)
	ToolCallsPerSample float64 `json:"tool_calls_per_sample"` // mean code_interpreter calls per response
	ToolErrorRate      float64 `json:"tool_error_rate"`       // fraction of tool calls that failed (0 with no calls)

	// Optimizer step.
	Loss         float64  `json:"loss"`          // the policy loss that was minimised
	ClipFraction float64  `json:"clip_fraction"` // fraction of tokens whose ratio was clipped
	Entropy      float64  `json:"entropy"`       // mean token entropy of the policy on the sampled tokens
	GradNorm     float64  `json:"grad_norm"`     // global gradient norm before clipping
	LR           float64  `json:"lr"`            // learning rate used for this step
	KL           *float64 `json:"kl,omitempty"`  // mean KL to the reference; absent when KL is off

	// Time.
	RolloutSeconds  float64 `json:"rollout_seconds"`   // generation, tool time excluded
	ToolSeconds     float64 `json:"tool_seconds"`      // running tool calls
	ScoreSeconds    float64 `json:"score_seconds"`     // scoring
	TrainSeconds    float64 `json:"train_seconds"`     // forward, backward and optimizer
	TokensPerSecond float64 `json:"tokens_per_second"` // generated tokens per second of rollout time

	// Compilation, part of the time above: the graphs built and compiled in a
	// phase and the seconds that took. GoMLX compiles a graph the first time
	// it meets new shapes (a batch size, sequence length or cache length),
	// so a step that compiles nothing ran on graphs compiled before. The
	// rollout's share is split between its steps as rollout_seconds is, so a
	// count can be fractional. Absent when unknown: rollouts sampled on
	// servers, and files written before these fields.
	RolloutCompileSeconds *float64 `json:"rollout_compile_seconds,omitempty"` // within rollout_seconds
	RolloutCompiles       *float64 `json:"rollout_compiles,omitempty"`        // graphs compiled by the sampling
	TrainCompileSeconds   *float64 `json:"train_compile_seconds,omitempty"`   // within train_seconds
	TrainCompiles         *float64 `json:"train_compiles,omitempty"`          // graphs compiled by the optimizer step

	// Extra holds any further named numbers (e.g. dropped groups under dynamic sampling).
	Extra map[string]float64 `json:"extra,omitempty"`
}

// stepRequired lists the fields every line must carry (kl, the compile
// fields and extra are optional).
var stepRequired = []string{"version", "step", "samples", "reward_mean", "reward_std", "accuracy",
	"response_len_mean", "response_len_max", "truncation_rate", "tool_calls_per_sample", "tool_error_rate",
	"loss", "clip_fraction", "entropy", "grad_norm", "lr",
	"rollout_seconds", "tool_seconds", "score_seconds", "train_seconds", "tokens_per_second"}

// Validate checks one line's values, returning a *jsonl.FieldError naming the
// first bad field.
func (m StepMetrics) Validate() error {
	bad := func(field, format string, args ...any) error {
		return &jsonl.FieldError{Field: field, Err: fmt.Errorf(format, args...)}
	}
	if m.Version != StepMetricsVersion {
		return bad("version", "got %d, this reader knows version %d", m.Version, StepMetricsVersion)
	}
	if m.Step < 1 {
		return bad("step", "must be at least 1, got %d", m.Step)
	}
	if m.Samples < 1 {
		return bad("samples", "must be at least 1, got %d", m.Samples)
	}
	if m.ResponseLenMax < 0 {
		return bad("response_len_max", "negative (%d)", m.ResponseLenMax)
	}
	type num struct {
		field string
		v     float64
		min   float64 // lower bound, inclusive
		max   float64 // upper bound, inclusive
	}
	inf := math.Inf(1)
	nums := []num{
		{"reward_mean", m.RewardMean, -inf, inf},
		{"reward_std", m.RewardStd, 0, inf},
		{"accuracy", m.Accuracy, 0, 1},
		{"response_len_mean", m.ResponseLenMean, 0, float64(m.ResponseLenMax)},
		{"truncation_rate", m.TruncationRate, 0, 1},
		{"tool_calls_per_sample", m.ToolCallsPerSample, 0, inf},
		{"tool_error_rate", m.ToolErrorRate, 0, 1},
		{"loss", m.Loss, -inf, inf},
		{"clip_fraction", m.ClipFraction, 0, 1},
		{"entropy", m.Entropy, 0, inf},
		{"grad_norm", m.GradNorm, 0, inf},
		{"lr", m.LR, 0, inf},
		{"rollout_seconds", m.RolloutSeconds, 0, inf},
		{"tool_seconds", m.ToolSeconds, 0, inf},
		{"score_seconds", m.ScoreSeconds, 0, inf},
		{"train_seconds", m.TrainSeconds, 0, inf},
		{"tokens_per_second", m.TokensPerSecond, 0, inf},
	}
	if m.KL != nil {
		nums = append(nums, num{"kl", *m.KL, -inf, inf})
	}
	for _, c := range []struct {
		field string
		v     *float64
	}{
		{"rollout_compile_seconds", m.RolloutCompileSeconds}, {"rollout_compiles", m.RolloutCompiles},
		{"train_compile_seconds", m.TrainCompileSeconds}, {"train_compiles", m.TrainCompiles},
	} {
		if c.v != nil {
			nums = append(nums, num{c.field, *c.v, 0, inf})
		}
	}
	for _, n := range nums {
		if math.IsNaN(n.v) || math.IsInf(n.v, 0) {
			return bad(n.field, "not a finite number")
		}
		if n.v < n.min || n.v > n.max {
			return bad(n.field, "%g is outside [%g, %g]", n.v, n.min, n.max)
		}
	}
	for k, v := range m.Extra {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return bad("extra."+k, "not a finite number")
		}
	}
	return nil
}

// ReadStepMetrics reads a trainer's metrics JSONL. Every line is checked as
// ReadSamples checks samples, and steps must strictly increase (a resumed run
// must not repeat steps). The first bad line gives a *jsonl.Error naming name,
// the line and the field.
func ReadStepMetrics(r io.Reader, name string) ([]StepMetrics, error) {
	var out []StepMetrics
	err := jsonl.Read(r, name, func(line int, raw []byte) error {
		var m StepMetrics
		if err := jsonl.DecodeStrict(raw, stepRequired, &m); err != nil {
			return err
		}
		if err := m.Validate(); err != nil {
			return err
		}
		if n := len(out); n > 0 && m.Step <= out[n-1].Step {
			return &jsonl.FieldError{Field: "step", Err: fmt.Errorf("%d does not follow step %d", m.Step, out[n-1].Step)}
		}
		out = append(out, m)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("metrics: %w", err)
	}
	return out, nil
}

// WriteStepMetrics writes one JSON line per step. A zero Version is set to
// StepMetricsVersion; an invalid line is an error naming its step and field,
// and nothing after it is written. A trainer appends with one call per step.
func WriteStepMetrics(w io.Writer, steps ...StepMetrics) error {
	err := jsonl.WriteValid(w, steps, func(m *StepMetrics) { m.Version = cmp.Or(m.Version, StepMetricsVersion) },
		func(_ int, m StepMetrics) string { return fmt.Sprintf("step %d", m.Step) })
	if err != nil {
		return fmt.Errorf("metrics: %w", err)
	}
	return nil
}
