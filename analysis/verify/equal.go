package verify

import (
	"errors"
	"maps"
	"math"
	"math/big"
	"math/rand/v2"
	"slices"
	"strings"
)

// comparer decides equality for one call, within its budget.
type comparer struct {
	bud *budget
}

// trials is the number of random points at which expressions with variables
// are compared.
const trials = 3

// point returns the k-th assignment of the variables: rationals p/q with
// 1 ≤ |p| ≤ 97 and 1 ≤ q ≤ 13, from a fixed seed, in the variables' order.
func point(vars map[string]bool, k int) map[string]number {
	rng := rand.New(rand.NewPCG(uint64(k)+1, 0x9e3779b97f4a7c15))
	env := map[string]number{}
	for _, name := range slices.Sorted(maps.Keys(vars)) {
		p := int64(rng.IntN(97) + 1)
		if rng.IntN(2) == 0 {
			p = -p
		}
		env[name] = rational(big.NewRat(p, int64(rng.IntN(13)+1)))
	}
	return env
}

// equal decides whether two values are the same answer.
func (c *comparer) equal(a, b value) (bool, error) {
	if err := c.bud.check(); errors.Is(err, errTooLarge) {
		return false, nil // past the work bound: refused
	} else if err != nil {
		return false, err
	}
	if a.record || b.record {
		return c.records(a, b)
	}
	if a.name != b.name && a.name != "" && b.name != "" && (a.figure || b.figure) {
		return false, nil // AB = 4 is not CD = 4
	}
	if a.kind != b.kind {
		return c.equalAcross(a, b)
	}
	switch a.kind {
	case scalarKind:
		return c.scalars(a, b)
	case equationKind:
		return c.equations(a.expr, b.expr)
	case textKind, choiceKind:
		return a.text == b.text, nil
	case tupleKind:
		return c.inOrder(a.elems, b.elems)
	case setKind, unionKind:
		return c.sameSet(a.elems, b.elems)
	case intervalKind:
		return c.intervals(a, b)
	case matrixKind:
		if len(a.rows) != len(b.rows) {
			return false, nil
		}
		for i := range a.rows {
			if ok, err := c.inOrder(a.rows[i], b.rows[i]); !ok || err != nil {
				return false, err
			}
		}
		return true, nil
	}
	return false, nil
}

// sameBarSpaces reports whether a and b are the same text once their
// spaces are removed; it copies neither and stops at the first difference.
func sameBarSpaces(a, b string) bool {
	i, j := 0, 0
	for {
		for i < len(a) && a[i] == ' ' {
			i++
		}
		for j < len(b) && b[j] == ' ' {
			j++
		}
		if i == len(a) || j == len(b) {
			return i == len(a) && j == len(b)
		}
		if a[i] != b[j] {
			return false
		}
		i, j = i+1, j+1
	}
}

// equalAcross compares values of different kinds: a set with one distinct
// element and that element, an open interval and the pair that writes it,
// text and an expression that did not parse.
func (c *comparer) equalAcross(a, b value) (bool, error) {
	if b.kind == setKind {
		a, b = b, a
	}
	if a.kind == setKind {
		d, err := c.distinct(a.elems)
		if err != nil || len(d) != 1 {
			return false, err
		}
		return c.equal(d[0], b)
	}
	if b.kind == intervalKind {
		a, b = b, a
	}
	if a.kind == intervalKind && b.kind == tupleKind && len(b.elems) == 2 {
		return c.intervals(a, openInterval(b))
	}
	if b.kind == equationKind {
		a, b = b, a
	}
	if a.kind == equationKind && b.kind == scalarKind && b.eq != nil {
		return c.equations(a.expr, b.eq) // 2x+4y-3=0 and y = -x/2 + 3/4
	}
	if a.kind == textKind && b.kind == scalarKind && b.expr == nil || a.kind == scalarKind && a.expr == nil && b.kind == textKind {
		return strings.EqualFold(strings.ReplaceAll(a.text, " ", ""), strings.ReplaceAll(b.text, " ", "")), nil
	}
	return false, nil
}

