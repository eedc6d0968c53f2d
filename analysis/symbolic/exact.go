package symbolic

import (
	"errors"
	"math"
	"math/big"
	"math/rand/v2"
)

// precBits is the precision of the residual check: far past float64, so that
// a difference left by decimal Floats (1e-17) is plainly not zero.
const precBits = 320

// errInexact marks an expression the residual check cannot evaluate (a
// general power, a logarithm, a factorial); the float64 verdict stands.
var errInexact = errors.New("symbolic: no high-precision evaluation")

// Digits of pi and e, more than precBits needs.
const (
	piDigits = "3.14159265358979323846264338327950288419716939937510582097494459230781640628620899862803482534211706798214808651328230664709384460955058223172535940812848111745028410270193852110555964462294895493038196"
	eDigits  = "2.71828182845904523536028747135266249775724709369995957496696762772407663035354759457138217852516642742746639193200305992181741359662904357290033429526059563073813232862794349076323382988075319525101901"
)

// bc is a complex number with big.Float parts.
type bc struct{ re, im *big.Float }

func newF() *big.Float { return new(big.Float).SetPrec(precBits) }

func bcReal(f *big.Float) bc { return bc{newF().Set(f), newF()} }

func bcFromRat(r *big.Rat) bc { return bc{newF().SetRat(r), newF()} }

func (z bc) add(w bc) bc { return bc{newF().Add(z.re, w.re), newF().Add(z.im, w.im)} }

func (z bc) mul(w bc) bc {
	re := newF().Sub(newF().Mul(z.re, w.re), newF().Mul(z.im, w.im))
	im := newF().Add(newF().Mul(z.re, w.im), newF().Mul(z.im, w.re))
	return bc{re, im}
}

func (z bc) abs2() *big.Float { return newF().Add(newF().Mul(z.re, z.re), newF().Mul(z.im, z.im)) }

func (z bc) isZero() bool { return z.re.Sign() == 0 && z.im.Sign() == 0 }

// quo is z/w; w must not be zero.
func (z bc) quo(w bc) bc {
	d := w.abs2()
	re := newF().Add(newF().Mul(z.re, w.re), newF().Mul(z.im, w.im))
	im := newF().Sub(newF().Mul(z.im, w.re), newF().Mul(z.re, w.im))
	return bc{re.Quo(re, d), im.Quo(im, d)}
}

// sqrt is the principal square root (a zero imaginary part counts as +0).
func (z bc) sqrt() bc {
	if z.isZero() {
		return z
	}
	r := newF().Sqrt(z.abs2())
	re := newF().Sqrt(newF().Quo(newF().Add(r, z.re), big.NewFloat(2)))
	im := newF().Sqrt(newF().Quo(newF().Sub(r, z.re), big.NewFloat(2)))
	if z.im.Sign() < 0 {
		im.Neg(im)
	}
	return bc{re, im}
}

// exponent returns the binary exponent of the larger part of z (a rough log2|z|).
func (z bc) exponent() int {
	e := math.MinInt32
	for _, f := range []*big.Float{z.re, z.im} {
		if f.Sign() != 0 {
			e = max(e, f.MantExp(nil))
		}
	}
	return e
}

// exactCtx evaluates at one point with precBits bits, tracking the largest
// magnitude met so that a result can be compared with it.
type exactCtx struct {
	b    *budget
	env  map[string]bc
	maxE int
}

// residualZero evaluates n at three random points with precBits bits, each
// Float taken as the shortest decimal that rounds to it, and reports whether
// the value is zero relative to the magnitudes met on the way.
func residualZero(n *node, b *budget) (bool, error) {
	syms := map[string]complex128{}
	collectSymbols(n, syms)
	names := sortedKeys(syms)
	rng := rand.New(rand.NewPCG(0xdec, uint64(len(names))))
	count := 3
	if len(names) == 0 {
		count = 1
	}
	for range count {
		c := &exactCtx{b: b, env: map[string]bc{}, maxE: math.MinInt32}
		for _, name := range names {
			// Rational coordinates in (-3, 3), exact in binary.
			re := big.NewFloat(math.Round((rng.Float64()*6-3)*1024) / 1024)
			im := big.NewFloat(math.Round((rng.Float64()*6-3)*1024) / 1024)
			c.env[name] = bc{newF().Set(re), newF().Set(im)}
		}
		v, err := c.eval(n)
		if err != nil {
			return false, err
		}
		if !v.isZero() && v.exponent() > c.maxE-precBits+64 {
			return false, nil
		}
	}
	return true, nil
}

