package symbolic

import (
	"errors"
	"math"
	"math/big"
	"strings"
)

// errTooLarge is returned for numbers past maxBits bits, which this package
// refuses to build (sympy would spend seconds or more on them).
var errTooLarge = errors.New("symbolic: number too large")

// maxBits bounds the size of every exact integer DiffIsZero builds.
const maxBits = 1 << 18

// numKind separates finite numbers from sympy's infinities and nan.
type numKind int

const (
	finite numKind = iota
	posInf         // oo
	negInf         // -oo
	cInf           // zoo, complex infinity
	notNum         // nan
)

// number is a sympy Number: an exact rational (Integer, Rational), a Float
// with its binary precision, or one of the infinities.
type number struct {
	kind numKind
	rat  *big.Rat   // set when kind is finite and flt is nil
	flt  *big.Float // set for a sympy Float; its precision is sympy's
}

func ratNum(r *big.Rat) *number { return &number{rat: r} }

func intNum(i int64) *number { return ratNum(new(big.Rat).SetInt64(i)) }

var nanNum = &number{kind: notNum}

func (x *number) isFloat() bool { return x.kind == finite && x.flt != nil }

func (x *number) isZero() bool {
	if x.kind != finite {
		return false
	}
	if x.flt != nil {
		return x.flt.Sign() == 0
	}
	return x.rat.Sign() == 0
}

func (x *number) sign() int {
	switch x.kind {
	case posInf:
		return 1
	case negInf:
		return -1
	case finite:
		if x.flt != nil {
			return x.flt.Sign()
		}
		return x.rat.Sign()
	}
	return 0
}

func (x *number) isInt() bool { return x.kind == finite && x.flt == nil && x.rat.IsInt() }

// float64 returns x as a float64 (nan for nan and zoo, ±Inf for ±oo).
func (x *number) float64() float64 {
	switch x.kind {
	case posInf:
		return math.Inf(1)
	case negInf:
		return math.Inf(-1)
	case finite:
		if x.flt != nil {
			f, _ := x.flt.Float64()
			return f
		}
		f, _ := x.rat.Float64()
		return f
	}
	return math.NaN()
}

// dpsToPrec is mpmath's dps_to_prec: the binary precision of a Float with n decimal digits.
func dpsToPrec(n int) uint {
	return uint(math.Max(1, math.Round(float64(n+1)*3.3219280948873626)))
}

// parseNumber turns a Python number literal (without a j suffix) into the
// sympy Number that auto_number makes of it: Integer for integer literals,
// Float (precision from the count of significant digits, at least 15) for
// literals with a point or an exponent.
func parseNumber(text string) (*number, error) {
	s := strings.ReplaceAll(text, "_", "")
	low := strings.ToLower(s)
	if len(low) > 2 && low[0] == '0' && (low[1] == 'x' || low[1] == 'o' || low[1] == 'b') {
		base := map[byte]int{'x': 16, 'o': 8, 'b': 2}[low[1]]
		i, ok := new(big.Int).SetString(low[2:], base)
		if !ok {
			return nil, errSyntax
		}
		if i.BitLen() > maxBits {
			return nil, errTooLarge
		}
		return ratNum(new(big.Rat).SetInt(i)), nil
	}
	isFloat := strings.ContainsAny(low, ".e")
	mant, exp := low, int64(0)
	if k := strings.IndexByte(low, 'e'); k >= 0 {
		mant = low[:k]
		e, ok := new(big.Int).SetString(strings.TrimPrefix(low[k+1:], "+"), 10)
		if !ok || !e.IsInt64() || e.Int64() > maxBits/3 || e.Int64() < -maxBits/3 {
			return nil, errTooLarge
		}
		exp = e.Int64()
	}
	intPart, frac, _ := strings.Cut(mant, ".")
	digits := strings.TrimLeft(intPart+frac, "0")
	exp -= int64(len(frac))
	if len(digits)+int(exp) > maxBits/3 {
		return nil, errTooLarge
	}
	m, ok := new(big.Int).SetString("0"+intPart+frac, 10)
	if !ok {
		return nil, errSyntax
	}
	r := new(big.Rat).SetInt(m)
	pow := new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(abs64(exp)), nil))
	if exp >= 0 {
		r.Mul(r, pow)
	} else {
		r.Quo(r, pow)
	}
	if !isFloat {
		return ratNum(r), nil
	}
	// sympy: dps = number of significant digits of the Decimal (at least 1),
	// or the length of the integer for an exponent literal without a point,
	// and never below 15.
	dps := len(digits)
	if dps == 0 {
		dps = 1
	}
	if !strings.Contains(low, ".") && r.IsInt() {
		dps = max(dps, len(r.Num().String()))
	}
	dps = max(dps, 15)
	return &number{flt: roundRat(r, dpsToPrec(dps))}, nil
}

