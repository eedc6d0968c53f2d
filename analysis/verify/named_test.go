package verify

import "testing"

// checkCases runs Check on each case and reports the wrong verdicts.
func checkCases(t *testing.T, cases []struct {
	name, response, label string
	want                  bool
}) {
	t.Helper()
	for _, tc := range cases {
		v, err := Check(tc.response, tc.label)
		if err != nil || v.Correct != tc.want {
			t.Errorf("%s: Check(%q, %q) = %v (read %q, label %q), %v; want %v",
				tc.name, tc.response, tc.label, v.Correct, v.Answer, v.Label, err, tc.want)
		}
	}
}

// TestNamedValues checks the named-value rules: a figure's quantities and
// a list of named values against bare values (in order) and against named
// ones (name by name), and the last side of a computation.
func TestNamedValues(t *testing.T) {
	checkCases(t, []struct {
		name, response, label string
		want                  bool
	}{
		{"named label, bare values in order", `\boxed{4, 5}`, `$AB=4,CD=5$`, true},
		{"named label, bare values swapped", `\boxed{5, 4}`, `AB=4, CD=5`, false},
		{"named label, a tuple in order", `\boxed{(4, 5)}`, `AB=4, CD=5`, true},
		{"same names, same order", `\boxed{AB=4, CD=5}`, `AB=4, CD=5`, true},
		{"same names, other order", `\boxed{CD=5, AB=4}`, `AB=4, CD=5`, true},
		{"names swapped on the values", `\boxed{CD=4, AB=5}`, `AB=4, CD=5`, false},
		{"other names", `\boxed{AB=4, EF=5}`, `AB=4, CD=5`, false},
		{"one value of two", `\boxed{AB=4}`, `AB=4, CD=5`, false},
		{"variables swapped on the values", `\boxed{y=1, x=2}`, `x=1, y=2`, false},
		{"variables in another order", `\boxed{y=2, x=1}`, `x=1, y=2`, true},
		{"variables against bare values swapped", `\boxed{2, 1}`, `x=1, y=2`, false},
		{"a name repeated: solutions", `\boxed{x=2, x=1}`, `1, 2`, true},
		{"a name repeated names no y", `\boxed{x=1, x=2}`, `x=1, y=2`, false},
		{"segment length in bars", `\boxed{1}`, `$$|AB|=1$$`, true},
		{"segment length in bars, wrong", `\boxed{2}`, `$$|AB|=1$$`, false},
		{"ratio of points", `$$1$$`, `$$A:B=1$$`, true},
		{"quotient of segments", `\boxed{\frac{1}{\sqrt{6}}}`, `\frac{NO}{BO}=\frac{1}{\sqrt{6}}`, true},
		{"quotient of segments, wrong", `\boxed{\frac{1}{\sqrt{5}}}`, `\frac{NO}{BO}=\frac{1}{\sqrt{6}}`, false},
		{"ratio of volumes", `\boxed{11:21}`, `V_{1}:V_{2}=11:21`, true},
		{"ratio of volumes named alike", `\boxed{V_1:V_2 = 11:21}`, `V_{1}:V_{2}=11:21`, true},
		{"ratio of other volumes", `\boxed{V_1:V_3 = 11:21}`, `V_{1}:V_{2}=11:21`, false},
		{"ratio reversed", `\boxed{21:11}`, `V_{1}:V_{2}=11:21`, false},
		{"ratio of areas", `\boxed{7:32}`, `S_{MBCN}:S=7:32`, true},
		{"another segment", `\boxed{CD = 4}`, `AB = 4`, false},
		{"a variable's name is dropped", `\boxed{t = 3}`, `x = 3`, true},
		{"chain, last value", `\boxed{0}`, `$1 = z = x = 0$`, true},
		{"chain, not its first side", `\boxed{1}`, `$1 = z = x = 0$`, false},
		{"computation", `\boxed{5+3=8}`, `8`, true},
		{"computation with thousands", `\boxed{10,200 + 255 = 10,455}`, `10455`, true},
		{"computation, wrong result", `\boxed{10,200 + 255 = 10,456}`, `10455`, false},
		{"an equation is no computation", `\boxed{2x+4y-3=0}`, `0`, false},
		{"a list is no computation", `\boxed{1,2 = 3}`, `3`, false},
	})
}

