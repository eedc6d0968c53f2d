package verify

import (
	"maps"
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

// solveLinear reads left rel right, an inequality linear in one variable
// with a non-zero rational coefficient (-x > -1, 2x + 1 \le 7), as that
// variable's bound (x < 1, x \le 3): the relation flips when the coefficient
// is negative. Linearity is checked exactly at 0, 1 and the comparison
// points.
func solveLinear(left, rel, right string, depth int) (value, bool) {
	l, errL := parseExpr(left)
	r, errR := parseExpr(right)
	if errL != nil || errR != nil {
		return value{}, false
	}
	f := &node{op: "+", args: []*node{l, {op: "neg", args: []*node{r}}}}
	vars := map[string]bool{}
	variables(f, vars)
	if len(vars) != 1 {
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
