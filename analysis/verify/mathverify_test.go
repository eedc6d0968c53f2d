package verify_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mathrl/mathrl/analysis/scorer"
	"github.com/mathrl/mathrl/analysis/verify"
	"github.com/mathrl/mathrl/internal/testenv"
)

// mathVerifyScript runs Hugging Face's Math-Verify on JSON lines of cases
// (path relative to the repository root).
const mathVerifyScript = "scripts/refs/math_verify_cases.py"

// mvCorpusCase is one line of testdata/corpus.jsonl, the fields this test
// reads (corpus_test.go describes the file).
type mvCorpusCase struct {
	ID       string `json:"id"`
	Response string `json:"response"`
	Label    string `json:"label"`
	Correct  bool   `json:"correct"`
	Source   string `json:"source"`
}

// mvVerdict is Math-Verify's verdict on one case, as the script prints it.
type mvVerdict struct {
	ID            string   `json:"id"`
	Correct       bool     `json:"correct"`
	Status        string   `json:"status"` // ok, timeout or error
	Error         string   `json:"error"`
	Seconds       float64  `json:"seconds"`
	InnerTimeouts int      `json:"inner_timeouts"`
	Gold          []string `json:"gold"`
	Answer        []string `json:"answer"`
}

// mvReport is the script's whole output.
type mvReport struct {
	Version     string      `json:"math_verify"`
	CaseTimeout float64     `json:"case_timeout"`
	Seconds     float64     `json:"seconds"`
	Cases       []mvVerdict `json:"cases"`
}

// judgement is one scorer's verdicts on the corpus, in corpus order, and the
// seconds it took to give them all once.
type judgement struct {
	name    string
	correct []bool
	seconds float64
}

// mvMissClass is one class of cases where Math-Verify disagrees with the
// corpus label: what happens and which side is right, and the cases.
type mvMissClass struct {
	why string
	ids []string
}

