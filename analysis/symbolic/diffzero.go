package symbolic

import (
	"errors"
	"strings"
	"time"
	"unicode"
)

// DefaultTimeout is the deadline DiffIsZero gives each call.
const DefaultTimeout = time.Second

// errDeadline is returned when a call runs past its deadline.
var errDeadline = errors.New("symbolic: deadline exceeded")

// DiffIsZero reports whether slime's sympy_diff_is_zero(a, b) is true: the
// string "(a)-(b)" passes the guards (see Allowed), parses as sympy's
// parse_expr with implicit multiplication would parse it, and the difference
// simplifies to 0. It gives up (false) after DefaultTimeout.
func DiffIsZero(a, b string) bool { return DiffIsZeroWithin(a, b, DefaultTimeout) }

// DiffIsZeroWithin is DiffIsZero with a deadline d for this call; past it the
// answer is false. It never panics.
func DiffIsZeroWithin(a, b string, d time.Duration) (equal bool) {
	defer func() {
		if recover() != nil {
			equal = false
		}
	}()
	ok, err := diffIsZero(a, b, newBudget(d))
	return ok && err == nil
}

// diffIsZero is DiffIsZero with the reason for a false answer.
func diffIsZero(a, b string, bud *budget) (bool, error) {
	if err := bud.checkNow(); err != nil {
		return false, err
	}
	if equal, ok := plainIntegers(a, b); ok {
		return equal, nil
	}
	return parsedDiffIsZero(a, b, bud)
}

// parsedDiffIsZero is diffIsZero without the plainIntegers shortcut: guards,
// parse, fold, then the numeric check.
func parsedDiffIsZero(a, b string, bud *budget) (bool, error) {
	expr := "(" + a + ")-(" + b + ")"
	if !Allowed(expr) {
		return false, nil
	}
	tree, err := parse(strings.ReplaceAll(expr, "^", "**"), bud)
	if err != nil {
		return false, err
	}
	folded, err := fold(tree, bud)
	if err != nil {
		return false, err
	}
	if folded.kind != nNum && hasFloat(folded) {
		if folded, err = expandCoefficients(bud, folded); err != nil {
			return false, err
		}
	}
	if folded.kind == nNum {
		return folded.num.isZero(), nil
	}
	return numericZero(folded, bud)
}

// plainIntegers answers DiffIsZero without parsing when a and b are both
// canonical decimal integers of at most 18 digits ("0", "42", "-7"; not "007",
// "-0" or "+1"): sympy reads (a)-(b) as an Integer, zero exactly when the two
// strings are equal. ok is false for any other pair. Most pairs the scorers
// send here are of this kind.
func plainIntegers(a, b string) (equal, ok bool) {
	if !canonicalInt(a) || !canonicalInt(b) {
		return false, false
	}
	return a == b, true
}

// canonicalInt reports whether s is "0" or an optional '-' then 1 to 18 ASCII
// digits with no leading zero.
func canonicalInt(s string) bool {
	d := strings.TrimPrefix(s, "-")
	if d == "" || len(d) > 18 || d[0] < '1' || d[0] > '9' {
		return s == "0"
	}
	for i := 1; i < len(d); i++ {
		if d[i] < '0' || d[i] > '9' {
			return false
		}
	}
	return true
}

// Allowed reports whether slime's should_allow_eval lets expr reach sympy:
// at most two distinct letters once "sqrt" and "frac" are deleted, no "^{" or
// "^(", no repeated exponent (^2^3, slime's regex \^[0-9]+\^) and no exponent
// of two or more digits (\^[0-9][0-9]+).
func Allowed(expr string) bool {
	var letters [2]rune
	n := 0
	for _, r := range strings.ReplaceAll(strings.ReplaceAll(expr, "sqrt", ""), "frac", "") {
		if !unicode.IsLetter(r) || n > 0 && letters[0] == r || n > 1 && letters[1] == r {
			continue
		}
		if n == 2 {
			return false
		}
		letters[n] = r
		n++
	}
	if strings.Contains(expr, "^{") || strings.Contains(expr, "^(") {
		return false
	}
	for i := 0; i < len(expr); i++ {
		if expr[i] != '^' {
			continue
		}
		j := i + 1
		for j < len(expr) && expr[j] >= '0' && expr[j] <= '9' {
			j++
		}
		if digits := j - i - 1; digits >= 2 || digits == 1 && j < len(expr) && expr[j] == '^' {
			return false
		}
	}
	return true
}

// budget is the deadline of one call, checked at every step of the work.
type budget struct {
	deadline time.Time
	steps    int
}

func newBudget(d time.Duration) *budget { return &budget{deadline: time.Now().Add(d)} }

// check returns errDeadline once the deadline has passed; it reads the clock
// every 16 steps.
func (b *budget) check() error {
	b.steps++
	if b.steps%16 == 0 {
		return b.checkNow()
	}
	return nil
}

// checkNow returns errDeadline once the deadline has passed.
func (b *budget) checkNow() error {
	if time.Now().After(b.deadline) {
		return errDeadline
	}
	return nil
}
