package scorer

import (
	"errors"
	"testing"
)

// TestNormalizeMillion covers the sympy-path normaliser's number words:
// "million" becomes "*10^6" (and billion, trillion alike) before anything else
// reads the string. Expected values are the output of slime's math_utils
// _normalize run with Python 3.11.2, sympy 1.11.1 and pylatexenc 2.10.
func TestNormalizeMillion(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`2 million`, `2*10^6`},
		{`5.3\text{ million}`, `5.3*10^6`},
		{`\text{3 million}`, `3*10^6`},
		{`\$2.5 million`, `2.5*10^6`},
		{`2 millions`, `2*10^6s`},
		{`million`, `*10^6`},
		{`1.5 billion`, `1.5*10^9`},
	} {
		if got := Normalize(tc.in); got != tc.want {
			t.Errorf("Normalize(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestMillionVerdicts are cases where the million rule decides the math and
// deepscaler verdicts: without it the word stays ("2million"), has more than
// two letters, and sympy is never asked. Verdicts from slime's own scorer files
// (grade_answer_verl, get_deepscaler_rule_based_reward, math_dapo_utils.verify
// on the last 300 characters) with Python 3.11.2, sympy 1.11.1 and pylatexenc
// 2.10; with the million line deleted from slime's _normalize, the first three
// score 0.
func TestMillionVerdicts(t *testing.T) {
	for _, tc := range []struct {
		name, response, label string
		want                  float64 // math and deepscaler
	}{
		{"word vs cdot power", think + `\boxed{2 million}`, `2 \cdot 10^6`, 1},
		{"times power vs text label", think + `\boxed{5.3 \times 10^6}`, `5.3\text{ million}`, 1},
		{"equal under sympy", think + `\boxed{0.5 million}`, `\frac{1}{2}\cdot 10^6`, 1},
		{"wrong power", think + `\boxed{2 million}`, `2 \cdot 10^9`, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, name := range []string{Math, DeepScaler} {
				r, err := ScoreLabel(name, tc.response, TextLabel(tc.label))
				if err != nil || r.Reward != tc.want {
					t.Errorf("%s(%q, %q) = %v, %v; want %v", name, tc.response, tc.label, r.Reward, err, tc.want)
				}
			}
			// None of the labels is a number, so dapo's float() refuses them.
			if _, err := ScoreLabel(Dapo, tc.response, TextLabel(tc.label)); !errors.Is(err, ErrNonNumericLabel) {
				t.Errorf("dapo(%q, %q) err = %v, want ErrNonNumericLabel", tc.response, tc.label, err)
			}
		})
	}
}
