package verify

import "testing"

// TestSolutionSets checks the sets of reals of the package doc: x \in S,
// inequalities and chains in |x|, ranges a < f(x) < b, and their
// neighbours.
func TestSolutionSets(t *testing.T) {
	checkEquivalent(t, []equivCase{
		// x \in S and chains in x
		{`-2 \le x \le 7`, `[-2,7]`, true},
		{`x \in [-2,7]`, `[-2,7]`, true},
		{`x \in [-2,7]`, `-2 \le x \le 7`, true},
		{`x \in [-2,7]`, `(-2,7]`, false},
		{`x \in (2, 5]`, `2 < x \le 5`, true},
		{`x \in (-\infty, 3) \cup (5, \infty)`, `(-\infty,3)\cup(5,\infty)`, true},
		{`x \in (-\infty, 3] \cup (5, \infty)`, `(-\infty,3)\cup(5,\infty)`, false},
		// |x| against a bound
		{`|x| < 2`, `(-2,2)`, true},
		{`|x| \le 2`, `[-2,2]`, true},
		{`|x| \le 2`, `[0,2]`, false},
		{`|x| \le 2`, `(-2,2)`, false},
		{`2 \ge |x|`, `[-2,2]`, true},
		{`|m| > 8`, `(-\infty,-8)\cup (8,\infty)`, true},
		{`8 < |m|`, `(-\infty,-8)\cup (8,\infty)`, true},
		{`|m| \ge 8`, `(-\infty,-8)\cup (8,\infty)`, false},
		{`|x| \geq 5`, `(-\infty,-5]\cup[5,\infty)`, true},
		{`|x| < \sqrt3`, `(-\sqrt{3}, \sqrt{3})`, true},
		{`|x| < \sqrt3`, `(-\sqrt{2}, \sqrt{2})`, false},
		{`\left|x\right| < 1`, `(-1,1)`, true},
		// bounds at or below 0
		{`|x| \ge 0`, `(-\infty,\infty)`, true},
		{`|x| > -1`, `(-\infty,\infty)`, true},
		{`|x| > 0`, `(-\infty,\infty)`, false},
		{`|x| > 0`, `(-\infty,0)\cup(0,\infty)`, true},
		{`|x| < 0`, `(0,0)`, false},
		{`|x| \le 0`, `[0,0]`, false},
		{`|x| \le -1`, `[1,-1]`, false},
		// chains in |x|
		{`1 \le |z| \le 3/2`, `[-3/2,-1] \cup [1,3/2]`, true},
		{`1 \le |z| \le 3/2`, `[1,3/2] \cup [-\frac32,-1]`, true},
		{`1 \le |z| \le 3/2`, `[-3/2,-1) \cup (1,3/2]`, false},
		{`1 \le |z| \le 3/2`, `[1,3/2]`, false},
		{`1 < |z| \le 3/2`, `[-3/2,-1) \cup (1,3/2]`, true},
		{`-1 < |x| \le 2`, `[-2,2]`, true},
		{`0 \le |x| < 2`, `(-2,2)`, true},
		{`0 < |x| < 2`, `(-2,0)\cup(0,2)`, true},
		{`0 < |x| < 2`, `(-2,2)`, false},
		{`2 < |x| < 1`, `(-1,-2)\cup(2,1)`, false},
		{`1 \le |x| \le 1`, `[-1,-1]\cup[1,1]`, false},
		{`2 > |x| > 1`, `(-2,-1)\cup(1,2)`, true},
		// not |x| of a variable, or bounds that are not constants
		{`|x - 1| < 2`, `(-2,2)`, false},
		{`|x^2| \le 4`, `[-2,2]`, false},
		{`|x^2| \le 4`, `[0,2]`, false},
		{`|x| < a`, `(-a,a)`, false},
		{`|x| + 1 < 3`, `(-\infty,2)`, false},
		{`|x| + 1 < 3`, `(-2,2)`, false},
		// ranges
		{`0 < f(x) < 1`, `(0,1)`, true},
		{`0 < f(x) \le 1`, `(0,1]`, true},
		{`0 \le f(x) \le 1`, `(0,1]`, false},
		{`1 > f(x) > 0`, `(0,1)`, true},
		{`-80\leq g(x)\leq 82`, `[-80, 82]`, true},
		{`-80\leq g(x)\leq 82`, `(-80, 82]`, false},
		{`-80\leq g(x)\leq 82`, `[-80, 81]`, false},
		{`-5 < f(x) \le \sqrt{26}`, `(-5,\sqrt{26}]`, true},
		{`f(2) < f(1) < f(4)`, `(2,4)`, false},
		{`(f(2), f(4))`, `f(2) < f(1) < f(4)`, false},
		{`f(x) \ge 6`, `[6,\infty)`, false},
		{`0 < f(x) < a`, `(0,a)`, false},
		// alternatives joined by "or"
		{`x<3 \text{ or } x>5`, `(-\infty,3)\cup(5,\infty)`, true},
		{`x < 3 or x > 5`, `(-\infty,3)\cup(5,\infty)`, true},
		{`x > 5 \quad\text{or}\quad x < 3`, `(-\infty,3)\cup(5,\infty)`, true},
		{`x \le -2 \lor x \ge 1`, `(-\infty,-2]\cup[1,\infty)`, true},
		{`x \le -2 \vee x \ge 1`, `x \le -2 \text{ or } x \ge 1`, true},
		{`x < -1 or 0 < x < 2`, `(-\infty,-1)\cup(0,2)`, true},
		{`|x| > 3 or x = 0`, `(-\infty,-3)\cup(3,\infty)`, false},
		{`x<3 \text{ or } x>5`, `(-\infty,3]\cup(5,\infty)`, false},
		{`x<3 \text{ or } x>5`, `(-\infty,3)\cup(6,\infty)`, false},
		{`x<3 \text{ or } y>5`, `(-\infty,3)\cup(5,\infty)`, false},
		{`x<3 \text{ and } x>5`, `(-\infty,3)\cup(5,\infty)`, false},
		{`x<3, x>5`, `(-\infty,3)\cup(5,\infty)`, false},
		{`x < 1 and x > 5 or 2 < x < 3`, `(-\infty,1)\cup(2,3)\cup(5,\infty)`, false},
		{`x < 1 or 2 < x < 3 or x > 5`, `(-\infty,1)\cup(2,3)\cup(5,\infty)`, true},
		{`x<3 or x<5`, `(-\infty,5)`, false},
		{`x<3 or 5`, `(-\infty,3)\cup(5,\infty)`, false},
		// all reals
		{`\mathbb{R}`, `(-\infty,\infty)`, true},
		{`x \in \mathbb{R}`, `(-\infty,\infty)`, true},
		{`\mathbb R`, `(-\infty, \infty)`, true},
		{`\mathbb{R}`, `(0,\infty)`, false},
		{`\mathbb{R}`, `[0,\infty)`, false},
		{`\mathbb{R}^2`, `(-\infty,\infty)`, false},
		{`\mathbb{R}\setminus\{0\}`, `(-\infty,\infty)`, false},
	})
}

// equivCase is two answers and whether they are the same answer.
type equivCase struct {
	a, b string
	want bool
}

// checkEquivalent checks each case with Equivalent, both ways round.
func checkEquivalent(t *testing.T, cases []equivCase) {
	t.Helper()
	for _, tc := range cases {
		got, err := Equivalent(tc.a, tc.b)
		if err != nil || got != tc.want {
			t.Errorf("Equivalent(%q, %q) = %v, %v; want %v", tc.a, tc.b, got, err, tc.want)
		}
		if got, _ := Equivalent(tc.b, tc.a); got != tc.want {
			t.Errorf("Equivalent(%q, %q) = %v; want %v (reversed)", tc.b, tc.a, got, tc.want)
		}
	}
}
