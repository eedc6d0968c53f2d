package verify

import (
	"maps"
	"math"
	"math/big"
	"regexp"
	"slices"
	"strings"
	"time"
)

// maxSolveSteps bounds the evaluation steps of solving one inequality for
// its variable while it is read.
const maxSolveSteps = 10_000

var neRe = regexp.MustCompile(`\\ne(?:[^a-zA-Z]|$)`)

// readNotEqual reads x \ne c as the reals but c: (-∞, c) ∪ (c, ∞).
func readNotEqual(s string, depth int) (value, bool) {
	locs := neRe.FindAllStringIndex(s, -1)
	if len(locs) != 1 {
		return value{}, false
	}
	left, right := strings.TrimSpace(s[:locs[0][0]]), strings.TrimSpace(s[locs[0][0]+len(`\ne`):])
	if !isVariable(left) {
		left, right = right, left
	}
	if !isVariable(left) || right == "" {
		return value{}, false
	}
	below, ok := interval(false, false, []string{`-\infty`, right}, depth)
	if !ok {
		return value{}, false
	}
	above, _ := interval(false, false, []string{right, `\infty`}, depth)
	return value{kind: unionKind, elems: []value{below, above}}, true
}

// isVariable reports whether x is a single variable name (x, a_1, \alpha).
func isVariable(x string) bool {
	return lhsRe.MatchString(x) && !strings.Contains(x, "(") && x != `\infty`
}

// rationalIn reports whether n is built from its variables by + − × ÷ and
// constant powers only, not by |…|, a root or a function of a variable
// (|x| + 1 < 3 agrees with x + 1 < 3 at every positive point).
func rationalIn(n *node) bool {
	switch n.op {
	case "+", "*", "/", "neg", "var":
	case "^":
		return rationalIn(n.args[0]) && !hasVariables(n.args[1])
	default:
		return !hasVariables(n)
	}
	for _, a := range n.args {
		if !rationalIn(a) {
			return false
		}
	}
	return true
}

func hasVariables(n *node) bool {
	vars := map[string]bool{}
	variables(n, vars)
	return len(vars) > 0
}

// solveLinear reads left rel right, an inequality linear in one variable
// with a non-zero rational coefficient (-x > -1, 2x + 1 \le 7), as that
// variable's bound (x < 1, x \le 3): the relation flips when the coefficient
// is negative. Linearity is checked exactly at 0, 1 and the comparison
// points, of an expression rational in the variable (rationalIn).
func solveLinear(left, rel, right string, depth int) (value, bool) {
	l, errL := parseExpr(left)
	r, errR := parseExpr(right)
	if errL != nil || errR != nil {
		return value{}, false
	}
	f := &node{op: "+", args: []*node{l, {op: "neg", args: []*node{r}}}}
	vars := map[string]bool{}
	variables(f, vars)
	if len(vars) != 1 || !rationalIn(f) {
		return value{}, false
	}
	name := slices.Collect(maps.Keys(vars))[0]
	// A budget of its own, maxSolveSteps from the work bound.
	bud := &budget{deadline: time.Now().Add(DefaultDeadline), steps: maxSteps - maxSolveSteps}
	at := func(x number) (*big.Rat, bool) {
		y, err := eval(f, map[string]number{name: x}, bud)
		if err != nil || !y.exact || y.im.Sign() != 0 {
			return nil, false
		}
		return y.re, true
	}
	b, ok0 := at(integer(0))
	ab, ok1 := at(integer(1))
	if !ok0 || !ok1 {
		return value{}, false
	}
	a := new(big.Rat).Sub(ab, b)
	if a.Sign() == 0 {
		return value{}, false
	}
	for k := range trials {
		x := point(vars, k)[name]
		y, ok := at(x)
		if !ok || y.Cmp(new(big.Rat).Add(new(big.Rat).Mul(a, x.re), b)) != 0 {
			return value{}, false
		}
	}
	if a.Sign() < 0 {
		rel = flip(rel)
	}
	root := new(big.Rat).Neg(new(big.Rat).Quo(b, a))
	return bound(rel, root.RatString(), depth)
}

var (
	absRe  = regexp.MustCompile(`^\|([^|]+)\|$`)
	callRe = regexp.MustCompile(`^[a-zA-Z](?:_\{?\w+\}?)?\(\s*[a-zA-Z]\s*\)$`)
)

// absolute reports whether s is |x|, the absolute value of one variable.
func absolute(s string) bool {
	m := absRe.FindStringSubmatch(s)
	return m != nil && isVariable(strings.TrimSpace(m[1]))
}

// isRange reports whether s is a function's values: a call of a name on
// one variable (f(x), g_1(t)), not on a number (f(2)).
func isRange(s string) bool { return callRe.MatchString(s) }

// edge is a constant bound c of |x|, which |x| may equal when closed; sign
// is the sign of c.
type edge struct {
	c      string
	closed bool
	sign   int
}

func newEdge(c string, closed bool) (*edge, bool) {
	s, ok := signOf(c)
	return &edge{c: c, closed: closed, sign: s}, ok
}

