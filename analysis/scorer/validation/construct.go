package validation

import (
	"github.com/mathrl/mathrl/analysis/scorer"
)

// The five response templates, in report order.
const (
	Boxed                = "boxed"
	AnswerLine           = "answer_line"
	BoxedAnswerLine      = "boxed+answer_line"
	ThinkBoxed           = "think+boxed"
	ThinkBoxedAnswerLine = "think+boxed+answer_line"
)

// Variants lists the templates in report order.
var Variants = []string{Boxed, AnswerLine, BoxedAnswerLine, ThinkBoxed, ThinkBoxedAnswerLine}

// Template is one way to write a response that states an answer: Say
// returns the response, or "" when the template does not apply to that
// answer.
type Template struct {
	Name string
	Say  func(answer string) string
}

// templates are the five Variants as Templates.
func templates() []Template {
	var out []Template
	for _, v := range Variants {
		out = append(out, Template{v, func(a string) string { return Response(v, a) }})
	}
	return out
}

const (
	intro = "Let me work through the problem step by step.\n\n"
	think = "<think>\nLet me think about this problem carefully.\n</think>\n\n"
)

// Response builds the response of the given template that states answer:
//
//	boxed:        intro + "Therefore, the final answer is $\boxed{" + answer + "}$."
//	answer_line:  intro + "Answer: " + answer
//	boxed+answer_line: the boxed text + "\nAnswer: " + answer
//	think+...:    the same, after an empty-ish <think>...</think> block.
//
// It panics on an unknown variant (a caller bug).
func Response(variant, answer string) string {
	boxed := intro + "Therefore, the final answer is $\\boxed{" + answer + "}$."
	switch variant {
	case Boxed:
		return boxed
	case AnswerLine:
		return intro + "Answer: " + answer
	case BoxedAnswerLine:
		return boxed + "\nAnswer: " + answer
	case ThinkBoxed:
		return think + boxed
	case ThinkBoxedAnswerLine:
		return think + boxed + "\nAnswer: " + answer
	}
	panic("validation: unknown variant " + variant)
}

// Equivalent reports whether two labels must not serve as each other's wrong
// answer: equal after strip, after scorer.MathdNormalize, after
// scorer.Normalize, or as Python floats.
func Equivalent(a, b string) bool { return keyOf(a).equivalent(keyOf(b)) }

// labelKey holds the forms of a label that Equivalent compares.
type labelKey struct {
	stripped, mathd, norm string
	float                 float64
	isFloat               bool
}

func keyOf(s string) labelKey {
	x, ok := scorer.PythonFloat(s)
	return labelKey{scorer.PythonStrip(s), scorer.MathdNormalize(s), scorer.Normalize(s), x, ok}
}

func (k labelKey) equivalent(o labelKey) bool {
	return k.stripped == o.stripped || k.mathd == o.mathd || k.norm == o.norm ||
		k.isFloat && o.isFloat && k.float == o.float
}

// Partners returns, for each label, the index of its false-positive partner:
// the next label (cyclically, in order) that is not Equivalent to it, or -1
// when every other label is equivalent.
func Partners(labels []string) []int {
	keys := make([]labelKey, len(labels))
	for i, l := range labels {
		keys[i] = keyOf(l)
	}
	out := make([]int, len(labels))
	for i := range labels {
		out[i] = -1
		for k := 1; k < len(labels); k++ {
			j := (i + k) % len(labels)
			if !keys[i].equivalent(keys[j]) {
				out[i] = j
				break
			}
		}
	}
	return out
}
