package verify

import "testing"

// TestRules checks one case or more for each rule of the package doc.
func TestRules(t *testing.T) {
	for _, tc := range []struct {
		response, label string
		want            bool
	}{
		// extraction
		{`So the answer is \boxed{\frac{1}{2}}.`, `\frac12`, true},
		{`\boxed 5`, "5", true},
		{`\fbox{7}`, "7", true},
		{`<think>maybe \boxed{3}</think> The answer is \boxed{4}.`, "4", true},
		{`<think>maybe \boxed{3}</think> The answer is \boxed{4}.`, "3", false},
		{`<think>I think \boxed{3}`, "3", false},
		{"Answer: 12", "12", true},
		{"**Final Answer:** $x = 3$", "3", true},
		{`The final answer is $\frac{3}{4}$. I hope it is correct.`, `0.75`, true},
		{`We get $x=2$ and so $y = 5$`, "5", true},
		{"the total is 42", "42", true},
		{`\boxed{2} and \boxed{3}`, "2, 3", true},
		{`\boxed{2} and \boxed{3}`, "2", false},
		{`\boxed{5}, so \boxed{5}`, "5", true},
		{"Answer: $\\boxed{10}$", "10", true},
		{"no answer here at all", "12", false},
		// numbers
		{`\boxed{7,425,000}`, "7425000", true},
		{`\boxed{1 000}`, "1000", true},
		{`\boxed{14{,}916}`, "14916", true},
		{`\boxed{.4}`, "0.4", true},
		{`\boxed{1000.0}`, "1000", true},
		{`\boxed{1.5\times10^{3}}`, "1500", true},
		{`\boxed{1.5e3}`, "1500", true},
		{`\boxed{28\%}`, "28", true},
		{`\boxed{0.28}`, `28\%`, true},
		{`\boxed{2\frac{1}{2}}`, `\frac52`, true},
		{`\boxed{\dfrac{1}{3}}`, `\frac13`, true},
		{`\boxed{0.333}`, `\frac13`, false},
		{`\boxed{3.14}`, `\pi`, false},
		{`\boxed{2\sqrt3}`, `\sqrt{12}`, true},
		{`\boxed{\frac{\sqrt{2}}{2}}`, `\frac{1}{\sqrt2}`, true},
		{`\boxed{30^\circ}`, "30", true},
		{`\boxed{5\text{ cm}}`, "5", true},
		{`\boxed{12 inches}`, "12", true},
		{`\boxed{025}`, "25", true},
		{`\boxed{1}`, "12", false},
		{`\boxed{-5}`, "5", false},
		{`\boxed{\frac{1}{2004!}}`, `\frac{1}{2006!}`, false},
		{`\boxed{2^{2^{100}}}`, `2^{2^{100}}`, true},
		{`\boxed{2^{2^{100}}}`, `2^{2^{101}}`, false},
		{`\boxed{3+4i}`, "4i+3", true},
		{`\boxed{(1+i)^2}`, "2i", true},
		// expressions
		{`\boxed{(x+1)^2}`, "x^2+2x+1", true},
		{`\boxed{x^2+2x}`, "x^2+2x+1", false},
		{`\boxed{y = 2x+3}`, "2x+3", true},
		{`\boxed{\left(3, 4\right)}`, "(3,4)", true},
		{`\boxed{(4,3)}`, "(3,4)", false},
		{`\boxed{(1,2)}`, "(1,2,3)", false},
		{`\boxed{\{3, 1, 2\}}`, "1, 2, 3", true},
		{`\boxed{1, 2}`, "1, 2, 3", false},
		{`\boxed{1 \pm \sqrt{2}}`, `1+\sqrt2, 1-\sqrt2`, true},
		{`\boxed{[1, 3)}`, "[1,3)", true},
		{`\boxed{(1, 3]}`, "[1,3)", false},
		{`\boxed{x < 3}`, `(-\infty, 3)`, true},
		{`\boxed{x \le 3}`, `(-\infty, 3)`, false},
		{`\boxed{-1 < x \leq 2}`, `(-1, 2]`, true},
		{`\boxed{(-\infty,1)\cup(2,\infty)}`, `(2,\infty) \cup (-\infty, 1)`, true},
		{`\boxed{\begin{pmatrix} 1 & 2 \\ 3 & 4 \end{pmatrix}}`, `\begin{bmatrix}1&2\\3&4\end{bmatrix}`, true},
		{`\boxed{\begin{pmatrix} 1 & 2 \\ 4 & 3 \end{pmatrix}}`, `\begin{pmatrix}1&2\\3&4\end{pmatrix}`, false},
		{`\boxed{\text{Evelyn}}`, "Evelyn", true},
		{`\boxed{\text{Evelyn}}`, `\text{Sam}`, false},
		{`\boxed{(C)}`, `\text{(C)}`, true},
		{`\boxed{C}`, `\text{(C)}`, true},
		{`\boxed{B}`, `\text{(C)}`, false},
		{`\boxed{\sqrt3}`, `\sqrt{3}`, true},
		{`\boxed{\frac13}`, `\frac{1}{3}`, true},
		{`\boxed{\frac{\pi}{6}}`, `\frac{\pi}{6}`, true},
		{`\boxed{\$5}`, "5", true},
	} {
		v, err := Check(tc.response, tc.label)
		if err != nil || v.Correct != tc.want {
			t.Errorf("Check(%q, %q) = %+v, %v; want %v", tc.response, tc.label, v, err, tc.want)
		}
	}
}
