package symbolic

import (
	"errors"
	"math"
	"math/cmplx"
	"math/rand/v2"
	"sort"
)

// unit is the relative rounding error of one float64 operation.
const unit = 0x1p-53

// margin is how many times its estimated rounding error a value may be and
// still count as zero.
const margin = 256

// approx is a complex value with a bound on its absolute error.
type approx struct {
	v   complex128
	err float64
}

func finiteF(f float64) bool { return !math.IsInf(f, 0) && !math.IsNaN(f) }

func finiteC(z complex128) bool { return finiteF(real(z)) && finiteF(imag(z)) }

// numericZero evaluates n at random complex points for its symbols and
// reports whether it is zero within rounding error at every point where it
// can be evaluated, then confirms a zero with residualZero.
//
// A zero that depends on the exact value of a Float literal is accepted only
// the way sympy accepts it: when the Float cancels against rational
// coefficients of the same terms (0.2x - x/5), not when it matches an
// irrational number (1.4142135623730951 - sqrt(2)) or a Float exponent
// matches a rational one (x^0.5 - sqrt(x)).
func numericZero(n *node, b *budget) (bool, error) {
	c := &evalCtx{b: b}
	zero, err := c.zeroAtPoints(n)
	if err != nil || !zero {
		return false, err
	}
	if !hasFloat(n) {
		// Confirm with many more digits: float64 cannot tell
		// sqrt(sqrt(...sqrt(2))) from 1.
		zero, err := residualZero(n, b)
		if errors.Is(err, errInexact) {
			return true, nil
		}
		return zero, err
	}
	// A Float is involved. sympy keeps a power with a Float exponent as a
	// thing of its own (x**2.5 is not x**2*sqrt(x)): the zero must survive
	// moving each such power a little.
	c.perturbAtoms = true
	if zero, err := c.zeroAtPoints(n); err != nil || !zero {
		return false, err
	}
	// sympy's Float arithmetic cancels only when it is exact: 0.2*x - x/5 is
	// 0 (1/5 rounds to the Float 0.2), 0.1**3 - 0.001 and
	// 1.4142135623730951 - sqrt(2) are not. Take every Float as the shortest
	// decimal that rounds to it and look at what is left, with many digits.
	zero, err = residualZero(n, b)
	if errors.Is(err, errInexact) {
		return true, nil
	}
	return zero, err
}

func hasFloat(n *node) bool {
	if n.kind == nNum && n.num.isFloat() {
		return true
	}
	for _, a := range n.args {
		if hasFloat(a) {
			return true
		}
	}
	return false
}

// points is the number of random points; minPoints must evaluate to a
// finite value for the answer to be true.
const (
	points    = 24
	minPoints = 12
)

// evalCtx holds what one numeric evaluation needs.
type evalCtx struct {
	b            *budget
	env          map[string]complex128
	perturbAtoms bool // when set, each power with a Float exponent is moved by a factor from its key
}

// zeroAtPoints evaluates n at the points and reports whether it is zero at all of them.
func (c *evalCtx) zeroAtPoints(n *node) (bool, error) {
	syms := map[string]complex128{}
	collectSymbols(n, syms)
	names := sortedKeys(syms)
	count := points
	if len(names) == 0 {
		count = 1
	}
	rng := rand.New(rand.NewPCG(0x5eed, uint64(len(names))))
	valid := 0
	for k := range count {
		c.env = map[string]complex128{}
		for j, name := range names {
			// Angles spread over (-pi, pi] by a Halton sequence (bases 2, 3, 5, ...),
			// moduli log-uniform between e^-2 and e^7 so that a large symbol
			// can turn the sign of a sum (sqrt((12-p)^2) is not 12-p).
			theta := math.Pi * (2*halton(k+1, primes[j%len(primes)]) - 1)
			theta += 0.05 * (rng.Float64() - 0.5)
			r := math.Exp(-2 + 9*rng.Float64())
			c.env[name] = cmplx.Rect(r, theta)
		}
		a, err := c.eval(n)
		if err != nil {
			return false, err
		}
		if !finiteC(a.v) || !finiteF(a.err) {
			continue
		}
		valid++
		if cmplx.Abs(a.v) > margin*a.err {
			return false, nil
		}
	}
	return valid >= min(count, minPoints), nil
}