// mvMisses are all the cases where Math-Verify 0.9.0 disagrees with the corpus
// label, by class. verify agrees with the label on every case (TestCorpus), so
// these are also all the cases where Math-Verify and verify disagree.
var mvMisses = map[string]mvMissClass{
	"think": {"Math-Verify reads the thinking: an answer inside <think>, or after an unclosed <think>, counts. " +
		"verify (label) is right for reasoning models: only the text after the last </think> is the answer; a cut-off response has none",
		[]string{"ext-think-unclosed", "ext-think-unclosed-plain", "ext-think-only-inside", "ext-think-box-ignored",
			"ext-think-twice-wrong", "aime-204-think-only", "aime25-unclosed"}},
	"compound": {"Math-Verify reads `f^{-1}(3)=4 and g(3)=1/5` (or `n=1 and x=9/7`) as a set of two equations, not equal to the label. " +
		"verify (label) is right: the last equation states the value asked for",
		[]string{"ext-display-span", "frac-slash"}},
	"e-notation": {"Math-Verify misreads 6.72e-5 as 6.72, 1.5e3 as 1.5 and 1e3 as 1*E*3. verify (label) is right: these are the label's numbers",
		[]string{"num-sci-e", "num-e-1000", "num-sci-1500-e"}},
	"rounding": {"Math-Verify compares after rounding both sides to 6 decimal places: 1/2006! = 1/2004! (both 0), " +
		"0.083333 = 1/12, but 1.71428 is not 12/7 and 3.14159 is not pi. verify (label) is right: the factorials differ " +
		"(by 2005*2006 = 4,022,030 times), and its rule counts significant digits, not decimal places: a decimal of 6 or more " +
		"is the value rounded up or down at its last digit (1.71428, 3.14159), one of 5 (0.083333) is not",
		[]string{"bound-factorial-neighbour", "approx-digits-5", "approx-twelve-sevenths-truncated", "approx-pi-6"}},
	"percent": {"Math-Verify reads a percentage as its hundredth only: the label 7.2\\% is 0.072, so 7.2 is wrong, " +
		"and 100\\% is the count 1. verify (label) follows MATH's convention (its grader drops \\%, so 7.2 is right) and " +
		"takes the hundredth only when it is not an integer, which may be a count: 100\\% is not 1",
		[]string{"pct-decimal-percent", "pct-hundred-as-fraction", "pct-count-not-percent", "amt-percent-prose-count"}},
	"computation-thousands": {"Math-Verify reads the commas of 10,200 + 255 = 10,455 as list separators, so the sum of " +
		"two amounts is the set {10, 200 + 255}. verify (label) is right: on the sides of a computation, as after a dollar " +
		"sign, a comma before three digits separates thousands, and the computation is its last side",
		[]string{"amt-computation-box", "amt-dollar-sum"}},
	"named-order": {"Math-Verify compares AB=9, CD=4 with 4, 9 as the sets {9, 4} and {4, 9}. verify (label) is right: " +
		"bare values stand for named ones in the names' order, so 4, 9 gives AB the value 4",
		[]string{"name-record-bare-swapped"}},
	"decimal-comma": {"Math-Verify reads a response's 0,43 and 187,5 as the sets {0, 43} and {5, 187}. verify (label) is right: " +
		"a comma before a group of other than three digits, or after a lone 0, cannot separate thousands, so it is also read " +
		"as a decimal comma",
		[]string{"dec-comma-zero", "dec-comma-short-group", "dec-comma-many-digits"}},
	"superscript": {"Math-Verify does not parse x²+1. verify (label) is right: ² after a variable is the power 2",
		[]string{"cur-made-up-superscript-power"}},
	"turn-end": {"Math-Verify reads past the end of the model's turn (<|im_end|>, <|im_start|>): the box of a made-up next turn counts. " +
		"verify (label) is right: what follows the turn's end is not the response",
		[]string{"ext-turn-end", "ext-turn-end-wrong"}},
	"gold-parse": {"Math-Verify misreads the real MATH label: `\\frac \\pi4 + 2 - \\sqrt2` becomes `\\frac{\\}{p}i4 + ...`, " +
		"and `90\\text{ square\\nunits}` (a line break inside \\text) parses to nothing. verify (label) is right",
		[]string{"sol-box-pi", "root-spacing-nospace", "unit-label-two-lines"}},
	"degree": {"Math-Verify does not parse 30\\degree. verify (label) is right: 30\\degree is 30^\\circ",
		[]string{"unit-deg-macro"}},
	"plain-list": {"Math-Verify reads only the 7 of a plain-text `the answer is 7, 5, 3`. verify (label) is right: the list is the set {3, 5, 7}",
		[]string{"set-list-357-reversed"}},
	"inequality": {"Math-Verify does not compare an inequality (x \\ge 3, x >= 6, -x \\le -6, 1/2 \\le x \\le 4/3) or x \\ne 0 with an interval label " +
		"(allow_set_relation_comp is off by default). verify (label) is right: the same set of reals, same endpoints and closedness",
		[]string{"int-ray-inequality", "int-ray-geq", "int-neg-ray-inequality", "int-open-ray-inequality", "int-closed-chained",
			"int-halfopen-chained", "int-chained-range", "int-geq-3", "int-made-up-lt", "int-made-up-chain-mixed", "int-made-up-reversed-lt",
			"rel-ge-ascii", "rel-neg-multiplied", "rel-scaled", "rel-lt-macro", "rel-gt-negated", "rel-gt-macro", "rel-linear-both-sides",
			"rel-ne-union", "rel-ne-ascii", "rel-ne-macro-label", "rng-chain-x"}},
	"abs-set": {"Math-Verify reads |m| > 8, |x| \\ge 5, |x| < \\sqrt{3} and 1 \\le |z| \\le 3/2 as relations in Abs(x) and does not " +
		"compare them with an interval or a union label. verify (label) is right: each is that set of reals (|m| > 8 is " +
		"(-oo, -8) u (8, oo); a lower bound below 0 bounds nothing, so -1 < |x| \\le 2 is [-2, 2])",
		[]string{"abs-gt-union", "abs-ge-union", "abs-geq-spelling", "abs-lt-root", "abs-gt-zero", "abs-made-up-chain",
			"abs-made-up-le", "abs-made-up-negative-lower"}},
	"range": {"Math-Verify reads the chain 0 < f(x) \\le 1 as two relations in f(x) and does not compare it with the range " +
		"label (0,1]. verify (label) is right: a chain with constant ends around a call on one variable is the range, that interval",
		[]string{"rng-call-halfopen", "rng-call-sentence", "rng-call-root", "rng-call-h"}},
	"or-union": {"Math-Verify reads x < 2 \\text{ or } x > 3 (and a \\le 0 \\text{ or } a \\ge 4, with \\quad around the word) as the set of the two " +
		"relations {x < 2, x > 3}, and m < -8 \\lor m > 8 as 8, and does not compare them with the union label. verify (label) is right: " +
		"alternatives in one variable joined by or are the union of their solution sets",
		[]string{"or-domain", "or-intersect-a", "or-quad", "or-lor"}},
	"imaginary": {"Math-Verify reads i as a variable on both sides, so i^5+i^{-25}+i^{45}, (-3+4i)/(1+2i) and \\sum_{k=1}^{3} i^k differ from i, 1+2i and -1; " +
		"it also fails to match 8-1i (read -1*1*i + 8) with 8-i. verify (label) is right: with i the imaginary unit they are i, 1+2i, -1 and 8-i",
		[]string{"cx-unit-coefficient", "cx-i-power-expr", "cx-quotient", "sum-powers-of-i"}},
	"sum-closed-form": {"Math-Verify keeps a sum or a product it cannot reduce and compares it with the closed form as unequal: " +
		"\\prod_{k=1}^{n} k against n!, \\sum_{k=0}^{n} x^k against (x^{n+1}-1)/(x-1) (sympy's sum is a Piecewise for x = 1), " +
		"\\sum_{k=1}^{2n} (-1)^{k+1} k^2 against -2n^2 - n (n is real, not an integer, so (-1)^{2n} is not 1), " +
		"\\sum_{i=1}^{n} i against n(n+1)/2 (with the letter i its symbols are not real, unlike the label's n), " +
		"and it reads \\sum\\limits_{k=1}^{n} k^2 as 1. verify (label) is right: each is equal at every integer n (checked with sympy)",
		[]string{"sum-factorial", "sum-geometric-x", "sum-closed-form-alternating", "sum-index-i", "sum-squares-limits"}},
	"sum-sequence": {"Math-Verify reads F_k, F_{n-1-k} and F_n as symbols named by their subscripts' text, so F_{n-1-k} is not " +
		"F_{n-k-1} and F_n is no term of the sum over F_k (F_n + \\sum_{k=0}^{n-1} F_k against \\sum_{k=0}^{n} F_k); it also " +
		"compares a bare sum with the label F_n = … as an equation. verify (label) is right: a subscript that holds an index makes " +
		"one unknown sequence of the index's value, and F_n = is a named value",
		[]string{"sum-fib-convolution-bare", "sum-linked-term"}},
	"sum-refused": {"Math-Verify computes what verify refuses by its bounds: \\sum_{k=1}^{2007} (-1)^{k+1} k is 1004 (2007 terms, " +
		"over verify's 100), and \\sum_{j=1}^{n/2} j is \\sum_{k=1}^{n/2} k with the index renamed (verify counts only integer " +
		"bounds, and n/2 is not one at odd n). Math-Verify is right on the values; the label is verify's rule, which keeps each call's " +
		"work bounded and refuses bounds it cannot count",
		[]string{"sum-too-many-terms", "sum-non-integer-bound"}},
	"text": {"Math-Verify's default extraction reads no words: `Answer: Evelyn`, `the Monday`, `ODD`, `(c)` give nothing or a nearby formula, " +
		"and the label LQSX is read as the product l*q*s*x. verify (label) is right: the words (ignoring case and a leading `the`) are the label's",
		[]string{"txt-plain-name", "txt-day-article", "txt-odd-bare", "txt-odd-upper", "txt-neither-cap", "txt-ellipse-the",
			"txt-word-list", "choice-lower-paren"}},
}

