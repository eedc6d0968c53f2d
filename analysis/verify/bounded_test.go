package verify

import (
	"errors"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// adversarial are inputs built to be slow or huge. Each has the verdict the
// rules give without computing the value: refused values compare as text.
var adversarial = []struct {
	name, response, label string
	want                  bool
}{
	{"power tower", `\boxed{2^{2^{2^{2^{2^{100}}}}}}`, `2^{2^{2^{2^{2^{101}}}}}`, false},
	{"same power tower", `\boxed{2^{2^{2^{2^{2^{100}}}}}}`, `2^{2^{2^{2^{2^{100}}}}}`, true},
	{"huge power", `\boxed{10^{10^{10}}}`, `10^{10^{10}}+1`, false},
	{"huge factorial", `\boxed{(10^{100})!}`, `(10^{100}+1)!`, false},
	{"factorials past 1000!", `\boxed{\frac{1}{2004!}}`, `\frac{1}{2006!}`, false},
	{"factorial in bounds", `\boxed{\frac{1000!}{999!}}`, `1000`, true},
	{"huge exponent literal", `\boxed{1e99999999}`, `1e99999998`, false},
	{"deep parentheses", `\boxed{` + strings.Repeat("(", 5000) + "1" + strings.Repeat(")", 5000) + `}`, "1", false},
	{"deep fractions", `\boxed{` + strings.Repeat(`\frac{1}{`, 400) + "2" + strings.Repeat("}", 400) + `}`, "2", false},
	{"long list", `\boxed{` + strings.Repeat("1, ", 20000) + "1}", "1", false},
	{"long number", `\boxed{` + strings.Repeat("9", 50000) + `}`, strings.Repeat("9", 49999), false},
	{"many unclosed boxes", strings.Repeat(`\boxed{`, 100000) + `\boxed{7}`, "7", true},
	{"many unclosed spans", strings.Repeat(`\(`, 100000) + "\nAnswer: 7", "7", true},
	{"sin of a huge number", `\boxed{\sin(10^{300})}`, `\sin(10^{300})`, true},
	{"big binomial", `\boxed{\binom{100000}{50000}}`, `\binom{100000}{50001}`, false},
	{"many variables", `\boxed{a b c d e f g h j k l m n o p q}`, `q p o n m l k j h g f e d c b a`, true},     // letters: a product
	{"many factors", `\boxed{a\cdot b\cdot c\cdot d\cdot e\cdot f\cdot g\cdot h}`, `hgfedcba`, false},          // a word
	{"|x| below a power tower", `\boxed{|x| < 2^{2^{2^{100}}}}`, `(-2^{2^{2^{100}}}, 2^{2^{2^{100}}})`, false}, // its sign is not computed
	{"|x| between huge factorials", `\boxed{(10^{99})! \le |x| \le (10^{100})!}`, `[-(10^{100})!, -(10^{99})!] \cup [(10^{99})!, (10^{100})!]`, false},
	{"many factors as a product", `\boxed{a\cdot b\cdot c\cdot d\cdot e\cdot f\cdot g\cdot h}`, `h\,g\,f\,e\,d\,c\,b\cdot a`, true},
	// sums and products past their bounds: refused, not computed (the labels
	// are their values)
	{"sum to 10^9", `\boxed{\sum_{k=1}^{10^9} k}`, `500000000500000000`, false},
	{"sum to a power tower", `\boxed{\sum_{k=1}^{2^{2^{2^{100}}}} k}`, `\sum_{j=1}^{2^{2^{2^{100}}}} j`, false},
	{"sum in n to 10^9 n", `\boxed{\sum_{k=1}^{10^9 n} k}`, `\frac{10^9 n(10^9 n+1)}{2}`, false},
	{"nested sums", `\boxed{\sum_{i=1}^{100}\sum_{j=1}^{100} (i+j+i+j+i+j+i+j+i+j+i+j+i+j+i+j)}`, `8080000`, false},
	{"nested sums in n", `\boxed{\sum_{i=1}^{n}\sum_{j=1}^{n} (i+j+i+j+i+j+i+j+i+j+i+j+i+j+i+j)}`, `\sum_{i=1}^{n}\sum_{j=1}^{n} 8(j+i)`, false},
	{"sums nested 500 deep", `\boxed{` + strings.Repeat(`\sum_{k=1}^{100}`, 500) + `k}`, `1`, false},
	{"1 MB sum", `\boxed{\sum_{k=1}^{n} (` + strings.Repeat("k+", 500_000) + `k)}`, `500001\frac{n(n+1)}{2}`, false},
	{"90 sums of 100 terms", `\boxed{` + strings.Repeat(`\sum_{k=1}^{100} k^2+`, 90) + `1}`, `30451501`, false},
	// factorials and binomials cost their size: a hundred big ones are refused
	// (each would take a millisecond or more), three are computed
	{"label of 100 big binomials", `\boxed{1}`, strings.Repeat(`\binom{9000}{4000}+`, 99) + `\binom{9000}{4000}`, false},
	{"label of 100 factorials of 1000", `\boxed{1}`, strings.Repeat(`1000!+`, 99) + `1000!`, false},
	{"100 big binomials against their multiple", `\boxed{100\binom{9000}{4000}}`, strings.Repeat(`\binom{9000}{4000}+`, 99) + `\binom{9000}{4000}`, false},
	{"100 factorials of 1000 against their multiple", `\boxed{100 \cdot 1000!}`, strings.Repeat(`1000!+`, 99) + `1000!`, false},
	{"two big binomials", `\boxed{2\binom{9000}{4000}}`, `\binom{9000}{4000}+\binom{9000}{5000}`, true},
	{"a binomial at the bound", `\boxed{\binom{10000}{5000}}`, `\binom{10000}{5000}`, true},
	{"sum of big binomials", `\boxed{\sum_{k=1}^{100} \binom{9000+k}{4000}}`, `\sum_{j=1}^{100} \binom{9000+j}{4000}`, false},
	{"product of big factorials", `\boxed{\prod_{k=1}^{100} (900+k)!}`, `\prod_{j=1}^{100} (900+j)!`, false},
	{"sum of 100 big powers", `\boxed{\sum_{k=1}^{100} 2^{4000}}`, `100 \cdot 2^{4000}`, false}, // each term's bits are steps: past maxSumSteps
	{"product past the bits bound", `\boxed{\prod_{k=1}^{100} 2^{1000}}`, `2^{100000}`, false},
	{"sequence at a huge index", `\boxed{\sum_{k=1}^{100} F_{1000000000000k}}`, `\sum_{j=1}^{100} F_{1000000000000j}`, false},
	// matrix arithmetic: what fits maxAnswer and maxMatrixWork is computed, the rest refused
	{"product of two 1000x1000 matrices", `\boxed{` + matrixOf(1000, 1000, "1") + matrixOf(1000, 1000, "1") + `}`, matrixOf(2, 2, "1000"), false},
	{"chain of 100 products", `\boxed{` + strings.Repeat(fibMatrix, 100) + `}`, fib101, false},
	{"chain of 50 products", `\boxed{` + strings.Repeat(fibMatrix, 50) + `}`, fib51, false},
	{"chain of 6 products", `\boxed{` + strings.Repeat(fibMatrix, 6) + `}`, `\begin{pmatrix}13&8\\8&5\end{pmatrix}`, false},
	{"chain of 5 products", `\boxed{` + strings.Repeat(fibMatrix, 5) + `}`, `\begin{pmatrix}8&5\\5&3\end{pmatrix}`, true},
	{"product of two 16x16 matrices", `\boxed{` + matrixOf(16, 16, "1") + matrixOf(16, 16, "1") + `}`, matrixOf(16, 16, "16"), false},
	{"product of two 6x6 matrices", `\boxed{` + matrixOf(6, 6, "1") + matrixOf(6, 6, "1") + `}`, matrixOf(6, 6, "6"), false},
	{"product of two 5x5 matrices", `\boxed{` + matrixOf(5, 5, "1") + matrixOf(5, 5, "1") + `}`, matrixOf(5, 5, "5"), true},
	{"5x5 products in a variable", `\boxed{` + matrixOf(5, 5, "x") + matrixOf(5, 5, "x") + `}`, matrixOf(5, 5, "x") + " " + matrixOf(5, 5, "x"), true},
	{"product of three 3x3 matrices", `\boxed{` + strings.Repeat(matrixOf(3, 3, "1"), 3) + `}`, matrixOf(3, 3, "9"), true},
	{"product of three 4x4 matrices", `\boxed{` + strings.Repeat(matrixOf(4, 4, "1"), 3) + `}`, matrixOf(4, 4, "16"), false},
	{"product of over 256 entries", `\boxed{` + matrixOf(17, 1, "1") + matrixOf(1, 17, "1") + `}`, matrixOf(17, 17, "1"), false},
	{"a result of maxMatrixWork nodes", `\boxed{-\begin{pmatrix}` + strings.Repeat("x+", 249) + `x\end{pmatrix}}`, `\begin{pmatrix}-250x\end{pmatrix}`, true},
	{"an entry past maxMatrixWork nodes", `\boxed{-\begin{pmatrix}` + strings.Repeat("x+", 250) + `x\end{pmatrix}}`, `\begin{pmatrix}-251x\end{pmatrix}`, false},
	{"sum of 60 matrices", `\boxed{` + strings.Repeat(`\begin{matrix}1\end{matrix}+`, 59) + `\begin{matrix}1\end{matrix}}`, `\begin{matrix}60\end{matrix}`, true},
	{"product of 60 1x1 matrices", `\boxed{` + strings.Repeat(`\begin{matrix}2\end{matrix}`, 60) + `}`, `\begin{matrix}2^{60}\end{matrix}`, true},
	{"matrix entries past the bounds", `\boxed{\begin{pmatrix}2^{2^{2^{100}}}\end{pmatrix}+\begin{pmatrix}1\end{pmatrix}}`, `\begin{pmatrix}2^{2^{2^{100}}}+1\end{pmatrix}`, false},
	{"deep parentheses around matrices", `\boxed{` + strings.Repeat("(", 300) + fibMatrix + strings.Repeat(")", 300) + "+" + fibMatrix + `}`, `\begin{pmatrix}2&2\\2&0\end{pmatrix}`, false},
	{"unclosed matrix environments", `\boxed{` + strings.Repeat(`\begin{pmatrix}`, 120) + `1}`, `\begin{pmatrix}1\end{pmatrix}`, false},
}

// fibMatrix is the Fibonacci matrix: its n-th power is (F(n+1), F(n); F(n), F(n-1)).
const fibMatrix = `\begin{matrix}1&1\\1&0\end{matrix}`

// fib51 and fib101 are the 50th and 100th powers of fibMatrix.
const (
	fib51  = `\begin{pmatrix}20365011074&12586269025\\12586269025&7778742049\end{pmatrix}`
	fib101 = `\begin{pmatrix}573147844013817084101&354224848179261915075\\354224848179261915075&218922995834555169026\end{pmatrix}`
)

// matrixOf is the rows×cols matrix whose entries are all e.
func matrixOf(rows, cols int, e string) string {
	row := strings.Repeat(e+"&", cols-1) + e
	return `\begin{matrix}` + strings.Repeat(row+`\\`, rows-1) + row + `\end{matrix}`
}

// TestAdversarialInputs checks the verdicts on inputs that must be refused
// or bounded rather than computed; the time they take is reported by
// BenchmarkAdversarial, not asserted here.
func TestAdversarialInputs(t *testing.T) {
	for _, tc := range adversarial {
		t.Run(tc.name, func(t *testing.T) {
			v, err := CheckWithin(tc.response, tc.label, 10*DefaultDeadline)
			if err != nil || v.Correct != tc.want {
				t.Errorf("verdict %v, %v; want %v", v.Correct, err, tc.want)
			}
		})
	}
}

func BenchmarkAdversarial(b *testing.B) {
	for _, tc := range adversarial {
		b.Run(strings.ReplaceAll(tc.name, " ", "_"), func(b *testing.B) {
			for b.Loop() {
				Check(tc.response, tc.label)
			}
		})
	}
}

// TestDeadline gives a call that must evaluate expressions a deadline that
// has already passed: it returns ErrDeadline and an incorrect verdict.
func TestDeadline(t *testing.T) {
	v, err := CheckWithin(`\boxed{(x+1)^{20}}`, `\sum`+"x^2+1", -1)
	if err == nil {
		v, err = CheckWithin(`\boxed{(x+1)^{20}+(y+2)^{9}}`, `(y+2)^9+(x+1)^{20}`, -1)
	}
	if !errors.Is(err, ErrDeadline) || v.Correct {
		t.Errorf("past the deadline: %+v, %v; want ErrDeadline", v, err)
	}
	if v, err := CheckWithin(`\boxed{(x+1)^{20}+(y+2)^{9}}`, `(y+2)^9+(x+1)^{20}`, DefaultDeadline); err != nil || !v.Correct {
		t.Errorf("within the deadline: %+v, %v", v, err)
	}
}

// TestConcurrentCalls checks that calls from many goroutines give the
// verdicts of sequential calls and leave no goroutine behind.
func TestConcurrentCalls(t *testing.T) {
	cases := []struct{ r, l string }{
		{`\boxed{(x+1)^2}`, "x^2+2x+1"}, {`\boxed{\frac{\sqrt2}{2}}`, `\frac1{\sqrt2}`},
		{`\boxed{[1,3)}`, "[1,3]"}, {`\boxed{\{3,1,2\}}`, "1,2,3"}, {`\boxed{0.333}`, `\frac13`},
	}
	want := make([]bool, len(cases))
	for i, c := range cases {
		v, err := Check(c.r, c.l)
		if err != nil {
			t.Fatal(err)
		}
		want[i] = v.Correct
	}
	before := runtime.NumGoroutine()
	var wg sync.WaitGroup
	for g := range 16 {
		wg.Go(func() {
			for k := range 200 {
				i := (g + k) % len(cases)
				if v, err := Check(cases[i].r, cases[i].l); err != nil || v.Correct != want[i] {
					t.Errorf("case %d from goroutine %d: %v, %v; want %v", i, g, v.Correct, err, want[i])
					return
				}
			}
		})
	}
	wg.Wait()
	// A goroutine started by wg.Go calls Done before it ends, so the ones just
	// done may still be counted: wait for them, for less than a call's
	// deadline (a goroutine left to watch one would outlive the wait).
	after := runtime.NumGoroutine()
	for end := time.Now().Add(DefaultDeadline / 2); after > before && time.Now().Before(end); after = runtime.NumGoroutine() {
		time.Sleep(time.Millisecond)
	}
	if after > before {
		t.Errorf("%d goroutines after the calls, %d before", after, before)
	}
}

// FuzzCheck checks that no input makes Check panic and that verdicts are
// deterministic.
func FuzzCheck(f *testing.F) {
	for _, tc := range adversarial[:8] {
		f.Add(tc.response, tc.label)
	}
	for _, s := range []string{`\boxed{\frac{1}{2}}`, `$x \in [1, 2)$`, `\begin{pmatrix}1&2\end{pmatrix}`, `Answer: 1\pm\sqrt{2}`} {
		f.Add(s, s)
	}
	f.Fuzz(func(t *testing.T, response, label string) {
		v1, err1 := CheckWithin(response, label, 10*DefaultDeadline)
		v2, err2 := CheckWithin(response, label, 10*DefaultDeadline)
		if errors.Is(err1, ErrDeadline) || errors.Is(err2, ErrDeadline) {
			return
		}
		if v1 != v2 || (err1 == nil) != (err2 == nil) {
			t.Errorf("two calls differ: %+v %v / %+v %v", v1, err1, v2, err2)
		}
	})
}
