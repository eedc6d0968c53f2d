package verify

import (
	"strings"
	"testing"
)

// TestWrittenForms checks the ways of writing one answer of the package
// doc's Normal form: commands after two backslashes, semicolons for
// commas, groups of named values; and their neighbours.
func TestWrittenForms(t *testing.T) {
	checkEquivalent(t, []equivCase{
		// commands after two backslashes
		{`\\frac{1}{2}`, `\frac{1}{2}`, true},
		{`\\frac{1}{3}`, `\frac{1}{2}`, false},
		{`\\left( 3, \\frac{\\pi}{2} \\right)`, `\left( 3, \frac{\pi}{2} \right)`, true},
		{`\\left( 3, \\frac{\\pi}{2} \\right)`, `\left( 3, \frac{\pi}{3} \right)`, false},
		{`-2 \\le x \\le 7`, `[-2,7]`, true},
		{`-2 \\le x \\le 7`, `(-2,7]`, false},
		{`2\\sqrt{2}`, `\sqrt{8}`, true},
		{`\\sin x`, `\sin x`, true},
		{`\begin{pmatrix}1\\2\end{pmatrix}`, `\begin{pmatrix}1\\ 2\end{pmatrix}`, true},
		{`\begin{pmatrix}1\\2\end{pmatrix}`, `\begin{pmatrix}12\end{pmatrix}`, false},
		{`\begin{pmatrix}1\\x\end{pmatrix}`, `\begin{pmatrix}1\\ x\end{pmatrix}`, true},
		{`\begin{pmatrix}1\\\frac{1}{2}\end{pmatrix}`, `\begin{pmatrix}1\\ \frac{1}{2}\end{pmatrix}`, true},
		{`\begin{pmatrix}1\\\frac{1}{2}\end{pmatrix}`, `\begin{pmatrix}1 \frac{1}{2}\end{pmatrix}`, false},
		// semicolons where commas would be
		{`(0;-2;6)`, `(0,-2,6)`, true},
		{`(0;-2;6)`, `(0,6,-2)`, false},
		{`[1;2]`, `[1,2]`, true},
		{`[1;2)`, `[1,2]`, false},
		{`(0;0;0),(0;-2;0),(4;0;6)`, `(4, 0, 6), (0, 0, 0), (0, -2, 0)`, true},
		{`(0;0;0),(0;-2;0),(4;0;6)`, `(4, 0, 6), (0, 0, 0), (0, 2, 0)`, false},
		{`(1,2;3)`, `(1,2,3)`, false},
		// groups of named values
		{`p=5,q=2;p=7,q=2`, `(5,2),(7,2)`, true},
		{`p=5,q=2;p=7,q=2`, `(7,2),(5,2)`, true},
		{`p=5,q=2;p=7,q=2`, `(2,5),(2,7)`, false},
		{`p=5,q=2;p=7,q=2`, `(5,2)`, false},
		{`p=5,q=2;q=7,p=2`, `(5,2),(7,2)`, false},
		{`p=5,q=2;q=7,p=2`, `(5,2),(2,7)`, false},
		{`x=1,y=2;x=3,y=4`, `x=1,y=2;x=3,y=4`, true},
		{`x=1,y=2;x=3,y=4`, `x=1,y=2;x=3,y=5`, false},
		{`p=5;q=2`, `5,2`, true},
		// a bare word after a number: a unit, or the letters of a product
		{`12 inches`, `12`, true},
		{`3 hrs`, `3`, true},
		{`5 cm`, `5`, true},
		{`\frac{1}{2} xy`, `\frac{1}{2} ab`, false},
		{`2 xy`, `2 ab`, false},
		{`2 abc`, `2 xyz`, false},
		{`2 xy`, `2xy`, true},
		{`2\sqrt{3} ab`, `2\sqrt{3} xy`, false},
	})
}

// TestStatedAnswers checks which statement of a response is its answer
// and how a label that lists its values in several spans is read.
func TestStatedAnswers(t *testing.T) {
	for _, tc := range []struct {
		response, label string
		want            bool
	}{
		// a final-answer statement after the last box
		{"so $\\boxed{255}$ in the second CD.\nFinal Answer: The final answer is $10,455$. I hope it is correct.", "10455", true},
		{"so $\\boxed{255}$ in the second CD.\nFinal Answer: The final answer is $10,455$. I hope it is correct.", "255", false},
		{"$\\boxed{7}$. The final answer is 8.", "8", true},
		{"$\\boxed{7}$. The final answer is 8.", "7", false},
		{"$\\boxed{7}$, and I checked that the final answer is correct.", "7", true},
		{"$\\boxed{25}$.\nAnswer: 5", "25", true},
		{"$\\boxed{25}$.\nAnswer: 5", "5", false},
		{"The final answer is $\\boxed{7}$.", "7", true},
		{"Final Answer: The final answer is $12$ and $13$.", `12\text{ and }13`, true},
		{"Final Answer: The final answer is $12$ and $13$.", `12`, false},
		{"Final Answer: The final answer is $12$ and $14$.", `12\text{ and }13`, false},
		// a label of several spans
		{"$\\boxed{1,2,3}$", "$1$ and $2$ and $3$", true},
		{"$\\boxed{3,2,1}$", "$1$, $2$, and $3$", true},
		{"$\\boxed{1,2}$", "$1$ and $2$ and $3$", false},
		{"$\\boxed{3}$", "$1$ and $2$ and $3$", false},
		{"$\\boxed{21,16,11}$", "$21,16$ or $11$", true},
		{"$\\boxed{11}$", "$21,16$ or $11$", false},
		{"$\\boxed{-1;2}$", "$-1$; $2$", true},
		{"$\\boxed{3}$", "The sides are $1$ and $3$", true},
		{"$\\boxed{1, 3}$", "The sides are $1$ and $3$", false},
		// a final-answer phrase inside the last box is its content; a
		// label's box wins over a final-answer statement after it
		{"$\\boxed{\\text{Final answer: }12}$", "\\boxed{\\text{Final answer: }12}", true},
		{"\\boxed{3}", "$\\boxed{3}$. The final answer is 4.", true},
		{"\\boxed{4}", "$\\boxed{3}$. The final answer is 4.", false},
		// an Answer: line over lines while a $ is open, not cut by the
		// Final Answer: that starts with it
		{"Final Answer: $\\begin{pmatrix} 1 \\\\\n 2 \\end{pmatrix}$", `\begin{pmatrix}1\\2\end{pmatrix}`, true},
		// the last 64 "answer" words are tried, no more
		{"Answer: 5\n" + strings.Repeat("answer ", 62) + "answer", "5", true},
		{"Answer: 5\n" + strings.Repeat("answer ", 63) + "answer", "5", false},
		// a pattern ends at most 64 bytes after its word: a later "answer"
		// does not reach it
		{"The answer" + strings.Repeat(" ", 66) + "is $5$; I checked the answer.\nSo it is $6$.", "6", true},
		{"The answer" + strings.Repeat(" ", 66) + "is $5$; I checked the answer.\nSo it is $6$.", "5", false},
		// the last 64 box commands are tried, no more
		{`\boxed{7} ` + strings.Repeat(`\fbox`, 63), "7", true},
		{`\boxed{7} ` + strings.Repeat(`\fbox`, 64), "7", false},
	} {
		v, err := Check(tc.response, tc.label)
		if err != nil || v.Correct != tc.want {
			t.Errorf("Check(%q, %q) = %v (read %q, label %q), %v; want %v", tc.response, tc.label, v.Correct, v.Answer, v.Label, err, tc.want)
		}
	}
}