// mvMissClassOf maps each case of mvMisses to its class.
func mvMissClassOf() map[string]string {
	of := map[string]string{}
	for class, m := range mvMisses {
		for _, id := range m.ids {
			of[id] = class
		}
	}
	return of
}

// TestMathVerifyAgreement runs Math-Verify (the pinned version of
// scripts/python-refs.txt) live on verify's whole corpus beside verify and
// slime's math scorer, logs the agreement table, each scorer's accuracy
// against the labels and its cases/s, and lists the cases where Math-Verify
// and verify disagree. It fails when Math-Verify gives no verdict for a case,
// when Math-Verify disagrees with a label on a case not in mvMisses (or
// agrees on one that is), or when verify disagrees with a label that
// Math-Verify backs. Print the tables with
//
//	go test ./analysis/verify -run TestMathVerifyAgreement -v
func TestMathVerifyAgreement(t *testing.T) {
	py := testenv.RefPython(t, "math_verify")
	cases := readMVCorpus(t)
	mv := runMathVerify(t, py, cases)
	checkMVReport(t, cases, mv)
	label := judgement{name: "label", correct: make([]bool, len(cases))}
	for i, c := range cases {
		label.correct[i] = c.Correct
	}
	judges := []judgement{
		timeGo("verify", cases, verifyCorrect),
		timeGo("math", cases, mathCorrect),
		mvJudgement(mv),
	}
	t.Logf("%d cases (%d with real dataset labels), Math-Verify %s\n\n%s\n%s", len(cases), countReal(cases),
		mv.Version, agreementTable(judges, label), speedTable(judges, label, cases))
	logDisagreements(t, cases, judges[0], mv)
	checkKnownMisses(t, cases, mv)
	checkVerifyBacksMathVerify(t, cases, judges[0], mv)
}