// records compares a list of named values with another answer: with a
// list of named values name by name (AB = 4, CD = 5 and CD = 5, AB = 4),
// with a list or tuple of unnamed values in order (4, 5); with anything
// else they differ.
func (c *comparer) records(a, b value) (bool, error) {
	if !a.record {
		a, b = b, a
	}
	if b.kind != setKind && b.kind != tupleKind || len(a.elems) != len(b.elems) {
		return false, nil
	}
	if !b.record {
		for _, e := range b.elems {
			if e.name != "" {
				return false, nil // x = 1, x = 2 names no y
			}
		}
		return c.inOrder(a.elems, b.elems)
	}
	for _, x := range a.elems {
		i := slices.IndexFunc(b.elems, func(y value) bool { return y.name == x.name })
		if i < 0 {
			return false, nil
		}
		if ok, err := c.equal(x, b.elems[i]); !ok || err != nil {
			return false, err
		}
	}
	return true, nil
}

func (c *comparer) inOrder(a, b []value) (bool, error) {
	if len(a) != len(b) {
		return false, nil
	}
	for i := range a {
		if ok, err := c.equal(a[i], b[i]); !ok || err != nil {
			return false, err
		}
	}
	return true, nil
}

// distinct removes repeated elements.
func (c *comparer) distinct(elems []value) ([]value, error) {
	var out []value
	for _, e := range elems {
		found, err := c.member(e, out)
		if err != nil {
			return nil, err
		}
		if !found {
			out = append(out, e)
		}
	}
	return out, nil
}

func (c *comparer) member(e value, set []value) (bool, error) {
	for _, x := range set {
		if ok, err := c.equal(e, x); ok || err != nil {
			return ok, err
		}
	}
	return false, nil
}

// sameSet: the same number of distinct elements, each of one in the other.
func (c *comparer) sameSet(a, b []value) (bool, error) {
	da, err := c.distinct(a)
	if err != nil {
		return false, err
	}
	db, err := c.distinct(b)
	if err != nil || len(da) != len(db) {
		return false, err
	}
	for _, x := range da {
		if ok, err := c.member(x, db); !ok || err != nil {
			return false, err
		}
	}
	return true, nil
}

func (c *comparer) intervals(a, b value) (bool, error) {
	if a.loInf != b.loInf || a.hiInf != b.hiInf || a.loClosed != b.loClosed || a.hiClosed != b.hiClosed {
		return false, nil
	}
	for _, e := range [][2]*value{{a.lo, b.lo}, {a.hi, b.hi}} {
		if e[0] == nil || e[1] == nil {
			continue // both infinite
		}
		if ok, err := c.equal(*e[0], *e[1]); !ok || err != nil {
			return false, err
		}
	}
	return true, nil
}

// scalars compares two expressions by value (see the package doc): with
// the same variables, or any when one is an entry of matrix arithmetic, in
// which they may cancel. An expression that cannot be computed is compared
// by its text.
func (c *comparer) scalars(a, b value) (bool, error) {
	if a.expr == nil || b.expr == nil {
		return a.percent == b.percent && sameBarSpaces(a.text, b.text), nil
	}
	va, vb := map[string]bool{}, map[string]bool{}
	variables(a.expr, va)
	variables(b.expr, vb)
	if !sameKeys(va, vb) {
		if !a.built && !b.built {
			return false, nil
		}
		maps.Copy(va, vb) // an entry of matrix arithmetic: compared at points of both sides' variables
	}
	s := samplingOf(a.expr, b.expr)
	k := 0
	for tried := 0; k < s.trials && tried < 3*s.trials; tried++ {
		env := s.point(va, tried)
		x, err := eval(a.expr, env, c.bud)
		if err == nil {
			var y number
			if y, err = eval(b.expr, env, c.bud); err == nil {
				if len(va) == 0 {
					return samePercent(a.percent, x, b.percent, y) ||
						!a.percent && !b.percent && (approximates(a.expr, y) || approximates(b.expr, x)), nil
				}
				if !samePercent(a.percent, x, b.percent, y) {
					return false, nil
				}
				k++
				continue
			}
		}
		switch {
		case errors.Is(err, ErrDeadline):
			return false, err
		case errors.Is(err, errDivZero) && len(va) > 0:
			continue // another point
		default:
			return sameBarSpaces(a.text, b.text), nil
		}
	}
	return k == s.trials, nil
}

