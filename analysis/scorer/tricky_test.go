package scorer

import (
	"errors"
	"strings"
	"testing"
)

// think is the ⟨T⟩ prefix of the tricky-case table.
const think = "<think>\nreasoning...\n</think>\n\n"

type trickyCase struct {
	num        int
	name       string
	response   string
	label      Label
	math       int    // slime's math verdict
	dapo       string // "+1", "-1" or "ValueError"
	dapoPred   string // dapo's pred ("" when it raised)
	deepscaler int    // slime's deepscaler verdict
	decidedBy  string // which grader decided math (documentation only)
}

// trickyCases is the tricky-case table of the scorer specification (section 8):
// every verdict there was produced by running slime's own scorer files with
// Python 3.11, sympy 1.11.1 and pylatexenc 2.10.
func trickyCases(t testing.TB) []trickyCase {
	return []trickyCase{
		{1, `boxed_plain`, `So the result is $\boxed{42}$.`, TextLabel(`42`), 1, "-1", `[INVALID]`, 0, `mathd`},
		{2, `answer_line_only`, "Work.\nAnswer: 42", TextLabel(`42`), 0, "+1", `42`, 0, `no box`},
		{3, `think_boxed`, think + `The final answer is $\boxed{42}$.`, TextLabel(`42`), 1, "-1", `[INVALID]`, 1, `mathd`},
		{4, `boxed_inside_think_only`, "<think>\nI get \\boxed{42}\n</think>\n\nThe answer is 42.", TextLabel(`42`), 1, "-1", `[INVALID]`, 0, `mathd`},
		{5, `think_wrong_then_right`, `<think>\boxed{41}</think>Final: \boxed{42}`, TextLabel(`42`), 1, "-1", `[INVALID]`, 1, `mathd`},
		{6, `two_think_closers`, `a</think>b \boxed{41}</think> \boxed{42}`, TextLabel(`42`), 1, "-1", `[INVALID]`, 1, `mathd`},
		{7, `last_box_wins`, `\boxed{41} no wait \boxed{42}`, TextLabel(`42`), 1, "-1", `[INVALID]`, 0, `mathd`},
		{8, `last_box_wrong`, `\boxed{42} no wait \boxed{41}`, TextLabel(`42`), 0, "-1", `[INVALID]`, 0, `neither`},
		{9, `fbox`, `The answer is \fbox{42}.`, TextLabel(`42`), 0, "-1", `[INVALID]`, 0, `no box`},
		{10, `boxed_space_form`, `The answer is $\boxed 42$.`, TextLabel(`42`), 0, "-1", `[INVALID]`, 0, `no box`},
		{11, `boxed_unterminated`, `The answer is \boxed{42`, TextLabel(`42`), 0, "-1", `[INVALID]`, 0, `no box`},
		{12, `boxed_empty`, `The answer is \boxed{}.`, TextLabel(`42`), 0, "-1", `[INVALID]`, 0, `neither`},
		{13, `response_marker`, `scratch \boxed{41}###Response\boxed{42}`, TextLabel(`42`), 1, "-1", `[INVALID]`, 1, `mathd`},
		{14, `frac_vs_decimal_half`, think + `\boxed{\frac{1}{2}}`, TextLabel(`0.5`), 1, "-1", `[INVALID]`, 1, `mathd`},
		{15, `slash_vs_frac`, think + `\boxed{1/2}`, TextLabel(`\frac{1}{2}`), 1, "ValueError", "", 1, `mathd`},
		{16, `dfrac_shorthand`, think + `\boxed{\dfrac12}`, TextLabel(`\frac{1}{2}`), 1, "ValueError", "", 1, `mathd`},
		{17, `unreduced_frac`, think + `\boxed{2/4}`, TextLabel(`\frac{1}{2}`), 0, "ValueError", "", 0, `neither`},
		{18, `decimal_0.50_vs_frac`, think + `\boxed{0.50}`, TextLabel(`\frac12`), 1, "ValueError", "", 1, `elementwise`},
		{19, `decimal_vs_frac_3rd`, think + `\boxed{0.333}`, TextLabel(`\frac{1}{3}`), 0, "ValueError", "", 0, `neither`},
		{20, `int_as_float`, think + `\boxed{42.0}`, TextLabel(`42`), 1, "-1", `[INVALID]`, 1, `norm`},
		{21, `leading_zero_box`, think + `\boxed{25}`, TextLabel(`025`), 1, "-1", `[INVALID]`, 1, `norm`},
		{22, `leading_zero_both`, think + `\boxed{025}`, TextLabel(`025`), 1, "-1", `[INVALID]`, 1, `mathd`},
		{23, `percent`, think + `\boxed{10\%}`, TextLabel(`10`), 1, "-1", `[INVALID]`, 1, `mathd`},
		{24, `dollar_sign`, think + `\boxed{\$18.90}`, TextLabel(`18.90`), 1, "-1", `[INVALID]`, 1, `mathd`},
		{25, `degrees`, think + `\boxed{90^\circ}`, TextLabel(`90`), 1, "-1", `[INVALID]`, 1, `mathd`},
		{26, `text_units`, think + `\boxed{5\text{ cm}}`, TextLabel(`5`), 1, "-1", `[INVALID]`, 1, `mathd`},
		{27, `word_units`, think + `\boxed{5 inches}`, TextLabel(`5`), 1, "-1", `[INVALID]`, 1, `norm`},
		{28, `var_prefix`, think + `\boxed{x = 5}`, TextLabel(`5`), 1, "-1", `[INVALID]`, 1, `mathd`},
		{29, `long_var_prefix`, think + `\boxed{xy = 5}`, TextLabel(`5`), 0, "-1", `[INVALID]`, 0, `neither`},
		{30, `equation_rhs`, think + `\boxed{y=2x+3}`, TextLabel(`2x+3`), 1, "ValueError", "", 1, `mathd`},
		{31, `tuple_left_right`, think + `\boxed{(3,\frac{\pi}{2})}`, TextLabel(`\left( 3, \frac{\pi}{2} \right)`), 1, "ValueError", "", 1, `mathd`},
		{32, `tuple_sympy_elem`, think + `\boxed{(3, \pi/2)}`, TextLabel(`\left( 3, \frac{\pi}{2} \right)`), 1, "ValueError", "", 1, `norm`},
		{33, `interval_bracket_mismatch`, think + `\boxed{[1,2)}`, TextLabel(`(1,2)`), 0, "ValueError", "", 0, `neither`},
		{34, `interval_same`, think + `\boxed{(-\infty, 2]}`, TextLabel(`(-\infty,2]`), 1, "ValueError", "", 1, `mathd`},
		{35, `commutative`, think + `\boxed{x+1}`, TextLabel(`1+x`), 1, "ValueError", "", 1, `elementwise`},
		{36, `expanded_square`, think + `\boxed{x^2+2x+1}`, TextLabel(`(x+1)^2`), 1, "ValueError", "", 1, `elementwise`},
		{37, `sqrt_shorthand`, think + `\boxed{3\sqrt13}`, TextLabel(`3\sqrt{13}`), 0, "ValueError", "", 0, `neither`},
		{38, `sqrt_unsimplified`, think + `\boxed{\sqrt{117}}`, TextLabel(`3\sqrt{13}`), 1, "ValueError", "", 1, `elementwise`},
		{39, `text_answer_unwrapped`, think + `\boxed{Evelyn}`, TextLabel(`\text{Evelyn}`), 1, "ValueError", "", 1, `mathd`},
		{40, `text_answer_case`, think + `\boxed{evelyn}`, TextLabel(`\text{Evelyn}`), 1, "ValueError", "", 1, `norm`},
		{41, `mc_letter`, think + `\boxed{C}`, TextLabel(`\text{(C)}`), 1, "ValueError", "", 1, `elementwise`},
		{42, `thousands_comma`, think + `\boxed{1,000}`, TextLabel(`1000`), 1, "-1", `[INVALID]`, 1, `norm`},
		{43, `thousands_brace_comma`, think + `\boxed{1{,}000}`, TextLabel(`1000`), 1, "-1", `[INVALID]`, 1, `norm`},
		{44, `complex_spaces`, think + `\boxed{6 - 5i}`, TextLabel(`6-5i`), 1, "ValueError", "", 1, `mathd`},
		{45, `pi_numeric`, think + `\boxed{3.14159}`, TextLabel(`\pi`), 0, "ValueError", "", 0, `neither`},
		{46, `mixed_number`, think + `\boxed{\frac{14}{3}}`, TextLabel(`4\frac{2}{3}`), 1, "ValueError", "", 1, `elementwise`},
		{47, `unordered_list`, think + `\boxed{3, 2}`, TextLabel(`2, 3`), 0, "-1", `[INVALID]`, 0, `neither`},
		{48, `power_vs_int`, think + `\boxed{2^{10}}`, TextLabel(`1024`), 0, "-1", `[INVALID]`, 0, `neither`},
		{49, `frac_equals_int`, think + `\boxed{\frac{6}{3}}`, TextLabel(`2`), 0, "-1", `[INVALID]`, 0, `neither`},
		{50, `neg_slash`, think + `\boxed{-1/2}`, TextLabel(`-\frac{1}{2}`), 1, "ValueError", "", 1, `norm`},
		{51, `label_is_boxed`, think + `\boxed{7}`, TextLabel(`\boxed{7}`), 1, "-1", `[INVALID]`, 1, `mathd`},
		{52, `empty_label`, think + `\boxed{7}`, TextLabel(``), 0, "ValueError", "", 0, `empty label`},
		{53, `text_space_twice`, think + `\boxed{5\text{ m}\text{ s}}`, TextLabel(`5\text{ m}\text{ s}`), 1, "-1", `[INVALID]`, 1, `mathd`},
		{54, `sqrt_at_end_label`, think + `\boxed{2\sqrt}`, TextLabel(`2\sqrt`), 1, "ValueError", "", 1, `mathd`},
		{55, `matrix_spacing`, think + `\boxed{\begin{pmatrix}1\\2\end{pmatrix}}`, TextLabel(`\begin{pmatrix} 1 \\ 2 \end{pmatrix}`), 1, "ValueError", "", 1, `mathd`},
		{56, `set_braces`, think + `\boxed{\{1,2\}}`, TextLabel(`\{1, 2\}`), 1, "ValueError", "", 1, `mathd`},
		{57, `dapo_lowercase`, "work\nanswer: 42", TextLabel(`42`), 0, "+1", `42`, 0, `no box`},
		{58, `dapo_no_colon`, "work\nThe answer is 42", TextLabel(`42`), 0, "-1", `[INVALID]`, 0, `no box`},
		{59, `dapo_answer_is_colon`, "work\nThe answer is: 42", TextLabel(`42`), 0, "-1", `[INVALID]`, 0, `no box`},
		{60, `dapo_final_answer`, "work\nFinal Answer: 42", TextLabel(`42`), 0, "+1", `42`, 0, `no box`},
		{61, `dapo_boxed_in_answer`, "work\nAnswer: \\boxed{42}", TextLabel(`42`), 1, "+1", `42`, 0, `mathd`},
		{62, `dapo_dollars_in_answer`, "work\nAnswer: $42$.", TextLabel(`42`), 0, "+1", `42`, 0, `no box`},
		{63, `dapo_units_word`, "work\nAnswer: 42 dollars", TextLabel(`42`), 0, "+1", `42`, 0, `no box`},
		{64, `dapo_eq_in_answer`, "work\nAnswer: x = 42", TextLabel(`42`), 0, "+1", `42`, 0, `no box`},
		{65, `dapo_comma_thousands`, "work\nAnswer: 1,000", TextLabel(`1000`), 0, "+1", `1000`, 0, `no box`},
		{66, `dapo_float_label`, "work\nAnswer: 42", TextLabel(`42.0`), 0, "+1", `42`, 0, `no box`},
		{67, `dapo_decimal_label_trunc_FP`, "work\nAnswer: 2", TextLabel(`2.5`), 0, "+1", `2`, 0, `no box`},
		{68, `dapo_decimal_label_exact`, "work\nAnswer: 2.5", TextLabel(`2.5`), 0, "-1", `2.5`, 0, `no box`},
		{69, `dapo_leading_zero_pred`, "work\nAnswer: 025", TextLabel(`025`), 0, "-1", `025`, 0, `no box`},
		{70, `dapo_leading_zero_label`, "work\nAnswer: 25", TextLabel(`025`), 0, "+1", `25`, 0, `no box`},
		{71, `dapo_symbolic_label`, "work\nAnswer: \\frac{1}{2}", TextLabel(`\frac{1}{2}`), 0, "ValueError", "", 0, `no box`},
		{72, `dapo_text_label`, "work\nAnswer: Evelyn", TextLabel(`\text{Evelyn}`), 0, "ValueError", "", 0, `no box`},
		{73, `dapo_multiple_answer_lines`, "Answer: 41\nmore work\nAnswer: 42", TextLabel(`42`), 0, "+1", `42`, 0, `no box`},
		{74, `dapo_answer_then_300_chars`, "work\nAnswer: 42\n" + strings.Repeat("x", 320), TextLabel(`42`), 0, "-1", `[INVALID]`, 0, `no box`},
		{75, `dapo_answer_before_think_end`, "<think>Answer: 42</think>\nAnswer: 41", TextLabel(`42`), 0, "-1", `41`, 0, `no box`},
		{76, `dapo_article_strip`, "work\nAnswer: a 42", TextLabel(`42`), 0, "+1", `42`, 0, `no box`},
		{77, `dapo_negative`, "work\nAnswer: -3", TextLabel(`-3`), 0, "+1", `-3`, 0, `no box`},
		{78, `dapo_degree_label`, "work\nAnswer: 90", TextLabel(`90^\circ`), 0, "+1", `90`, 0, `no box`},
		{79, `dapo_percent_label`, "work\nAnswer: 10", TextLabel(`10\%`), 0, "ValueError", "", 0, `no box`},
		{80, `boxed_and_answer_line`, "So $\\boxed{42}$.\nAnswer: 42", TextLabel(`42`), 1, "+1", `42`, 0, `mathd`},
		{81, `think_boxed_and_answer`, think + "So $\\boxed{42}$.\nAnswer: 42", TextLabel(`42`), 1, "+1", `42`, 1, `mathd`},
		{82, `dapo_im_end_token`, "work\nAnswer: 42<|im_end|>", TextLabel(`42`), 0, "+1", `42`, 0, `no box`},
		{83, `mathd_text_split_partial_FP`, think + `\boxed{-2}`, TextLabel(`-2 \text{ or } -12`), 1, "ValueError", "", 1, `mathd`},
		{84, `mathd_text_split_partial_FP2`, think + `\boxed{12}`, TextLabel(`12\text{ and }13`), 1, "-1", `[INVALID]`, 1, `mathd`},
		{85, `dapo_boxed_eq_in_answer`, "work\nAnswer: \\boxed{x=5}", TextLabel(`x=5`), 1, "-1", `5}`, 0, `mathd`},
		{86, `dapo_answer_no_space`, "work\nAnswer:42", TextLabel(`42`), 0, "+1", `42`, 0, `no box`},
		{87, `dapo_answer_next_line`, "work\nAnswer:\n42", TextLabel(`42`), 0, "+1", `42`, 0, `no box`},
		{88, `dapo_answer_caps`, "work\nANSWER: 42", TextLabel(`42`), 0, "+1", `42`, 0, `no box`},
		{89, `dapo_list_label_comma_FP`, "work\nAnswer: 1", TextLabel(`0,1`), 0, "+1", `1`, 0, `no box`},
		{90, `dapo_equation_label_FP`, "work\nAnswer: 0", TextLabel(`2x - y + 2z - 18 = 0`), 0, "+1", `0`, 0, `no box`},
		{91, `dapo_underscore_label`, "work\nAnswer: 226", TextLabel(`22_6`), 0, "+1", `226`, 0, `no box`},
		{92, `dapo_base_label`, "work\nAnswer: 22_6", TextLabel(`22_6`), 0, "-1", `22_6`, 0, `no box`},
		{93, `label_int_42`, think + `\boxed{42}`, mustNumber(t, "42"), 1, "-1", `[INVALID]`, 1, `mathd`},
		{94, `label_int_zero`, think + `\boxed{0}`, mustNumber(t, "0"), 0, "-1", `[INVALID]`, 1, `math: falsy-label guard; deepscaler: mathd`},
		{95, `label_float_42`, think + `\boxed{42}`, mustNumber(t, "42.0"), 1, "-1", `[INVALID]`, 1, `norm`},
		{96, `sqrt_rationalized`, think + `\boxed{\frac{1}{\sqrt{2}}}`, TextLabel(`\frac{\sqrt{2}}{2}`), 1, "ValueError", "", 1, `elementwise`},
		{97, `three_letters_no_sympy`, think + `\boxed{abc}`, TextLabel(`cba`), 0, "ValueError", "", 0, `neither`},
		{98, `two_letters_commute`, think + `\boxed{ba}`, TextLabel(`ab`), 1, "ValueError", "", 1, `elementwise`},
		{99, `degree_word`, think + `\boxed{30 degrees}`, TextLabel(`30`), 1, "-1", `[INVALID]`, 1, `norm`},
		{100, `million_word`, think + `\boxed{2 million}`, TextLabel(`2000000`), 0, "-1", `[INVALID]`, 0, `neither`},
		{101, `think_open_no_close`, "<think>\n\\boxed{42}", TextLabel(`42`), 1, "-1", `[INVALID]`, 0, `mathd`},
		{102, `nested_box`, think + `\boxed{\boxed{42}}`, TextLabel(`42`), 1, "-1", `[INVALID]`, 1, `mathd`},
		{103, `trailing_bare_boxed`, think + `\boxed{42} (the \boxed command)`, TextLabel(`42`), 0, "-1", `[INVALID]`, 0, `no box`},
		{104, `box_then_text`, think + `\boxed{4}2`, TextLabel(`42`), 0, "-1", `[INVALID]`, 0, `neither`},
		{105, `or_list`, think + `\boxed{-2, -12}`, TextLabel(`-2 \text{ or } -12`), 1, "ValueError", "", 1, `norm`},
		{106, `or_list_words`, think + `\boxed{-2 or -12}`, TextLabel(`-2 \text{ or } -12`), 1, "ValueError", "", 1, `norm`},
		{107, `sympy_guard_two_digit_exp`, think + `\boxed{1+x^{10}}`, TextLabel(`x^{10}+1`), 0, "ValueError", "", 0, `neither`},
		{108, `sympy_guard_pi_and_var`, think + `\boxed{\pi r}`, TextLabel(`r\pi`), 0, "ValueError", "", 0, `neither`},
		{109, `sympy_pi_commute`, think + `\boxed{2\pi}`, TextLabel(`\pi \cdot 2`), 1, "ValueError", "", 1, `elementwise`},
		{110, `tuple_label_bare_response`, think + `\boxed{1,2}`, TextLabel(`(1,2)`), 0, "ValueError", "", 0, `neither`},
		{111, `bare_label_tuple_response`, think + `\boxed{(1,2)}`, TextLabel(`1,2`), 0, "-1", `[INVALID]`, 0, `neither`},
		{112, `tuple_elementwise_frac`, think + `\boxed{(0.5, 2)}`, TextLabel(`\left(\frac{1}{2}, 2\right)`), 1, "ValueError", "", 1, `elementwise`},
		{113, `tuple_unreduced_elem`, think + `\boxed{(2/4, 2)}`, TextLabel(`(\frac{1}{2}, 2)`), 0, "ValueError", "", 0, `neither`},
		{114, `mbox_label`, think + `\boxed{A}`, TextLabel(`\mbox{(A)}`), 0, "ValueError", "", 0, `neither`},
		{115, `binom_latex`, think + `\boxed{10}`, TextLabel(`\binom{5}{2}`), 0, "ValueError", "", 0, `neither`},
		{116, `sec_dropped`, think + `\boxed{2}`, TextLabel(`\sec 0 + 1`), 0, "ValueError", "", 0, `neither`},
		{117, `pmatrix_vs_tuple`, think + `\boxed{(1,2)}`, TextLabel(`\begin{pmatrix} 1 \\ 2 \end{pmatrix}`), 0, "ValueError", "", 0, `neither`},
		{118, `dapo_trailing_period`, "work\nAnswer: 42.", TextLabel(`42`), 0, "-1", `42.`, 0, `no box`},
		{119, `dapo_markdown_bold`, "work\n**Answer:** 42", TextLabel(`42`), 0, "-1", `**42`, 0, `no box`},
		{120, `dapo_bold_value`, "work\nAnswer: **42**", TextLabel(`42`), 0, "-1", `**42**`, 0, `no box`},
		{121, `dapo_text_after_value`, "work\nAnswer: 42 is the result", TextLabel(`42`), 0, "-1", `42istheresult`, 0, `no box`},
		{122, `dapo_answer_word_inside`, "work\nThe final answer: 42", TextLabel(`42`), 0, "+1", `42`, 0, `no box`},
		{123, `mbox_label_empty_norm_FP`, think + `\boxed{\mbox{Monday}}`, TextLabel(`\mbox{Saturday}`), 1, "ValueError", "", 1, `norm`},
		{124, `empty_box_vs_mbox_label_FP`, think + `\boxed{}`, TextLabel(`\mbox{Saturday}`), 1, "ValueError", "", 1, `norm`},
		{125, `mbox_label_correct`, think + `\boxed{Saturday}`, TextLabel(`\mbox{Saturday}`), 0, "ValueError", "", 0, `neither`},
	}
}

