package verify

import (
	"errors"
	"math"
	"math/big"
	"math/cmplx"
)

// maxBits bounds the numerator and denominator of an exact value; a result
// past it is refused, not computed.
const maxBits = 100_000

// errTooLarge refuses a value that cannot be computed within bounds.
var errTooLarge = errors.New("value too large to compute")

// number is a complex value: exact (Gaussian rational re + im·i) when every
// step that made it was exact, else its complex128 value c.
type number struct {
	exact  bool
	re, im *big.Rat // set when exact
	c      complex128
}

func exactNumber(re, im *big.Rat) (number, error) {
	if re.Num().BitLen()+re.Denom().BitLen() > maxBits || im.Num().BitLen()+im.Denom().BitLen() > maxBits {
		return number{}, errTooLarge
	}
	return number{exact: true, re: re, im: im}, nil
}

// approx is a's complex128 value (infinite when an exact value is beyond
// float64).
func (a number) approx() complex128 {
	if !a.exact {
		return a.c
	}
	f, _ := a.re.Float64()
	g, _ := a.im.Float64()
	return complex(f, g)
}

func rational(r *big.Rat) number {
	n, _ := exactNumber(r, new(big.Rat))
	return n
}

func integer(i int64) number { return rational(big.NewRat(i, 1)) }

// inexact is a value known only in floating point; infinities and NaN are
// refused.
func inexact(c complex128) (number, error) {
	if cmplx.IsInf(c) || cmplx.IsNaN(c) {
		return number{}, errTooLarge
	}
	return number{c: c}, nil
}

func (a number) isZero() bool {
	if a.exact {
		return a.re.Sign() == 0 && a.im.Sign() == 0
	}
	return a.c == 0
}

// isInteger reports whether a is an exact integer, and its value.
func (a number) isInteger() (*big.Int, bool) {
	if !a.exact || a.im.Sign() != 0 || !a.re.IsInt() {
		return nil, false
	}
	return a.re.Num(), true
}

func add(a, b number) (number, error) {
	if a.exact && b.exact {
		return exactNumber(new(big.Rat).Add(a.re, b.re), new(big.Rat).Add(a.im, b.im))
	}
	return inexact(a.approx() + b.approx())
}

func neg(a number) number {
	if a.exact {
		n, _ := exactNumber(new(big.Rat).Neg(a.re), new(big.Rat).Neg(a.im))
		return n
	}
	return number{c: -a.c}
}

func mul(a, b number) (number, error) {
	if a.exact && b.exact {
		if a.im.Sign() == 0 && b.im.Sign() == 0 { // real: one product, not four
			return exactNumber(new(big.Rat).Mul(a.re, b.re), new(big.Rat))
		}
		re := new(big.Rat).Sub(new(big.Rat).Mul(a.re, b.re), new(big.Rat).Mul(a.im, b.im))
		im := new(big.Rat).Add(new(big.Rat).Mul(a.re, b.im), new(big.Rat).Mul(a.im, b.re))
		return exactNumber(re, im)
	}
	return inexact(a.approx() * b.approx())
}

var errDivZero = errors.New("division by zero")

func div(a, b number) (number, error) {
	if b.isZero() {
		return number{}, errDivZero
	}
	if a.exact && b.exact {
		// a / b = a · conj(b) / |b|²
		norm := new(big.Rat).Add(new(big.Rat).Mul(b.re, b.re), new(big.Rat).Mul(b.im, b.im))
		conj, err := exactNumber(b.re, new(big.Rat).Neg(b.im))
		if err != nil {
			return number{}, err
		}
		p, err := mul(a, conj)
		if err != nil {
			return number{}, err
		}
		return exactNumber(p.re.Quo(p.re, norm), p.im.Quo(p.im, norm))
	}
	return inexact(a.approx() / b.approx())
}

// power is a^b: exact for an exact base and an integer exponent whose result
// fits maxBits, or for an exact root (a rational exponent p/q of a rational
// perfect q-th power); else in floating point.
func power(a, b number) (number, error) {
	if n, ok := b.isInteger(); ok && a.exact {
		return intPower(a, n)
	}
	if b.exact && b.im.Sign() == 0 && a.exact && a.im.Sign() == 0 && a.re.Sign() > 0 {
		if r, ok := exactRoot(a.re, b.re); ok {
			return rational(r), nil
		}
	}
	if cmplx.Abs(b.approx()) > 1e4 {
		return number{}, errTooLarge
	}
	return inexact(cmplx.Pow(a.approx(), b.approx()))
}