// readMVCorpus reads testdata/corpus.jsonl.
func readMVCorpus(t *testing.T) []mvCorpusCase {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "corpus.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var cases []mvCorpusCase
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var c mvCorpusCase
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			t.Fatal(err)
		}
		cases = append(cases, c)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return cases
}

// runMathVerify feeds the cases to the script (gold = label, answer =
// response) and returns its report.
func runMathVerify(t *testing.T, py string, cases []mvCorpusCase) mvReport {
	t.Helper()
	var in bytes.Buffer
	enc := json.NewEncoder(&in)
	for _, c := range cases {
		if err := enc.Encode(map[string]string{"id": c.ID, "gold": c.Label, "answer": c.Response}); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, py, filepath.Join(testenv.RepoRoot(t), mathVerifyScript))
	cmd.Stdin = &in
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	start := time.Now()
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s: %v\n%s", mathVerifyScript, err, stderr.String())
	}
	var rep mvReport
	if err := json.Unmarshal(out, &rep); err != nil {
		t.Fatalf("%s: %v", mathVerifyScript, err)
	}
	t.Logf("Math-Verify: %.1fs in parse+verify, %.1fs for the whole process (start and imports included)",
		rep.Seconds, time.Since(start).Seconds())
	return rep
}

// checkMVReport checks that the report is Math-Verify's pinned version's and
// holds one verdict, without error, for each case in order.
func checkMVReport(t *testing.T, cases []mvCorpusCase, rep mvReport) {
	t.Helper()
	if want := pinnedMathVerify(t); rep.Version != want {
		t.Errorf("Math-Verify %s, want %s (scripts/python-refs.txt)", rep.Version, want)
	}
	if len(rep.Cases) != len(cases) {
		t.Fatalf("Math-Verify gave %d verdicts for %d cases", len(rep.Cases), len(cases))
	}
	for i, v := range rep.Cases {
		switch {
		case v.ID != cases[i].ID:
			t.Fatalf("verdict %d is for %q, want %q", i, v.ID, cases[i].ID)
		case v.Status != "ok":
			t.Errorf("%s: Math-Verify %s: %s", v.ID, v.Status, v.Error)
		case v.InnerTimeouts > 0:
			t.Logf("%s: Math-Verify's own timeout stopped %d step(s) (%.1fs); its verdict %v is tallied, not compared with the list of misses", v.ID, v.InnerTimeouts, v.Seconds, v.Correct)
		}
	}
}