func mustNumber(t testing.TB, lit string) Label {
	t.Helper()
	l, err := NumberLabel(lit)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func TestTrickyCases(t *testing.T) {
	cases := trickyCases(t)
	if len(cases) != 125 {
		t.Fatalf("table has %d rows, want 125", len(cases))
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m, err := ScoreLabel(Math, tc.response, tc.label)
			if err != nil || int(m.Reward) != tc.math {
				t.Errorf("#%d math(%q, %q) = %v, %v; want %d (decided by %s)", tc.num, tc.response, tc.label.Text, m.Reward, err, tc.math, tc.decidedBy)
			}
			d, err := ScoreLabel(DeepScaler, tc.response, tc.label)
			if err != nil || int(d.Reward) != tc.deepscaler {
				t.Errorf("#%d deepscaler(%q, %q) = %v, %v; want %d", tc.num, tc.response, tc.label.Text, d.Reward, err, tc.deepscaler)
			}
			p, err := ScoreLabel(Dapo, tc.response, tc.label)
			switch {
			case tc.dapo == "ValueError":
				if !errors.Is(err, ErrNonNumericLabel) {
					t.Errorf("#%d dapo(%q, %q) = %+v, %v; want ErrNonNumericLabel", tc.num, tc.response, tc.label.Text, p, err)
				}
			case err != nil:
				t.Errorf("#%d dapo(%q, %q): unexpected error %v", tc.num, tc.response, tc.label.Text, err)
			default:
				want := map[string]float64{"+1": 1, "-1": -1}[tc.dapo]
				if p.Reward != want || p.Correct != (want == 1) || p.Pred != tc.dapoPred {
					t.Errorf("#%d dapo(%q, %q) = %+v; want reward %v, pred %q", tc.num, tc.response, tc.label.Text, p, want, tc.dapoPred)
				}
			}
		})
	}
}