var primes = []int{2, 3, 5, 7, 11, 13, 17, 19, 23, 29}

// halton is the k-th element of the van der Corput sequence in base p.
func halton(k, p int) float64 {
	f, r := 1.0, 0.0
	for ; k > 0; k /= p {
		f /= float64(p)
		r += f * float64(k%p)
	}
	return r
}

func collectSymbols(n *node, into map[string]complex128) {
	if n.kind == nSym {
		into[n.text] = 0
	}
	for _, a := range n.args {
		collectSymbols(a, into)
	}
}

func sortedKeys(m map[string]complex128) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// isAtom reports whether n is a power with a positive Float exponent and a
// base that is not a number: sympy's simplify never equates x**0.5 with
// sqrt(x) (it does equate x**(-0.5) with 1/sqrt(x)).
func isAtom(n *node) bool {
	return n.kind == nPow && n.args[0].kind != nNum && n.args[1].kind == nNum &&
		n.args[1].num.isFloat() && n.args[1].num.sign() > 0
}

// atomFactor is a factor slightly off 1, the same for equal atoms.
func atomFactor(n *node) float64 {
	return 1 + 1e-6*(1+float64(n.hash%1000)/1000)
}

// rounding returns the error of rounding z to float64.
func rounding(z complex128) float64 { return unit * cmplx.Abs(z) }

// eval evaluates n with complex128 arithmetic, carrying an error bound.
func (c *evalCtx) eval(n *node) (approx, error) {
	a, err := c.evalNode(n)
	if err == nil && c.perturbAtoms && isAtom(n) {
		f := atomFactor(n)
		a.v *= complex(f, 0)
		a.err *= f
	}
	return a, err
}

func (c *evalCtx) evalNode(n *node) (approx, error) {
	if err := c.b.check(); err != nil {
		return approx{}, err
	}
	switch n.kind {
	case nNum:
		return numApprox(n.num), nil
	case nSym:
		return approx{v: c.env[n.text]}, nil
	case nConst:
		switch n.text {
		case "pi":
			return approx{v: math.Pi, err: unit * math.Pi}, nil
		case "E":
			return approx{v: math.E, err: unit * math.E}, nil
		case "I":
			return approx{v: 1i}, nil
		}
		return approx{}, errUnsupported
	}
	args := make([]approx, len(n.args))
	for i, a := range n.args {
		v, err := c.eval(a)
		if err != nil {
			return approx{}, err
		}
		args[i] = v
	}
	x := args[0]
	var y approx
	if len(args) > 1 {
		y = args[1]
	}
	switch n.kind {
	case nSum:
		acc := approx{}
		for _, a := range args {
			v := acc.v + a.v
			acc = approx{v: v, err: acc.err + a.err + rounding(v)}
		}
		return acc, nil
	case nMul:
		v := x.v * y.v
		ax, ay := cmplx.Abs(x.v), cmplx.Abs(y.v)
		return approx{v: v, err: x.err*ay + y.err*ax + x.err*y.err + 2*rounding(v)}, nil
	case nPow:
		if n.args[1].kind == nNum && n.args[1].num.isInt() {
			return powIntApprox(x, n.args[1].num.float64()), nil
		}
		return powApprox(x, y), nil
	case nCall:
		return callApprox(n.text, x)
	case nFact:
		return gammaApprox(approx{v: x.v + 1, err: x.err}), nil
	}
	return approx{}, errUnsupported
}

func numApprox(x *number) approx {
	f := x.float64()
	if x.kind != finite {
		return approx{v: complex(math.NaN(), 0)}
	}
	v := complex(f, 0)
	err := rounding(v)
	if x.flt != nil {
		// sympy combines Float coefficients after rounding them to the
		// Float's precision: allow for that rounding too.
		err += math.Abs(f) * math.Ldexp(1, -int(x.flt.Prec()))
	}
	return approx{v: v, err: err}
}

func divApprox(x, y approx) approx {
	ay := cmplx.Abs(y.v)
	if ay <= y.err || ay == 0 {
		return approx{v: complex(math.Inf(1), 0), err: math.Inf(1)}
	}
	v := x.v / y.v
	return approx{v: v, err: (x.err+cmplx.Abs(v)*y.err)/(ay-y.err) + 4*rounding(v)}
}

