package verify

import (
	"errors"
	"maps"
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
	if a.kind != b.kind {
		return c.equalAcross(a, b)
	}
	switch a.kind {
	case scalarKind:
		return c.scalars(a, b)
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
	if a.kind == textKind && b.kind == scalarKind && b.expr == nil || a.kind == scalarKind && a.expr == nil && b.kind == textKind {
		return strings.EqualFold(strings.ReplaceAll(a.text, " ", ""), strings.ReplaceAll(b.text, " ", "")), nil
	}
	return false, nil
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

// scalars compares two expressions by value (see the package doc); an
// expression that cannot be computed is compared by its text.
func (c *comparer) scalars(a, b value) (bool, error) {
	if a.expr == nil || b.expr == nil {
		return a.percent == b.percent && strings.ReplaceAll(a.text, " ", "") == strings.ReplaceAll(b.text, " ", ""), nil
	}
	va, vb := map[string]bool{}, map[string]bool{}
	variables(a.expr, va)
	variables(b.expr, vb)
	if !sameKeys(va, vb) {
		return false, nil
	}
	for k, tried := 0, 0; k < trials && tried < 3*trials; tried++ {
		env := point(va, tried)
		x, err := eval(a.expr, env, c.bud)
		if err == nil {
			var y number
			if y, err = eval(b.expr, env, c.bud); err == nil {
				if !samePercent(a.percent, x, b.percent, y) {
					return false, nil
				}
				if len(va) == 0 {
					return true, nil
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
			return strings.ReplaceAll(a.text, " ", "") == strings.ReplaceAll(b.text, " ", ""), nil
		}
	}
	return true, nil
}

// samePercent compares x and y where either may be a percentage p%, which
// equals both p and p/100.
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
	return err == nil && sameNumber(hundredth, y)
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
