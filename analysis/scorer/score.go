package scorer

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/mathrl/mathrl/analysis/verify"
)

// The scorer names slime's --rm-type accepts for the math scorers, and
// mathrl's own verifier (package analysis/verify).
const (
	Math       = "math"
	Dapo       = "dapo"
	DeepScaler = "deepscaler"
	Verify     = "verify"
)

// Names lists the math scorers in a fixed order, slime's three then verify:
// the ones that `mathrl scorers validate` compares.
func Names() []string { return []string{Math, Dapo, DeepScaler, Verify} }

// Rewards lists every name Score accepts (without the boxed_ prefix): the math
// scorers of Names, then Retool.
func Rewards() []string { return append(Names(), Retool) }

// BoxedPrefix on a scorer name makes Score replace the response by the content
// of its last \boxed{...} ("" if none) before scoring.
const BoxedPrefix = "boxed_"

// ErrUnknownScorer is wrapped by Score for a name that is not a known scorer.
var ErrUnknownScorer = errors.New("unknown scorer")

// Result is one verdict.
type Result struct {
	// Reward is what slime uses as the reward: 1 or 0 for math and deepscaler,
	// +1 or -1 for dapo (its dict's "score"); 1 or 0 for verify.
	Reward float64
	// Correct is whether the response was judged right.
	Correct bool
	// Pred is dapo's normalised prediction ("[INVALID]" without an Answer:
	// line); for math and deepscaler the extracted box content ("" when none);
	// for verify the answer it compared ("" when none).
	Pred string
}

// RMType chooses the scorer name as slime's async_rm does: the sample's
// metadata rm_type when non-empty, else the command-line --rm-type, then
// surrounding whitespace is stripped.
func RMType(metadataRMType, flagRMType string) string {
	name := metadataRMType
	if name == "" {
		name = flagRMType
	}
	return pyStrip(name)
}

// Score scores response against a string label with the named scorer (see
// ScoreLabel).
func Score(name, response, label string) (Result, error) {
	return ScoreLabel(name, response, TextLabel(label))
}

// ScoreLabel scores response against label with the named scorer (see
// ScoreSample); for retool, the tool calls are the response's <tool_call>
// blocks (CountToolCalls).
func ScoreLabel(name, response string, label Label) (Result, error) {
	return ScoreSample(name, response, label, CountToolCalls(response))
}

// ScoreSample scores response against label with the named scorer: "math",
// "deepscaler", "dapo", "verify" or "retool", optionally prefixed by "boxed_" (the
// response is first replaced by the content of its last \boxed{...}, "" if
// none). toolCalls is the number of tool calls the response made; only retool
// reads it. An empty or unknown name is an error wrapping ErrUnknownScorer;
// dapo on a label that is not a number is an error wrapping ErrNonNumericLabel;
// verify past its deadline is an error wrapping verify.ErrDeadline.
func ScoreSample(name, response string, label Label, toolCalls int) (Result, error) {
	if rest, ok := strings.CutPrefix(name, BoxedPrefix); ok {
		response, _ = ExtractBoxed(response)
		name = rest
	}
	switch name {
	case Math:
		return binary(MathCorrect(response, label)), nil
	case DeepScaler:
		return binary(DeepScalerCorrect(response, label)), nil
	case Dapo:
		return DapoScore(response, label)
	case Verify:
		v, err := verify.Check(response, label.Text)
		if err != nil {
			return Result{Pred: v.Answer}, fmt.Errorf("scorer: %w", err)
		}
		return binary(v.Correct, v.Answer), nil
	case Retool:
		return RetoolScore(response, label.Text, toolCalls), nil
	}
	return Result{}, Check(name)
}

// Check returns nil when ScoreSample accepts name, else an error wrapping
// ErrUnknownScorer that lists the names it accepts.
func Check(name string) error {
	base := strings.TrimPrefix(name, BoxedPrefix)
	if slices.Contains(Rewards(), base) {
		return nil
	}
	if base == "" {
		return fmt.Errorf("scorer: no scorer named in %q: %w", name, ErrUnknownScorer)
	}
	return fmt.Errorf("scorer: %w %q (want one of %s, optionally prefixed by %s)", ErrUnknownScorer, name,
		strings.Join(Rewards(), ", "), BoxedPrefix)
}

func binary(correct bool, pred string) Result {
	if correct {
		return Result{Reward: 1, Correct: true, Pred: pred}
	}
	return Result{Reward: 0, Pred: pred}
}

// MathCorrect is slime's `math` scorer (grade_answer_verl). A falsy label ("",
// int 0, float 0.0) is never matched; a label containing \boxed is replaced by
// its last box; the answer is the last \boxed{...} of the whole response
// (thinking included); it is right when the two are equal after MathdNormalize
// or after the sympy-path checks. pred is the extracted answer.
func MathCorrect(response string, label Label) (correct bool, pred string) {
	if label.falsy() {
		return false, ""
	}
	given, ok := ExtractBoxed(response)
	if !ok {
		return false, ""
	}
	truth := label.Text
	if strings.Contains(truth, `\boxed`) {
		if truth, ok = ExtractBoxed(truth); !ok {
			return false, given
		}
	}
	return mathdEqual(given, truth) || sympyEqual(given, truth), given
}

// DeepScalerCorrect is slime's `deepscaler` scorer: only the text after the
// last </think> is searched (else the text between the first and second
// "###Response"; else the response scores 0), then the same graders as
// MathCorrect. Only the empty string label is refused up front. pred is the
// extracted answer.
func DeepScalerCorrect(response string, label Label) (correct bool, pred string) {
	var tail string
	switch {
	case response == "":
		return false, ""
	case strings.Contains(response, "</think>"):
		tail = response[strings.LastIndex(response, "</think>")+len("</think>"):]
	case strings.Contains(response, "###Response"):
		tail = strings.SplitN(response, "###Response", 3)[1]
	default:
		return false, ""
	}
	given, ok := ExtractBoxed(tail)
	if !ok {
		return false, ""
	}
	if label.Kind == StringLabel && label.Text == "" {
		return false, given
	}
	truth := label.Text
	if strings.Contains(truth, `\boxed`) {
		if truth, ok = ExtractBoxed(truth); !ok {
			return false, given
		}
	}
	return mathdEqual(given, truth) || sympyEqual(given, truth), given
}

// DapoScore is slime's `dapo` scorer (compute_score with its defaults): the
// prediction is the last `Answer:` line in the final 300 characters, Minerva
// normalised; it is right when it equals DapoTruth(label). Reward is +1 or -1.
func DapoScore(response string, label Label) (Result, error) {
	pred := dapoPrediction(response)
	truth, err := DapoTruth(label.Text)
	if err != nil {
		return Result{Pred: pred}, err
	}
	if pred == truth {
		return Result{Reward: 1, Correct: true, Pred: pred}, nil
	}
	return Result{Reward: -1, Pred: pred}, nil
}