// The boxed_ prefix replaces the response by its last box before scoring
// (spec section 1, step 4).
func TestBoxedPrefix(t *testing.T) {
	for _, tc := range []struct {
		name, response, label string
		want                  float64
	}{
		{"boxed_math", `so \boxed{42}`, "42", 0},
		{"boxed_deepscaler", think + `\boxed{42}`, "42", 0},
		{"boxed_dapo", `\boxed{42}`, "42", -1},
		{"boxed_math", `\boxed{\boxed{42}}`, "42", 0}, // the last \boxed is the inner one
		{"boxed_dapo", `\boxed{Answer: 42}`, "42", 1},
	} {
		r, err := Score(tc.name, tc.response, tc.label)
		if err != nil || r.Reward != tc.want {
			t.Errorf("Score(%q, %q, %q) = %+v, %v; want reward %v", tc.name, tc.response, tc.label, r, err, tc.want)
		}
	}
	if _, err := Score("boxed_dapo", "x", `\frac12`); !errors.Is(err, ErrNonNumericLabel) {
		t.Errorf("boxed_dapo on a symbolic label: err = %v, want ErrNonNumericLabel", err)
	}
}

func TestUnknownScorer(t *testing.T) {
	for _, name := range []string{"", "f1", "Math", " math", "boxed_", "boxed_f1"} {
		if _, err := Score(name, `\boxed{1}`, "1"); !errors.Is(err, ErrUnknownScorer) {
			t.Errorf("Score(%q): err = %v, want ErrUnknownScorer", name, err)
		}
	}
}

func TestRMType(t *testing.T) {
	for _, tc := range []struct{ meta, flag, want string }{
		{"", "deepscaler", "deepscaler"},
		{"math", "deepscaler", "math"},
		{"  dapo\n", "math", "dapo"},
		{"", " boxed_math ", "boxed_math"},
		{"", "", ""},
	} {
		if got := RMType(tc.meta, tc.flag); got != tc.want {
			t.Errorf("RMType(%q, %q) = %q, want %q", tc.meta, tc.flag, got, tc.want)
		}
	}
}
