package scorer

import (
	"math"
	"regexp"
	"strings"

	"github.com/mathrl/mathrl/analysis/latextext"
	"github.com/mathrl/mathrl/analysis/symbolic"
)

// unitNames are the words the sympy-path normaliser deletes, in slime's order.
var unitNames = []string{"degree", "cm", "centimeter", "meter", "mile", "second", "minute", "hour",
	"day", "week", "month", "year", "foot", "feet", "inch", "yard"}

var (
	// unitRes[i] is `<unit>(es)?(s)? *(\^[0-9]+)?` for unitNames[i].
	unitRes = func() []*regexp.Regexp {
		res := make([]*regexp.Regexp, len(unitNames))
		for i, u := range unitNames {
			res[i] = regexp.MustCompile(u + `(es)?(s)? *(\^[0-9]+)?`)
		}
		return res
	}()
	circRe      = regexp.MustCompile(`\^ *\\circ`)
	commaBangRe = regexp.MustCompile(`,\\! *`)
	dashRe      = regexp.MustCompile(`- *`)
	mixedRe     = regexp.MustCompile(`([0-9]) +([0-9])`)
	// goodCommaRe is `(\d)(,)(\d\d\d)($|\D)` with Python's Unicode \d.
	goodCommaRe = regexp.MustCompile(`(\p{Nd})(,)(\p{Nd}\p{Nd}\p{Nd})($|\P{Nd})`)
	// fracRe is `^-?[0-9]+.?/0*[1-9][0-9]*.?$` with Python's `$`.
	fracRe = regexp.MustCompile(`^-?[0-9]+.?/0*[1-9][0-9]*.?\n?$`)
)

