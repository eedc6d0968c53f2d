package verify

import (
	"errors"
	"maps"
	"math"
	"math/big"
	"math/cmplx"
	"time"
)

// ErrDeadline is returned by a call that ran past its deadline.
var ErrDeadline = errors.New("verify: deadline exceeded")

// maxSteps bounds the work of one call (evaluation steps and comparisons):
// past it, what is left is refused like a value too large to compute, so the
// verdict does not depend on the machine's speed.
const maxSteps = 200_000

// budget is one call's work bound and deadline, checked at every step.
type budget struct {
	deadline time.Time
	steps    int
	inSum    int // how many sums are being computed
	sumSteps int // the steps taken computing sums (maxSumSteps)
	bigBits  int // the bits of the factorials and binomials computed (maxBigBits)
}

// maxBigBits bounds the bits of all the factorials and binomial
// coefficients one call computes: each is one step but costs its size (a
// binomial of 10,000 about 1.5 ms), so that a label of a hundred of them is
// refused, not computed for a second.
const maxBigBits = 30_000

// chargeBig counts the bits of the factorial or binomial op is about to
// compute on a: errTooLarge past maxBigBits. Other operators cost nothing
// here, and arguments the operator refuses are left to it.
func (b *budget) chargeBig(op string, a []number) error {
	var lg float64 // the natural logarithm of the result
	switch op {
	case "!":
		n, ok := a[0].isInteger()
		if !ok || n.Sign() < 0 || !n.IsInt64() || n.Int64() > maxFactorial {
			return nil
		}
		lg, _ = math.Lgamma(float64(n.Int64()) + 1)
	case "binom":
		n, ok1 := a[0].isInteger()
		k, ok2 := a[1].isInteger()
		if !ok1 || !ok2 || n.Sign() < 0 || !n.IsInt64() || n.Int64() > maxBinomial || k.Sign() < 0 || k.Cmp(n) > 0 {
			return nil
		}
		nf, kf := float64(n.Int64()), float64(k.Int64())
		ln, _ := math.Lgamma(nf + 1)
		lk, _ := math.Lgamma(kf + 1)
		lr, _ := math.Lgamma(nf - kf + 1)
		lg = ln - lk - lr
	default:
		return nil
	}
	if b.bigBits += int(lg/math.Ln2) + 1; b.bigBits > maxBigBits {
		return errTooLarge
	}
	return nil
}

// check counts a step: errTooLarge past maxSteps, ErrDeadline past the
// deadline (read every 32 steps).
func (b *budget) check() error {
	if b.steps++; b.steps > maxSteps {
		return errTooLarge
	}
	if b.inSum > 0 {
		if b.sumSteps++; b.sumSteps > maxSumSteps {
			return errTooLarge
		}
	}
	if b.steps%32 == 0 && time.Now().After(b.deadline) {
		return ErrDeadline
	}
	return nil
}

// eval computes n with the variables of env.
func eval(n *node, env map[string]number, bud *budget) (number, error) {
	if err := bud.check(); err != nil {
		return number{}, err
	}
	switch n.op {
	case "num":
		return rational(n.num), nil
	case "var":
		v, ok := env[n.name]
		if !ok {
			return number{}, errors.New("unbound variable " + n.name)
		}
		return v, nil
	case "i":
		return exactNumber(new(big.Rat), big.NewRat(1, 1))
	case "pi":
		return inexact(math.Pi)
	case "sum", "prod":
		return evalSum(n, env, bud)
	case "seq":
		return evalSequence(n, env, bud)
	}
	args := make([]number, len(n.args))
	for k, a := range n.args {
		v, err := eval(a, env, bud)
		if err != nil {
			return number{}, err
		}
		args[k] = v
	}
	if err := bud.chargeBig(n.op, args); err != nil {
		return number{}, err
	}
	if bud.inSum > 0 {
		return applyInSum(n.op, args, bud)
	}
	return apply(n.op, args)
}

// apply computes operator op on its evaluated arguments.
func apply(op string, a []number) (number, error) {
	switch op {
	case "+":
		return add(a[0], a[1])
	case "*":
		return mul(a[0], a[1])
	case "/":
		return div(a[0], a[1])
	case "neg":
		return neg(a[0]), nil
	case "^":
		return power(a[0], a[1])
	case "!":
		return factorial(a[0])
	case "binom":
		return binomial(a[0], a[1])
	case "sqrt":
		return squareRoot(a[0])
	case "root":
		inv, err := div(integer(1), a[1])
		if err != nil {
			return number{}, err
		}
		return power(a[0], inv)
	case "abs":
		if a[0].exact && a[0].im.Sign() == 0 {
			return rational(new(big.Rat).Abs(a[0].re)), nil
		}
		return inexact(complex(cmplx.Abs(a[0].approx()), 0))
	}
	return applyFunction(op, a[0])
}

// applyFunction computes an elementary function in floating point (exactly
// for ln 1, exp 0 and the like is not attempted: both sides go the same way).
func applyFunction(name string, x number) (number, error) {
	f := map[string]func(complex128) complex128{
		"sin": cmplx.Sin, "cos": cmplx.Cos, "tan": cmplx.Tan,
		"sec":    func(z complex128) complex128 { return 1 / cmplx.Cos(z) },
		"csc":    func(z complex128) complex128 { return 1 / cmplx.Sin(z) },
		"cot":    func(z complex128) complex128 { return 1 / cmplx.Tan(z) },
		"arcsin": cmplx.Asin, "arccos": cmplx.Acos, "arctan": cmplx.Atan,
		"sinh": cmplx.Sinh, "cosh": cmplx.Cosh, "tanh": cmplx.Tanh,
		"ln": cmplx.Log, "log": cmplx.Log10, "lg": cmplx.Log10, "exp": cmplx.Exp,
	}[name]
	if f == nil {
		return number{}, errors.New("unknown function " + name)
	}
	z := x.approx()
	if cmplx.Abs(z) > 1e6 {
		return number{}, errTooLarge
	}
	return inexact(f(z))
}

// variables lists the variable names of n: its free variables (a sum's
// index is bound in its summand) and, as F(), each sequence F it names.
func variables(n *node, into map[string]bool) {
	switch n.op {
	case "var":
		into[n.name] = true
	case "seq":
		into[n.name+"()"] = true
	case "sum", "prod":
		variables(n.args[0], into)
		variables(n.args[1], into)
		inner := map[string]bool{}
		variables(n.args[2], inner)
		delete(inner, n.name)
		maps.Copy(into, inner)
		return
	}
	for _, a := range n.args {
		variables(a, into)
	}
}
