package symbolic

import (
	"errors"
	"regexp"
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

var (
	repeatedExponent = regexp.MustCompile(`\^[0-9]+\^`)
	longExponent     = regexp.MustCompile(`\^[0-9][0-9]+`)
)

// Allowed reports whether slime's should_allow_eval lets expr reach sympy:
// at most two distinct letters once "sqrt" and "frac" are deleted, no "^{" or
// "^(", no repeated exponent (^2^3) and no exponent of two or more digits.
func Allowed(expr string) bool {
	letters := map[rune]bool{}
	for _, r := range strings.ReplaceAll(strings.ReplaceAll(expr, "sqrt", ""), "frac", "") {
		if unicode.IsLetter(r) {
			letters[r] = true
		}
	}
	if len(letters) > 2 {
		return false
	}
	if strings.Contains(expr, "^{") || strings.Contains(expr, "^(") {
		return false
	}
	return !repeatedExponent.MatchString(expr) && !longExponent.MatchString(expr)
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
