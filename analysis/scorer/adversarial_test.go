package scorer

import (
	"errors"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/mathrl/mathrl/analysis/verify"
)

// adversarialInput is a response built to be deep, long or huge, and a label
// that it does not equal: every scorer must return, use bounded memory and
// not accept it.
type adversarialInput struct {
	name, response, label string
}

// nest returns open repeated n times, then inner, then close repeated n times.
func nest(open, inner, close string, n int) string {
	return strings.Repeat(open, n) + inner + strings.Repeat(close, n)
}

// adversarialInputs lists the inputs; each response starts with </think> so
// that deepscaler, which reads only what follows it, scores the whole text.
func adversarialInputs() []adversarialInput {
	const mb = 1 << 20
	inputs := []adversarialInput{
		// The box holds 1 however many braces wrap it; the label is 2.
		{"nested braces 10k", `\boxed{` + nest("{", "1", "}", 10_000) + `}` + "\nAnswer: 1", "2"},
		{"nested braces 100k", `\boxed{` + nest("{", "1", "}", 100_000) + `}` + "\nAnswer: 1", "2"},
		{"unclosed braces 100k", `\boxed{` + strings.Repeat("{", 100_000) + "1" + "\nAnswer: 1", "2"},
		{"nested parentheses 100k", `\boxed{` + nest("(", "1", ")", 100_000) + `}` + "\nAnswer: 1", "2"},
		{"nested left right 10k", `\boxed{` + nest(`\left(`, "1", `\right)`, 10_000) + `}`, "2"},
		// 2^2^...^2 is at least 4, far from 1.
		{"power tower 100", `\boxed{` + nest("2^{", "2", "}", 100) + `}` + "\nAnswer: " + nest("2^{", "2", "}", 100), "1"},
		{"power tower 10k", `\boxed{` + nest("2^{", "2", "}", 10_000) + `}`, "1"},
		{"power tower 100k", `\boxed{` + nest("2^{", "2", "}", 100_000) + `}`, "1"},
		{"flat power chain 10k", `\boxed{` + strings.Repeat("2^", 10_000) + "2}" + "\nAnswer: " + strings.Repeat("2^", 10_000) + "2", "1"},
		// An even number of 1/(1/...) levels around 2 is 2; the label is 3.
		{"nested frac 1k", `\boxed{` + nest(`\frac{1}{`, "2", "}", 1_000) + `}`, "3"},
		{"nested frac 10k", `\boxed{` + nest(`\frac{1}{`, "2", "}", 10_000) + `}` + "\nAnswer: 2", "3"},
		{"nested frac 100k", `\boxed{` + nest(`\frac{1}{`, "2", "}", 100_000) + `}`, "3"},
		{"nested dfrac without braces 10k", `\boxed{` + strings.Repeat(`\dfrac1`, 10_000) + "2}", "3"},
		// Square roots of 4 repeatedly lie between 1 and 2; the label is 3.
		{"nested sqrt 10k", `\boxed{` + nest(`\sqrt{`, "4", "}", 10_000) + `}`, "3"},
		{"nested sqrt 100k", `\boxed{` + nest(`\sqrt{`, "4", "}", 100_000) + `}`, "3"},
		{"sqrt chain 100k", `\boxed{` + strings.Repeat(`\sqrt4`, 100_000) + `}`, "3"},
		{"sum of 100k terms", `\boxed{` + strings.Repeat("1+", 100_000) + "1}" + "\nAnswer: " + strings.Repeat("1+", 100_000) + "1", "3"},
		{"many boxes 100k", strings.Repeat(`\boxed{1}`, 100_000), "2"},
		{"many unclosed boxes 100k", strings.Repeat(`\boxed{`, 100_000), "2"},
		{"1 MB of prose", strings.Repeat("so we see that ", mb/15) + `\boxed{1}` + "\nAnswer: 1", "2"},
		{"1 MB in the box", `\boxed{` + strings.Repeat("9", mb) + `}` + "\nAnswer: " + strings.Repeat("9", mb), "9"},
		{"1 MB of backslashes", strings.Repeat(`\`, mb) + `\boxed{1}`, "2"},
		{"1 MB of dollars", strings.Repeat("$", mb) + `\boxed{1}`, "2"},
		// Final-answer statements after a box are read: 1 MB of them, or of a
		// spaced-out "final   answer" that the quick search must still skip.
		{"1 MB of final answers after a box", `\boxed{1}` + strings.Repeat("The final answer is 2. ", mb/23), "3"},
		{"1 MB of answer words after a box", `\boxed{1}` + strings.Repeat("final    nswer ", mb/15), "2"},
		{"1 MB of or", `\boxed{x<1` + strings.Repeat(" or x<1", mb/7) + `}`, "2"},
		// The label is adversarial too: 1 inside 100k braces, or a 1 MB sum.
		{"label of nested braces 100k", `\boxed{2}` + "\nAnswer: 2", nest("{", "1", "}", 100_000)},
		{"label of nested frac 10k", `\boxed{3}` + "\nAnswer: 3", nest(`\frac{1}{`, "2", "}", 10_000)},
		{"label of 1 MB sum", `\boxed{1}` + "\nAnswer: 1", strings.Repeat("1+", mb/2) + "1"},
		{"tool calls 100k", strings.Repeat("<tool_call>", 100_000) + `\boxed{1}`, "2"},
		{"think ends 100k", strings.Repeat("</think>", 100_000) + `\boxed{1}`, "2"},
	}
	for i := range inputs {
		inputs[i].response = "</think>" + inputs[i].response
	}
	return inputs
}

// adversarialScorers are the names the test runs: every scorer, and the
// boxed_ form of one.
func adversarialScorers() []string { return append(Rewards(), BoxedPrefix+Math) }

// maxAdversarialAlloc bounds what one call may allocate in all. It is far
// above what a bounded call needs and far below what an unbounded one takes.
const maxAdversarialAlloc = 256 << 20

// TestAdversarialLatex runs every scorer on every adversarial input: each
// call returns (a 60 s guard catches only a real hang; timings are in
// BenchmarkAdversarial), allocates under maxAdversarialAlloc in all, and does
// not call the response correct. The only errors allowed are the documented
// ones: verify's deadline, and dapo's refusal of a label that is not a number.
func TestAdversarialLatex(t *testing.T) {
	if testing.Short() {
		t.Skip("adversarial inputs take a few seconds")
	}
	for _, in := range adversarialInputs() {
		for _, name := range adversarialScorers() {
			t.Run(strings.ReplaceAll(in.name, " ", "_")+"/"+name, func(t *testing.T) {
				var r Result
				var err error
				alloc := allocated(func() {
					withDeadline(t, 60*time.Second, name, func() { r, err = Score(name, in.response, in.label) })
				})
				if err != nil && !errors.Is(err, verify.ErrDeadline) && !errors.Is(err, ErrNonNumericLabel) {
					t.Errorf("error %v", err)
				}
				if r.Correct || r.Reward > 0 {
					t.Errorf("accepted a response that is not %q: %+v", in.label, r)
				}
				if alloc > maxAdversarialAlloc {
					t.Errorf("allocated %d MiB, want at most %d MiB", alloc>>20, maxAdversarialAlloc>>20)
				}
			})
		}
	}
}

// allocated returns the bytes fn allocated (runtime.MemStats.TotalAlloc).
func allocated(fn func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	fn()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// BenchmarkAdversarial reports the time and memory of each scorer on each
// adversarial input.
func BenchmarkAdversarial(b *testing.B) {
	for _, in := range adversarialInputs() {
		for _, name := range adversarialScorers() {
			b.Run(strings.ReplaceAll(in.name, " ", "_")+"/"+name, func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					Score(name, in.response, in.label)
				}
			})
		}
	}
}