// samePercent compares x and y where either may be a percentage p%, which
// equals p, and p/100 when that is not an integer (an integer may be a
// count: 100% is not 1).
func samePercent(xPct bool, x number, yPct bool, y number) bool {
	if sameNumber(x, y) {
		return true
	}
	if xPct == yPct {
		return false
	}
	if yPct {
		x, y = y, x
	}
	hundredth, err := div(x, integer(100))
	if _, whole := hundredth.isInteger(); err != nil || whole {
		return false
	}
	return sameNumber(hundredth, y)
}

// minDigits is how many significant digits a decimal needs to stand for a
// value it approximates (see the package doc, Values).
const minDigits = 6

// approximates reports whether n is a decimal literal (or its negation) of
// at least minDigits significant digits that is the real value v rounded
// up or down at its last digit: |n - v| < one unit of that digit.
func approximates(n *node, v number) bool {
	negative := false
	for n.op == "neg" {
		n, negative = n.args[0], !negative
	}
	point := strings.IndexByte(n.lit, '.')
	if n.op != "num" || point < 0 || strings.ContainsAny(n.lit, "eE") {
		return false
	}
	digits := strings.TrimLeft(strings.Replace(n.lit, ".", "", 1), "0")
	if len(digits) < minDigits {
		return false
	}
	d := new(big.Rat).Set(n.num)
	if negative {
		d.Neg(d)
	}
	unit := new(big.Rat).SetFrac(big.NewInt(1), new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(len(n.lit)-point-1)), nil))
	if v.exact {
		if v.im.Sign() != 0 {
			return false
		}
		gap := new(big.Rat).Sub(v.re, d)
		return gap.Abs(gap).Cmp(unit) < 0
	}
	u, _ := unit.Float64()
	f, _ := d.Float64()
	z := v.approx()
	return math.Abs(imag(z)) <= absTolerance && math.Abs(real(z)-f) < u*(1-1e-9)
}

// equations reports whether the equations f = 0 and g = 0 are the same
// equation up to a non-zero factor: the same variables (at least one), and
// f/g the same non-zero number at every comparison point where either is
// non-zero (2x+4y-3=0 and -4x-8y+6=0). Where that cannot be decided, the
// equations are different.
func (c *comparer) equations(f, g *node) (bool, error) {
	vf, vg := map[string]bool{}, map[string]bool{}
	variables(f, vf)
	variables(g, vg)
	if len(vf) == 0 || !sameKeys(vf, vg) {
		return false, nil
	}
	var ratio *number
	s := samplingOf(f, g)
	k := 0
	for tried := 0; k < s.trials && tried < 3*s.trials; tried++ {
		env := s.point(vf, tried)
		x, err := eval(f, env, c.bud)
		if err == nil {
			var y number
			if y, err = eval(g, env, c.bud); err == nil {
				switch {
				case x.isZero() && y.isZero():
					continue // on both curves: says nothing of the factor
				case x.isZero() || y.isZero():
					return false, nil
				}
				r, err := div(x, y)
				if err != nil {
					return false, nil
				}
				if ratio != nil && !sameNumber(*ratio, r) {
					return false, nil
				}
				ratio, k = &r, k+1
				continue
			}
		}
		if errors.Is(err, ErrDeadline) {
			return false, err
		}
		if !errors.Is(err, errDivZero) {
			return false, nil
		}
	}
	return k == s.trials, nil
}

func sameKeys(a, b map[string]bool) bool {
	if len(a) != len(b) {
		return false
	}
	for k := range a {
		if !b[k] {
			return false
		}
	}
	return true
}