func abs64(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}

// roundRat rounds r to prec bits, to nearest with ties to even, as mpmath does.
func roundRat(r *big.Rat, prec uint) *big.Float {
	return new(big.Float).SetPrec(prec).SetMode(big.ToNearestEven).SetRat(r)
}

// floatPrec is the precision of a Float operation on x and y: the larger
// precision of the Float operands.
func floatPrec(x, y *number) uint {
	var p uint
	if x.flt != nil {
		p = x.flt.Prec()
	}
	if y.flt != nil && y.flt.Prec() > p {
		p = y.flt.Prec()
	}
	return p
}

// asFloat returns x as a big.Float rounded to prec bits.
func asFloat(x *number, prec uint) *big.Float {
	if x.flt != nil {
		return new(big.Float).SetPrec(prec).SetMode(big.ToNearestEven).Set(x.flt)
	}
	return roundRat(x.rat, prec)
}

// specialAdd adds when one side is not finite.
func specialAdd(x, y *number) *number {
	if x.kind == notNum || y.kind == notNum {
		return nanNum
	}
	if x.kind == finite {
		return y
	}
	if y.kind == finite {
		return x
	}
	if x.kind == y.kind && x.kind != cInf {
		return x
	}
	return nanNum
}

func addNum(x, y *number) *number {
	if x.kind != finite || y.kind != finite {
		return specialAdd(x, y)
	}
	if p := floatPrec(x, y); p > 0 {
		z := new(big.Float).SetPrec(p).SetMode(big.ToNearestEven)
		return &number{flt: z.Add(asFloat(x, p), asFloat(y, p))}
	}
	return ratNum(new(big.Rat).Add(x.rat, y.rat))
}

func mulNum(x, y *number) *number {
	if x.kind != finite || y.kind != finite {
		if x.kind == notNum || y.kind == notNum || x.isZero() || y.isZero() {
			return nanNum
		}
		if x.kind == cInf || y.kind == cInf {
			return &number{kind: cInf}
		}
		if x.sign()*y.sign() > 0 {
			return &number{kind: posInf}
		}
		return &number{kind: negInf}
	}
	if p := floatPrec(x, y); p > 0 {
		z := new(big.Float).SetPrec(p).SetMode(big.ToNearestEven)
		return &number{flt: z.Mul(asFloat(x, p), asFloat(y, p))}
	}
	return ratNum(new(big.Rat).Mul(x.rat, y.rat))
}

// invNum is 1/x: 1/0 is zoo, 1/oo is 0.
func invNum(x *number) *number {
	switch x.kind {
	case posInf, negInf, cInf:
		return intNum(0)
	case notNum:
		return nanNum
	}
	if x.isZero() {
		return &number{kind: cInf}
	}
	if x.flt != nil {
		p := x.flt.Prec()
		z := new(big.Float).SetPrec(p).SetMode(big.ToNearestEven)
		return &number{flt: z.Quo(new(big.Float).SetPrec(p).SetInt64(1), x.flt)}
	}
	return ratNum(new(big.Rat).Inv(x.rat))
}

func divNum(x, y *number) *number {
	if x.kind == finite && y.kind == finite && !y.isZero() && (x.flt != nil || y.flt != nil) {
		p := floatPrec(x, y)
		z := new(big.Float).SetPrec(p).SetMode(big.ToNearestEven)
		return &number{flt: z.Quo(asFloat(x, p), asFloat(y, p))}
	}
	if y.isZero() && x.isZero() {
		return nanNum
	}
	return mulNum(x, invNum(y))
}

