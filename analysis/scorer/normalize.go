package scorer

import (
	"math"
	"regexp"
	"strings"
	"unicode/utf8"

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
	// goodCommaRe is `(\d)(,)(\d\d\d)($|\D)` with Python's Unicode \d.
	goodCommaRe = regexp.MustCompile(`(\p{Nd})(,)(\p{Nd}\p{Nd}\p{Nd})($|\P{Nd})`)
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
	if m, ok := unwrapText(expr); ok {
		expr = m
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
	if strings.Contains(expr, `\circ`) {
		expr = circRe.ReplaceAllString(expr, "")
	}
	if len(expr) > 0 && expr[0] == '{' && expr[len(expr)-1] == '}' {
		expr = expr[1 : len(expr)-1]
	}
	if strings.Contains(expr, `,\!`) {
		expr = commaBangRe.ReplaceAllString(expr, "")
	}
	if x, ok := pyFloat(expr); ok && pyIsNearInt(x) {
		expr = pyIntString(math.RoundToEven(x))
	}
	if strings.Contains(expr, `\`) {
		expr = latexToText(expr)
	}
	expr = dropSpacesAfterDash(expr)
	expr = injectMixedNumbers(expr)
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

// dropSpacesAfterDash is slime's re.sub("- *", "-", s): the spaces after
// every '-' go.
func dropSpacesAfterDash(s string) string {
	if !strings.Contains(s, "- ") {
		return s
	}
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		b = append(b, s[i])
		if s[i] == '-' {
			for i+1 < len(s) && s[i+1] == ' ' {
				i++
			}
		}
	}
	return string(b)
}

// injectMixedNumbers is slime's _inject_implicit_mixed_number, the regex
// substitution ([0-9]) +([0-9]) -> \1+\2 ("7 3/4" -> "7+3/4"): matches do not
// overlap, so "1 2 3" becomes "1+2 3".
func injectMixedNumbers(s string) string {
	if !strings.Contains(s, " ") {
		return s
	}
	var b []byte
	last := 0
	for i := 0; i < len(s); i++ {
		if !isASCIIDigit(s[i]) {
			continue
		}
		j := i + 1
		for j < len(s) && s[j] == ' ' {
			j++
		}
		if j > i+1 && j < len(s) && isASCIIDigit(s[j]) {
			b = append(b, s[last:i+1]...)
			b = append(b, '+', s[j])
			i, last = j, j+1
		}
	}
	if b == nil {
		return s
	}
	return string(append(b, s[last:]...))
}

func isASCIIDigit(c byte) bool { return c >= '0' && c <= '9' }

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
// after a and after b. It matches slime's regex ^-?[0-9]+.?/0*[1-9][0-9]*.?$
// by hand: after an optional '-' and the run of digits, the '/' comes next or
// after one character other than a newline.
func isFrac(s string) bool {
	s = strings.TrimPrefix(s, "-")
	k := 0
	for k < len(s) && isASCIIDigit(s[k]) {
		k++
	}
	if k == 0 || k == len(s) {
		return false
	}
	if s[k] == '/' && fracDenominator(s[k+1:]) {
		return true
	}
	r, w := utf8.DecodeRuneInString(s[k:])
	return r != '\n' && k+w < len(s) && s[k+w] == '/' && fracDenominator(s[k+w+1:])
}

// fracDenominator matches what follows the '/' in isFrac's regex:
// 0*[1-9][0-9]*.?$, where Python's $ also matches before a final newline.
func fracDenominator(t string) bool {
	i := 0
	for i < len(t) && t[i] == '0' {
		i++
	}
	if i == len(t) || t[i] < '1' || t[i] > '9' {
		return false
	}
	i++
	for i < len(t) && isASCIIDigit(t[i]) {
		i++
	}
	rest := t[i:]
	if rest == "" || rest == "\n" {
		return true
	}
	r, w := utf8.DecodeRuneInString(rest)
	return r != '\n' && (len(rest) == w || rest[w:] == "\n")
}

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