// Normalize is slime's second answer normaliser (math_utils._normalize, the
// one in front of sympy), step by step: unwrap a whole-string \text{...}; drop
// \%, \$, $ and %; " or "/" and " become " , "; million/billion/trillion become
// *10^6/^9/^12; unit words are deleted anywhere (Monday -> Mon); ^\circ goes;
// one outer {...} pair goes; ",\!" goes; a string Python's float() reads as
// (within 1e-7 of) an integer becomes that integer; a string with a backslash
// goes through LaTeX-to-text; "- " -> "-"; "7 3/4" -> "7+3/4"; spaces and braces
// are deleted; lower case; an integer-looking string becomes str(int(float(s))).
func Normalize(expr string) string {
	if m := textWrapRe.FindStringSubmatch(expr); m != nil {
		expr = m[1]
	}
	expr = strings.ReplaceAll(expr, `\%`, "%")
	expr = strings.ReplaceAll(expr, `\$`, "$")
	expr = strings.ReplaceAll(expr, "$", "")
	expr = strings.ReplaceAll(expr, "%", "")
	expr = strings.ReplaceAll(expr, " or ", " , ")
	expr = strings.ReplaceAll(expr, " and ", " , ")
	expr = strings.ReplaceAll(expr, "million", "*10^6")
	expr = strings.ReplaceAll(expr, "billion", "*10^9")
	expr = strings.ReplaceAll(expr, "trillion", "*10^12")
	for i, u := range unitNames {
		if strings.Contains(expr, u) {
			expr = unitRes[i].ReplaceAllString(expr, "")
		}
	}
	expr = circRe.ReplaceAllString(expr, "")
	if len(expr) > 0 && expr[0] == '{' && expr[len(expr)-1] == '}' {
		expr = expr[1 : len(expr)-1]
	}
	expr = commaBangRe.ReplaceAllString(expr, "")
	if x, ok := pyFloat(expr); ok && pyIsNearInt(x) {
		expr = pyIntString(math.RoundToEven(x))
	}
	if strings.Contains(expr, `\`) {
		expr = latexToText(expr)
	}
	expr = dashRe.ReplaceAllString(expr, "-")
	expr = mixedRe.ReplaceAllString(expr, "${1}+${2}")
	expr = strings.ReplaceAll(expr, " ", "")
	expr = strings.ReplaceAll(expr, "{", "")
	expr = strings.ReplaceAll(expr, "}", "")
	expr = pyLower(expr)
	if strIsInt(expr) {
		x, _ := pyFloat(strings.ReplaceAll(expr, ",", ""))
		expr = pyIntString(x)
	}
	return expr
}

// latexToText is slime's _parse_latex: \tfrac and \dfrac become \frac, a space
// goes before every \frac, pylatexenc's latex_to_text runs, then √ π ∞ ∪ · ×
// become sqrt pi inf U * * and the result is stripped. On a conversion error
// the input is returned unchanged.
func latexToText(expr string) string {
	s := strings.ReplaceAll(expr, `\tfrac`, `\frac`)
	s = strings.ReplaceAll(s, `\dfrac`, `\frac`)
	s = strings.ReplaceAll(s, `\frac`, ` \frac`)
	s, err := latextext.ToText(s)
	if err != nil {
		return expr
	}
	s = strings.ReplaceAll(s, "√", "sqrt")
	s = strings.ReplaceAll(s, "π", "pi")
	s = strings.ReplaceAll(s, "∞", "inf")
	s = strings.ReplaceAll(s, "∪", "U")
	s = strings.ReplaceAll(s, "·", "*")
	s = strings.ReplaceAll(s, "×", "*")
	return pyStrip(s)
}

// stripGoodCommas removes thousands separators ("1,000,000" -> "1000000")
// until nothing changes, leaving tuple commas alone.
func stripGoodCommas(s string) string {
	if !strings.Contains(s, ",") {
		return s
	}
	for {
		next := goodCommaRe.ReplaceAllString(s, "${1}${3}${4}")
		if next == s {
			return s
		}
		s = next
	}
}

// strIsInt is _str_is_int: thousands separators removed, Python float(), within 1e-7 of an integer.
func strIsInt(s string) bool {
	x, ok := pyFloat(stripGoodCommas(s))
	return ok && pyIsNearInt(x)
}

// isFrac is _is_frac: an integer fraction a/b, one arbitrary character allowed
// after a and after b.
func isFrac(s string) bool { return fracRe.MatchString(s) }

// splitTuple is split_tuple: after removing thousands separators, a string of
// more than two characters wrapped in one pair of ()[] with no other ()[]
// inside is split on commas (elements stripped); anything else is one element.
func splitTuple(s string) []string {
	s = stripGoodCommas(s)
	if s == "" {
		return nil
	}
	if runeCount(s) > 2 && strings.ContainsAny(s[:1], "()[]") && strings.ContainsAny(s[len(s)-1:], "()[]") &&
		!strings.ContainsAny(s[1:len(s)-1], "()[]") {
		elems := strings.Split(s[1:len(s)-1], ",")
		for i, e := range elems {
			elems[i] = pyStrip(e)
		}
		return elems
	}
	return []string{s}
}

// sympyEqual is grade_answer_sympy: equal normalised strings (even both empty)
// are equal; otherwise the elements of both sides are compared in order:
// bracket types must match for a multi-element truth, fractions a/b are
// compared as strings, an integer never equals a non-integer, and everything
// else goes to the symbolic check (symbolic.DiffIsZero).
func sympyEqual(given, truth string) bool {
	gt, g := Normalize(truth), Normalize(given)
	if gt == g {
		return true
	}
	if g == "" {
		return false
	}
	gtElems, gElems := splitTuple(gt), splitTuple(g)
	if len(gtElems) > 1 && (firstRune(gt) != firstRune(g) || lastRune(gt) != lastRune(g)) {
		return false
	}
	if len(gtElems) != len(gElems) {
		return false
	}
	for i, a := range gtElems {
		b := gElems[i]
		switch {
		case isFrac(a) && isFrac(b):
			if a != b {
				return false
			}
		case strIsInt(a) != strIsInt(b):
			return false
		default:
			if !symbolic.DiffIsZero(a, b) {
				return false
			}
		}
	}
	return true
}