// powIntApprox is x**k for an integer k, by repeated multiplication.
func powIntApprox(x approx, k float64) approx {
	if k == 0 {
		return approx{v: 1}
	}
	if math.Abs(k) > 64 {
		v := cmplx.Pow(x.v, complex(k, 0))
		ax := cmplx.Abs(x.v)
		return approx{v: v, err: cmplx.Abs(v)*(math.Abs(k)*x.err/ax+8*unit*math.Abs(k)) + rounding(v)}
	}
	acc := approx{v: 1}
	for range int(math.Abs(k)) {
		v := acc.v * x.v
		acc = approx{v: v, err: acc.err*cmplx.Abs(x.v) + x.err*cmplx.Abs(acc.v) + acc.err*x.err + 2*rounding(v)}
	}
	if k < 0 {
		return divApprox(approx{v: 1}, acc)
	}
	return acc
}

// principalLog is log with the branch cut on the negative real axis, the
// sign of a zero imaginary part ignored (sympy's numbers have no signed zero).
func principalLog(z complex128) complex128 {
	if imag(z) == 0 {
		z = complex(real(z), 0)
	}
	return cmplx.Log(z)
}

// powApprox is the principal value exp(y log x).
func powApprox(x, y approx) approx {
	ax := cmplx.Abs(x.v)
	if ax == 0 {
		if real(y.v) > 0 {
			return approx{v: 0, err: 0}
		}
		return approx{v: complex(math.NaN(), 0)}
	}
	if ax <= x.err {
		return approx{v: complex(math.NaN(), 0)}
	}
	l := principalLog(x.v)
	v := cmplx.Exp(y.v * l)
	av := cmplx.Abs(v)
	return approx{v: v, err: av*(cmplx.Abs(y.v)*x.err/(ax-x.err)+cmplx.Abs(l)*y.err) + 8*rounding(v)*(1+cmplx.Abs(y.v*l))}
}

func callApprox(fn string, x approx) (approx, error) {
	switch fn {
	case "sqrt":
		return powApprox(x, approx{v: 0.5}), nil
	case "re":
		return approx{v: complex(real(x.v), 0), err: x.err}, nil
	case "im":
		return approx{v: complex(imag(x.v), 0), err: x.err}, nil
	case "ln":
		ax := cmplx.Abs(x.v)
		if ax <= x.err {
			return approx{v: complex(math.NaN(), 0)}, nil
		}
		v := principalLog(x.v)
		return approx{v: v, err: x.err/(ax-x.err) + 2*rounding(v)}, nil
	}
	return approx{}, errUnsupported
}

// powFloat is x**y for float64s, nan when not finite.
func powFloat(x, y float64) float64 { return math.Pow(x, y) }

// lanczos are the coefficients of the Lanczos approximation with g = 7, n = 9.
var lanczos = [...]float64{
	0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313,
	-176.61502916214059, 12.507343278686905, -0.13857109526572012,
	9.9843695780195716e-6, 1.5056327351493116e-7,
}

// gammaApprox is the complex Gamma function (reflection formula left of 1/2),
// accurate to about 1e-13 relative.
func gammaApprox(z approx) approx {
	v := gamma(z.v)
	// the derivative is Gamma*digamma; bound digamma by log|z|+2 loosely
	d := cmplx.Abs(v) * (math.Log(2+cmplx.Abs(z.v)) + 2)
	return approx{v: v, err: d*z.err + 1e-13*cmplx.Abs(v)}
}

func gamma(z complex128) complex128 {
	if real(z) < 0.5 {
		return complex(math.Pi, 0) / (cmplx.Sin(complex(math.Pi, 0)*z) * gamma(1-z))
	}
	z--
	x := complex(lanczos[0], 0)
	for i := 1; i < len(lanczos); i++ {
		x += complex(lanczos[i], 0) / (z + complex(float64(i), 0))
	}
	t := z + 7.5
	return complex(math.Sqrt(2*math.Pi), 0) * cmplx.Pow(t, z+0.5) * cmplx.Exp(-t) * x
}
