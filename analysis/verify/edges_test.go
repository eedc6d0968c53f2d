package verify

import "testing"

// TestEdges checks the rules of the package doc at their edges, where a
// rule changes its verdict: a comma's reading by the digits around it, the
// linear-inequality rule against inequalities that are not linear, and a
// decimal that approximates at exactly one unit of its last digit.
func TestEdges(t *testing.T) {
	for _, tc := range []struct {
		name, response, label string
		want                  bool
	}{
		// A lone 0 before a comma cannot start thousands: the comma is decimal.
		{"lone zero, decimal", `\boxed{0,111}`, "0.111", true},
		{"lone zero, not thousands", `\boxed{0,111}`, "111", false},
		{"lone zero, also a list", `\boxed{0,111}`, "0, 111", true},
		{"signed lone zero", `\boxed{-0,5}`, "-0.5", true},
		{"thousands", `\boxed{81,256}`, "81256", true},
		{"thousands, also a list", `\boxed{81,256}`, "81, 256", true},
		{"thousands, not decimal", `\boxed{81,256}`, "81.256", false},
		// Groups of other than three digits after a comma are decimals.
		{"group of 4", `\boxed{1,2345}`, "1.2345", true},
		{"group of 4, not joined", `\boxed{1,2345}`, "12345", false},
		{"group of 5", `\boxed{3,14159}`, "3.14159", true},
		{"group of 2 after 4 digits", `\boxed{1000,99}`, "1000.99", true},
		{"group of 4 after 2 digits", `\boxed{12,3456}`, "12.3456", true},
		{"a label's comma is never decimal", `\boxed{1.2345}`, "1,2345", false},
		// Only an inequality linear in its variable is solved for it.
		{"linear, negative coefficient", `\boxed{-x > -1}`, `(-\infty, 1)`, true},
		{"linear, non-strict", `\boxed{2x+1 \le 7}`, `(-\infty, 3]`, true},
		{"square, not x < 4", `\boxed{x^2 < 4}`, `(-\infty, 4)`, false},
		{"square, not x < 2", `\boxed{x^2 < 4}`, `(-\infty, 2)`, false},
		{"exponential, not x < 3", `\boxed{2^x < 4}`, `(-\infty, 3)`, false},
		{"cube, not x > 8", `\boxed{x^3 > 8}`, `(8, \infty)`, false},
		// A decimal of 6 digits or more approximates within, not at, one unit.
		{"rounded down", `\boxed{0.0833333}`, `\frac{1}{12}`, true},
		{"rounded up", `\boxed{0.0833334}`, `\frac{1}{12}`, true},
		{"one unit below an exact value", `\boxed{0.124999}`, `\frac18`, false},
		{"one unit above an exact value", `\boxed{0.125001}`, `\frac18`, false},
		{"within a unit of pi", `\boxed{3.14160}`, `\pi`, true},
		{"over a unit from pi", `\boxed{3.14158}`, `\pi`, false},
		{"5 digits never approximate", `\boxed{0.33333}`, `\frac13`, false},
	} {
		v, err := Check(tc.response, tc.label)
		if err != nil || v.Correct != tc.want {
			t.Errorf("%s: Check(%q, %q) = %v, %v; want %v", tc.name, tc.response, tc.label, v.Correct, err, tc.want)
		}
	}
}

// TestSeveralIs checks that prose answers are read after their last " is "
// outside math, in an answer sentence and in a last line, and that an " is "
// inside a math span splits nothing.
func TestSeveralIs(t *testing.T) {
	for _, tc := range []struct{ response, want string }{
		{"Final Answer: The largest $n$ is 34.", "34"},
		{"The answer is: the count is 7 times 6, which is 42.", "42"},
		{"The final answer is $x$ where x is 9.", "9"},
		{"The answer is $a$ is $5$", "5"},
		{"So the count is 7 and the total is 42", "42"},
		{`The answer is $\text{it is } 5$`, `\text{it is } 5`},
	} {
		if got := Extract(tc.response); len(got) == 0 || got[0] != tc.want {
			t.Errorf("Extract(%q) = %q, want %q first", tc.response, got, tc.want)
		}
	}
}

// TestCommaReadingsPastTheEdges pins the comma readings just past the edges
// TestEdges checks: thousands start with 1 to 3 digits, so 1234,567 is not
// joined into 1234567 (only its list reading stays); and a signed lone zero
// before a group of 3 is a decimal too, -0,111 being -0.111 as 0,111 is 0.111.
func TestCommaReadingsPastTheEdges(t *testing.T) {
	for _, tc := range []struct {
		name, response, label string
		want                  bool
	}{
		{"4 digits before a group of 3, not thousands", `\boxed{1234,567}`, "1234567", false},
		{"4 digits before a group of 3, not thousands in prose", `The answer is 1234,567`, "1234567", false},
		{"4 digits before a group of 3, a list", `\boxed{1234,567}`, "1234, 567", true},
		{"negative lone zero before a group of 3", `\boxed{-0,111}`, "-0.111", true},
		{"positive lone zero before a group of 3", `\boxed{+0,111}`, "0.111", true},
	} {
		v, err := Check(tc.response, tc.label)
		if err != nil || v.Correct != tc.want {
			t.Errorf("%s: Check(%q, %q) = %v, %v; want %v", tc.name, tc.response, tc.label, v.Correct, err, tc.want)
		}
	}
}