// absBound is the set of x with |x| rel c.
func absBound(rel, c string, depth int) (value, bool) {
	e, ok := newEdge(c, rel == `\le` || rel == `\ge`)
	if !ok {
		return value{}, false
	}
	if less(rel) {
		return absSet(nil, e, depth)
	}
	return absSet(e, nil, depth)
}

// absSet is the set of x with lo < |x| < hi, either bound missing (nil) or
// closed: (-hi, hi), or (-hi, -lo) ∪ (lo, hi) when lo cuts out 0; a lower
// bound below 0 (or 0, closed) bounds nothing. An empty set or one of one
// or two points is refused.
func absSet(lo, hi *edge, depth int) (value, bool) {
	if hi != nil && hi.sign <= 0 {
		return value{}, false // empty, or only 0
	}
	if lo != nil && (lo.sign < 0 || lo.sign == 0 && lo.closed) {
		lo = nil // |x| ≥ 0 for every x
	}
	if lo != nil && hi != nil {
		if d, ok := signOf("(" + hi.c + ")-(" + lo.c + ")"); !ok || d <= 0 {
			return value{}, false // empty, or two points
		}
	}
	outer, closed := []string{`-\infty`, `\infty`}, false
	if hi != nil {
		outer, closed = []string{"-(" + hi.c + ")", hi.c}, hi.closed
	}
	if lo == nil {
		return interval(closed, closed, outer, depth)
	}
	left, okL := interval(closed, lo.closed, []string{outer[0], "-(" + lo.c + ")"}, depth)
	right, okR := interval(lo.closed, closed, []string{lo.c, outer[1]}, depth)
	if !okL || !okR {
		return value{}, false
	}
	return value{kind: unionKind, elems: []value{left, right}}, true
}

// signOf is the sign of the constant s: exact when s is, else in floating
// point when s is real and clear of 0 (1e-9); not ok when s has variables
// or cannot be computed within maxSolveSteps.
func signOf(s string) (int, bool) {
	e, err := parseExpr(s)
	if err != nil {
		return 0, false
	}
	vars := map[string]bool{}
	if variables(e, vars); len(vars) != 0 {
		return 0, false
	}
	bud := &budget{deadline: time.Now().Add(DefaultDeadline), steps: maxSteps - maxSolveSteps}
	y, err := eval(e, nil, bud)
	switch {
	case err != nil:
		return 0, false
	case y.exact:
		return y.re.Sign(), y.im.Sign() == 0
	}
	re, im := real(y.c), imag(y.c)
	if math.IsNaN(re) || math.IsInf(re, 0) || math.Abs(re) < 1e-9 || math.Abs(im) > 1e-9*math.Abs(re) {
		return 0, false
	}
	if re > 0 {
		return 1, true
	}
	return -1, true
}

// eitherWord is the word between the alternatives of a solution set
// (x < 3 or x > 5, x < 3 \text{ or } x > 5, x < 3 \lor x > 5).
var eitherWord = regexp.MustCompile(`\s*(?:\\q?quad\s*)*(?:\\text\s*\{\s*or\s*\}|\bor\b|\\lor\b|\\vee\b)(?:\s*\\q?quad)*\s*`)

// readEither reads inequalities in one variable joined by "or" as the
// union of their intervals: x < 3 or x > 5 is (-∞, 3) ∪ (5, ∞). Each
// alternative must be a solution set in the same single variable.
func readEither(s string, depth int) (value, bool) {
	if !strings.Contains(s, "or") && !strings.Contains(s, `\vee`) ||
		!strings.ContainsAny(s, "<>≤≥") && !strings.Contains(s, `\le`) && !strings.Contains(s, `\ge`) {
		return value{}, false
	}
	locs := eitherWord.FindAllStringIndex(s, maxElems)
	if len(locs) == 0 || len(locs) >= maxElems {
		return value{}, false
	}
	u, variable, prev := value{kind: unionKind}, "", 0
	for i := 0; i <= len(locs); i++ {
		end := len(s)
		if i < len(locs) {
			end = locs[i][0]
		}
		part := strings.TrimSpace(s[prev:end])
		if i < len(locs) {
			prev = locs[i][1]
		}
		letter, ok := oneVariable(part)
		if !ok || variable != "" && letter != variable {
			return value{}, false
		}
		variable = letter
		v := read(part, depth+1)
		switch v.kind {
		case intervalKind:
			u.elems = append(u.elems, v)
		case unionKind:
			u.elems = append(u.elems, v.elems...)
		default:
			return value{}, false
		}
	}
	return u, true
}

// oneVariable is the one letter of s outside command names; false when s
// has none or several.
func oneVariable(s string) (string, bool) {
	letter := byte(0)
	for i := 0; i < len(s); i++ {
		switch {
		case s[i] == '\\':
			for i+1 < len(s) && isLetter(s[i+1]) {
				i++
			}
		case isLetter(s[i]):
			if letter != 0 && s[i] != letter {
				return "", false
			}
			letter = s[i]
		}
	}
	return string(letter), letter != 0
}