// TestJoinedValues checks several boxes and values joined by words or
// semicolons: one answer, a set of solutions.
func TestJoinedValues(t *testing.T) {
	checkCases(t, []struct {
		name, response, label string
		want                  bool
	}{
		{"a label's two boxes", `\boxed{1,2}`, `$\boxed{1}\boxed{2}$`, true},
		{"a label's two boxes, one given", `\boxed{2}`, `$\boxed{1}\boxed{2}$`, false},
		{"a label's boxes joined by and", `$\boxed{-2,1}$.`, `\(\boxed{1}\) and \(\boxed{-2}\).`, true},
		{"a label's boxes joined by and, one given", `\boxed{-2}`, `\(\boxed{1}\) and \(\boxed{-2}\).`, false},
		{"two words between boxes", `\boxed{1,2}`, `\boxed{1} papers and \boxed{2} bins`, true},
		{"more words: the last box", `\boxed{1,2}`, `\boxed{1} no no no no no \boxed{2}`, false},
		{"more words: the last box alone", `\boxed{2}`, `\boxed{1} no no no no no \boxed{2}`, true},
		{"a response's boxes joined by and", `\boxed{1} and \boxed{-2}`, `-2, 1`, true},
		{"pairs joined by or", `\boxed{(7,11),\ (11,7)}`, `(11,7)or(7,11)`, true},
		{"pairs joined by or, one given", `\boxed{(7,11)}`, `(11,7)or(7,11)`, false},
		{"numbers joined by and", `\boxed{2, 3}`, `2 and 3`, true},
		{"numbers joined by and, one wrong", `\boxed{2, 4}`, `2 and 3`, false},
		{"a word between letters joins nothing", `\boxed{\text{black and white}}`, `\text{black and white}`, true},
		{"semicolons", `\boxed{\{-12,-11,-10\}}`, `-12;-11;-10`, true},
		{"semicolons, one missing", `\boxed{-12,-11}`, `-12;-11;-10`, false},
		{"semicolons between pairs", `\boxed{(2, 15), (-4, 27)}`, `(-4, 27);(2, 15)`, true},
		{"semicolons between pairs, one swapped", `\boxed{(15, 2), (-4, 27)}`, `(-4, 27);(2, 15)`, false},
	})
}

// TestPlainAmounts checks money and percentages written plainly: a dollar
// sign before a thousands number, a line of currency dollars, and an
// amount that ends the prose.
func TestPlainAmounts(t *testing.T) {
	checkCases(t, []struct {
		name, response, label string
		want                  bool
	}{
		{"dollars in prose", `So Dr. Zaius has $10,200 + $255 = $10,455.`, `10455`, true},
		{"dollars in prose, wrong", `So Dr. Zaius has $10,200 + $255 = $10,445.`, `10455`, false},
		{"a dollar before thousands", `\boxed{\$10,455}`, `10455`, true},
		{"a dollar before thousands is no list", `\boxed{\$10,455}`, `10, 455`, false},
		{"dollar sums join their thousands", `\boxed{\$10,200 + \$255}`, `10455`, true},
		{"dollar sums join their thousands, wrong", `\boxed{\$10,200 + \$225}`, `10455`, false},
		{"a math span still closes", `The price is $5$ dollars.`, `5`, true},
		{"percent after the last span", `We get $$\frac{a}{b} \geq 2.$$ So it increases by 100%.`, `$100%$`, true},
		{"percent after the last span, wrong", `We get $$\frac{a}{b} \geq 2.$$ So it increases by 50%.`, `$100%$`, false},
		{"100% is not the count 1", `So it increases by 100%.`, `1`, false},
		{"28% in prose is 0.28", `So the share is about 28%.`, `0.28`, true},
	})
}