// powIntNum is x**n for an integer n, exactly for rationals and rounded to
// the Float's precision for Floats. It returns errTooLarge past maxBits.
func powIntNum(x *number, n *big.Int) (*number, error) {
	if n.Sign() == 0 {
		if x.kind == notNum {
			return nanNum, nil
		}
		return intNum(1), nil
	}
	if x.kind != finite {
		if n.Sign() < 0 {
			return intNum(0), nil
		}
		if x.kind == negInf && n.Bit(0) == 0 {
			return &number{kind: posInf}, nil
		}
		return x, nil
	}
	if x.isZero() {
		if n.Sign() < 0 {
			return &number{kind: cInf}, nil
		}
		return x, nil
	}
	neg := n.Sign() < 0
	e := new(big.Int).Abs(n)
	if x.flt != nil {
		if !e.IsInt64() || e.Int64() > maxBits {
			return nil, errTooLarge
		}
		p := x.flt.Prec()
		work := p + 64
		acc := new(big.Float).SetPrec(work).SetInt64(1)
		base := new(big.Float).SetPrec(work).Set(x.flt)
		for k := e.Int64(); k > 0; k >>= 1 {
			if k&1 == 1 {
				acc.Mul(acc, base)
			}
			base.Mul(base, base)
			if acc.IsInf() || base.IsInf() {
				return nil, errTooLarge
			}
		}
		if neg {
			acc.Quo(new(big.Float).SetPrec(work).SetInt64(1), acc)
		}
		return &number{flt: new(big.Float).SetPrec(p).SetMode(big.ToNearestEven).Set(acc)}, nil
	}
	num, den := x.rat.Num(), x.rat.Denom()
	bits := max(num.BitLen(), den.BitLen())
	if bits > 1 && (!e.IsInt64() || e.Int64()*int64(bits) > maxBits) {
		return nil, errTooLarge
	}
	if bits <= 1 && !e.IsInt64() { // ±1
		e = new(big.Int).And(e, big.NewInt(1))
		if e.Sign() == 0 {
			e.SetInt64(2)
		}
	}
	pn := new(big.Int).Exp(num, e, nil)
	pd := new(big.Int).Exp(den, e, nil)
	if x.rat.Sign() < 0 && e.Bit(0) == 1 {
		pn.Neg(pn.Abs(pn))
	} else {
		pn.Abs(pn)
	}
	r := new(big.Rat).SetFrac(pn, pd)
	if neg {
		r.Inv(r)
	}
	return ratNum(r), nil
}

// rootRat returns the exact q-th root of a non-negative rational r, if it has one.
func rootRat(r *big.Rat, q int64) (*big.Rat, bool) {
	if r.Sign() < 0 || q <= 0 || q > 64 {
		return nil, false
	}
	num, ok1 := rootInt(r.Num(), q)
	den, ok2 := rootInt(r.Denom(), q)
	if !ok1 || !ok2 {
		return nil, false
	}
	return new(big.Rat).SetFrac(num, den), true
}

// rootInt returns the exact q-th root of n >= 0, if it has one.
func rootInt(n *big.Int, q int64) (*big.Int, bool) {
	if n.Sign() == 0 || n.Cmp(big.NewInt(1)) == 0 {
		return new(big.Int).Set(n), true
	}
	if q == 2 {
		s := new(big.Int).Sqrt(n)
		return s, new(big.Int).Mul(s, s).Cmp(n) == 0
	}
	// Newton's method from a float estimate, then check neighbours.
	f, _ := new(big.Float).SetInt(n).Float64()
	guess := math.Pow(f, 1/float64(q))
	if math.IsInf(guess, 0) || math.IsNaN(guess) {
		return nil, false
	}
	g, _ := big.NewFloat(math.Round(guess)).Int(nil)
	for d := int64(-1); d <= 1; d++ {
		c := new(big.Int).Add(g, big.NewInt(d))
		if c.Sign() > 0 && new(big.Int).Exp(c, big.NewInt(q), nil).Cmp(n) == 0 {
			return c, true
		}
	}
	return nil, false
}