func (c *exactCtx) note(z bc) bc {
	c.maxE = max(c.maxE, z.exponent())
	return z
}

func (c *exactCtx) eval(n *node) (bc, error) {
	if err := c.b.check(); err != nil {
		return bc{}, err
	}
	if isAtom(n) {
		// sympy keeps a power with a Float exponent apart from everything
		// else: give it a value of its own, the same for equal powers.
		re := float64(n.hash%1000003)/1000003 + 0.5
		im := float64((n.hash>>32)%1000003)/1000003 - 0.5
		return c.note(bc{newF().SetFloat64(re), newF().SetFloat64(im)}), nil
	}
	switch n.kind {
	case nNum:
		if n.num.kind != finite {
			return bc{}, errInexact
		}
		if n.num.flt != nil {
			r, ok := new(big.Rat).SetString(n.num.flt.Text('g', -1))
			if !ok {
				return bc{}, errInexact
			}
			return c.note(bcFromRat(r)), nil
		}
		return c.note(bcFromRat(n.num.rat)), nil
	case nSym:
		return c.note(c.env[n.text]), nil
	case nConst:
		switch n.text {
		case "pi":
			f, _, _ := newF().Parse(piDigits, 10)
			return c.note(bcReal(f)), nil
		case "E":
			f, _, _ := newF().Parse(eDigits, 10)
			return c.note(bcReal(f)), nil
		case "I":
			return bc{newF(), newF().SetInt64(1)}, nil
		}
		return bc{}, errInexact
	}
	args := make([]bc, len(n.args))
	for i, a := range n.args {
		v, err := c.eval(a)
		if err != nil {
			return bc{}, err
		}
		args[i] = v
	}
	switch n.kind {
	case nSum:
		acc := bc{newF(), newF()}
		for _, a := range args {
			acc = c.note(acc.add(a))
		}
		return acc, nil
	case nMul:
		return c.note(args[0].mul(args[1])), nil
	case nPow:
		e := n.args[1]
		if e.kind != nNum || e.num.kind != finite {
			return bc{}, errInexact
		}
		r := e.num.rat
		if e.num.flt != nil {
			// x**(-0.5): simplify treats it as x**(-1/2)
			var ok bool
			if r, ok = new(big.Rat).SetString(e.num.flt.Text('g', -1)); !ok {
				return bc{}, errInexact
			}
		}
		base := args[0]
		switch {
		case r.IsInt():
		case r.Denom().Cmp(big.NewInt(2)) == 0:
			base = base.sqrt()
			r = new(big.Rat).Mul(r, big.NewRat(2, 1))
		default:
			return bc{}, errInexact
		}
		return c.powInt(base, r.Num())
	case nCall:
		switch n.text {
		case "sqrt":
			return c.note(args[0].sqrt()), nil
		case "re":
			return bc{args[0].re, newF()}, nil
		case "im":
			return bc{args[0].im, newF()}, nil
		}
	}
	return bc{}, errInexact
}

// powInt is z**k for an integer k of modest size.
func (c *exactCtx) powInt(z bc, k *big.Int) (bc, error) {
	if !k.IsInt64() || k.Int64() > 4096 || k.Int64() < -4096 {
		return bc{}, errInexact
	}
	e := k.Int64()
	neg := e < 0
	if neg {
		e = -e
	}
	acc := bc{newF().SetInt64(1), newF()}
	for base := z; e > 0; e >>= 1 {
		if err := c.b.checkNow(); err != nil {
			return bc{}, err
		}
		if e&1 == 1 {
			acc = acc.mul(base)
		}
		base = base.mul(base)
	}
	if neg {
		if acc.isZero() {
			return bc{}, errInexact
		}
		acc = bc{newF().SetInt64(1), newF()}.quo(acc)
	}
	return c.note(acc), nil
}