// pinnedMathVerify returns the math-verify version scripts/python-refs.txt pins.
func pinnedMathVerify(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(testenv.RepoRoot(t), "scripts", "python-refs.txt"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^math-verify==(\S+)`).FindSubmatch(b)
	if m == nil {
		t.Fatal("scripts/python-refs.txt pins no math-verify")
	}
	return string(m[1])
}

// verifyCorrect is the verify scorer's verdict (a deadline counts as wrong).
func verifyCorrect(c mvCorpusCase) bool {
	v, err := verify.Check(c.Response, c.Label)
	return err == nil && v.Correct
}

// mathCorrect is slime's math scorer's verdict, as `mathrl score --scorer math` gives it.
func mathCorrect(c mvCorpusCase) bool {
	r, err := scorer.Score(scorer.Math, c.Response, c.Label)
	return err == nil && r.Correct
}

// timeGo scores the corpus with correct, over and over for at least half a
// second so that the rate is stable, and returns the first pass's verdicts
// with the mean seconds of one pass.
func timeGo(name string, cases []mvCorpusCase, correct func(mvCorpusCase) bool) judgement {
	j := judgement{name: name, correct: make([]bool, len(cases))}
	start := time.Now()
	passes := 0
	for passes == 0 || time.Since(start) < 500*time.Millisecond {
		for i, c := range cases {
			j.correct[i] = correct(c)
		}
		passes++
	}
	j.seconds = time.Since(start).Seconds() / float64(passes)
	return j
}

// mvJudgement turns the script's report into a judgement.
func mvJudgement(rep mvReport) judgement {
	j := judgement{name: "Math-Verify", correct: make([]bool, len(rep.Cases)), seconds: rep.Seconds}
	for i, v := range rep.Cases {
		j.correct[i] = v.Correct
	}
	return j
}

// agreement counts two judgements' verdicts case by case.
type agreement struct{ bothTrue, bothFalse, onlyA, onlyB int }

// agree compares a with b.
func agree(a, b []bool) agreement {
	var n agreement
	for i := range a {
		switch {
		case a[i] && b[i]:
			n.bothTrue++
		case !a[i] && !b[i]:
			n.bothFalse++
		case a[i]:
			n.onlyA++
		default:
			n.onlyB++
		}
	}
	return n
}

// agreementTable is the Markdown table of every pair of judges, then of each
// judge against the label (where "only judge" counts false accepts and "only
// label" false rejects).
func agreementTable(judges []judgement, label judgement) string {
	var b strings.Builder
	b.WriteString("| A vs B | both true | both false | only A true | only B true | agree |\n")
	b.WriteString("| --- | ---: | ---: | ---: | ---: | ---: |\n")
	row := func(a, c judgement) {
		n := agree(a.correct, c.correct)
		fmt.Fprintf(&b, "| %s vs %s | %d | %d | %d | %d | %d / %d |\n", a.name, c.name,
			n.bothTrue, n.bothFalse, n.onlyA, n.onlyB, n.bothTrue+n.bothFalse, len(a.correct))
	}
	row(judges[0], judges[2])
	row(judges[1], judges[2])
	row(judges[0], judges[1])
	for _, j := range judges {
		row(j, label)
	}
	return b.String()
}

// speedTable is the Markdown table of each judge's accuracy against the
// label (all cases, and those with a real dataset label) and its speed.
func speedTable(judges []judgement, label judgement, cases []mvCorpusCase) string {
	var b strings.Builder
	b.WriteString("| scorer | accuracy vs label | on real labels | seconds for the corpus | cases/s |\n")
	b.WriteString("| --- | ---: | ---: | ---: | ---: |\n")
	for _, j := range judges {
		all, real := 0, 0
		for i, c := range cases {
			if j.correct[i] == label.correct[i] {
				all++
				if isReal(c) {
					real++
				}
			}
		}
		fmt.Fprintf(&b, "| %s | %d / %d (%.1f%%) | %d / %d | %.4f | %.0f |\n", j.name, all, len(cases),
			100*float64(all)/float64(len(cases)), real, countReal(cases), j.seconds, float64(len(cases))/j.seconds)
	}
	return b.String()
}

// isReal reports whether the case's label is copied from a data set (not made up).
func isReal(c mvCorpusCase) bool { return c.Source != "made-up" }

// countReal counts the cases with real labels.
func countReal(cases []mvCorpusCase) int {
	n := 0
	for _, c := range cases {
		if isReal(c) {
			n++
		}
	}
	return n
}

// logDisagreements lists, class by class, the cases where Math-Verify and
// verify disagree, with what Math-Verify read on each side.
func logDisagreements(t *testing.T, cases []mvCorpusCase, v judgement, rep mvReport) {
	t.Helper()
	classOf := mvMissClassOf()
	byClass := map[string][]string{}
	n := 0
	for i, c := range cases {
		if v.correct[i] == rep.Cases[i].Correct {
			continue
		}
		class, ok := classOf[c.ID]
		if !ok {
			class = "unlisted"
		}
		byClass[class] = append(byClass[class], fmt.Sprintf("  %s: label %q, verify %v, Math-Verify %v (read gold %q, answer %q)",
			c.ID, shortLabel(c.Label), v.correct[i], rep.Cases[i].Correct, rep.Cases[i].Gold, rep.Cases[i].Answer))
		n++
	}
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(byClass)) {
		fmt.Fprintf(&b, "%s (%d): %s\n%s\n", k, len(byClass[k]), mvMisses[k].why, strings.Join(byClass[k], "\n"))
	}
	t.Logf("verify and Math-Verify disagree on %d cases:\n%s", n, b.String())
}

// shortLabel is a label cut to its last 60 bytes (a whole-solution label is long).
func shortLabel(s string) string {
	if len(s) <= 60 {
		return s
	}
	return "…" + strings.ToValidUTF8(s[len(s)-60:], "")
}

// checkKnownMisses fails for each case where Math-Verify disagrees with the
// label and mvMisses does not list it, and for each listed case where they
// now agree (or that is not in the corpus).
func checkKnownMisses(t *testing.T, cases []mvCorpusCase, rep mvReport) {
	t.Helper()
	classOf := mvMissClassOf()
	for i, c := range cases {
		v := rep.Cases[i]
		class, known := classOf[c.ID]
		delete(classOf, c.ID)
		switch miss := v.Correct != c.Correct; {
		case miss && !known && v.InnerTimeouts > 0:
			// Math-Verify's own per-step timeout (5 s of wall clock) cut
			// it short, which a loaded machine can make happen to a case it
			// decides in time on a quiet one (sum-roots-float sums 99
			// terms): its false is its timeout's, not an answer to compare.
			t.Logf("%s: Math-Verify says %v, the label %v, after %d of its own timeouts (%.1fs): not counted as a disagreement",
				c.ID, v.Correct, c.Correct, v.InnerTimeouts, v.Seconds)
		case miss && !known:
			t.Errorf("%s: Math-Verify says %v, the label %v (label %q; Math-Verify read gold %q, answer %q; %d of its own timeouts): a new disagreement",
				c.ID, v.Correct, c.Correct, shortLabel(c.Label), v.Gold, v.Answer, v.InnerTimeouts)
		case !miss && known && v.InnerTimeouts > 0:
			t.Logf("%s: listed as a Math-Verify miss (%s); it agrees with the label only after %d of its own timeouts: not counted",
				c.ID, class, v.InnerTimeouts)
		case !miss && known:
			t.Errorf("%s: listed as a Math-Verify miss (%s) but Math-Verify now agrees with the label", c.ID, class)
		}
	}
	for id := range classOf {
		t.Errorf("%s: listed as a Math-Verify miss but not in the corpus", id)
	}
}

// checkVerifyBacksMathVerify fails for each case where Math-Verify agrees
// with the label and verify does not: a label that an independent verifier
// confirms must never be lost by verify.
func checkVerifyBacksMathVerify(t *testing.T, cases []mvCorpusCase, v judgement, rep mvReport) {
	t.Helper()
	for i, c := range cases {
		if rep.Cases[i].Correct == c.Correct && v.correct[i] != c.Correct {
			t.Errorf("%s: Math-Verify and the label say %v, verify %v", c.ID, c.Correct, v.correct[i])
		}
	}
}