// intPower is a^n for exact a, refused when the result would pass maxBits.
func intPower(a number, n *big.Int) (number, error) {
	if a.isZero() {
		if n.Sign() <= 0 {
			return number{}, errDivZero
		}
		return a, nil
	}
	bits := a.re.Num().BitLen() + a.re.Denom().BitLen() + a.im.Num().BitLen() + a.im.Denom().BitLen()
	unit := a.im.Sign() == 0 && a.re.Denom().IsInt64() && a.re.Denom().Int64() == 1 && a.re.Num().CmpAbs(big.NewInt(1)) == 0
	if !n.IsInt64() || (!unit && int64(bits-2)*absInt(n.Int64()) > maxBits) {
		if unit {
			if n.Bit(0) == 0 {
				return integer(1), nil
			}
			return a, nil
		}
		return number{}, errTooLarge
	}
	e := n.Int64()
	result, base := integer(1), a
	for k := absInt(e); k > 0; k >>= 1 {
		var err error
		if k&1 == 1 {
			if result, err = mul(result, base); err != nil {
				return number{}, err
			}
		}
		if k > 1 {
			if base, err = mul(base, base); err != nil {
				return number{}, err
			}
		}
	}
	if e < 0 {
		return div(integer(1), result)
	}
	return result, nil
}

func absInt(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}

// exactRoot returns a^e for positive rational a and rational e = p/q (q ≤ 64)
// when a is a perfect q-th power.
func exactRoot(a, e *big.Rat) (*big.Rat, bool) {
	q := e.Denom()
	if !q.IsInt64() || q.Int64() > 64 || !e.Num().IsInt64() || absInt(e.Num().Int64()) > 64 {
		return nil, false
	}
	num, ok1 := intRoot(a.Num(), q.Int64())
	den, ok2 := intRoot(a.Denom(), q.Int64())
	if !ok1 || !ok2 {
		return nil, false
	}
	r, err := intPower(rational(new(big.Rat).SetFrac(num, den)), e.Num())
	if err != nil {
		return nil, false
	}
	return r.re, true
}

// intRoot returns the exact q-th root of x ≥ 0, if it is an integer.
func intRoot(x *big.Int, q int64) (*big.Int, bool) {
	if x.BitLen() > maxBits {
		return nil, false
	}
	f, _ := new(big.Float).SetInt(x).Float64()
	guess := math.Round(math.Pow(f, 1/float64(q)))
	if math.IsInf(guess, 0) || guess > 1e15 {
		// too large for a float guess; use the integer square root for q = 2
		if q != 2 {
			return nil, false
		}
		r := new(big.Int).Sqrt(x)
		return r, new(big.Int).Mul(r, r).Cmp(x) == 0
	}
	for _, g := range []float64{guess - 1, guess, guess + 1} {
		if g < 0 {
			continue
		}
		r := big.NewInt(int64(g))
		if new(big.Int).Exp(r, big.NewInt(q), nil).Cmp(x) == 0 {
			return r, true
		}
	}
	return nil, false
}

// squareRoot is the principal square root: exact for a rational perfect
// square (of either sign), else in floating point.
func squareRoot(a number) (number, error) {
	if a.exact && a.im.Sign() == 0 {
		abs := new(big.Rat).Abs(a.re)
		if r, ok := exactRoot(abs, big.NewRat(1, 2)); ok || abs.Sign() == 0 {
			if abs.Sign() == 0 {
				return a, nil
			}
			if a.re.Sign() < 0 {
				return exactNumber(new(big.Rat), r)
			}
			return rational(r), nil
		}
	}
	return inexact(cmplx.Sqrt(a.approx()))
}

// maxFactorial is the largest n whose n! is computed.
const maxFactorial = 1000

func factorial(a number) (number, error) {
	n, ok := a.isInteger()
	if !ok || n.Sign() < 0 {
		return number{}, errors.New("factorial of a non-natural number")
	}
	if !n.IsInt64() || n.Int64() > maxFactorial {
		return number{}, errTooLarge
	}
	return rational(new(big.Rat).SetInt(new(big.Int).MulRange(1, n.Int64()))), nil
}

// maxBinomial is the largest n whose binomial coefficients are computed.
const maxBinomial = 10_000

func binomial(n, k number) (number, error) {
	ni, ok1 := n.isInteger()
	ki, ok2 := k.isInteger()
	if !ok1 || !ok2 || ni.Sign() < 0 || !ni.IsInt64() || ni.Int64() > maxBinomial {
		return number{}, errTooLarge
	}
	if ki.Sign() < 0 || ki.Cmp(ni) > 0 {
		return integer(0), nil
	}
	n64, k64 := ni.Int64(), ki.Int64()
	k64 = min(k64, n64-k64)
	top := new(big.Int).MulRange(n64-k64+1, n64) // product trees: 3x faster than big.Int.Binomial's loop
	return rational(new(big.Rat).SetInt(top.Quo(top, new(big.Int).MulRange(1, k64)))), nil
}

// Tolerances of the floating-point comparison of values that are not exact.
const (
	relTolerance = 1e-9
	absTolerance = 1e-12
)

// sameNumber compares exactly when both are exact, else within the
// tolerances.
func sameNumber(a, b number) bool {
	if a.exact && b.exact {
		return a.re.Cmp(b.re) == 0 && a.im.Cmp(b.im) == 0
	}
	x, y := a.approx(), b.approx()
	if cmplx.IsInf(x) || cmplx.IsInf(y) {
		return false // an exact value beyond float64 against one that is not exact
	}
	d := cmplx.Abs(x - y)
	return d <= absTolerance || d <= relTolerance*math.Max(cmplx.Abs(x), cmplx.Abs(y))
}
