package scorer

import (
	"math"
	"math/big"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// This file reproduces the few CPython 3.11 behaviours the scorers depend on.

// pyIsSpace reports whether Python's str.isspace() is true for r: the Unicode
// White_Space characters plus the ASCII separators U+001C..U+001F.
func pyIsSpace(r rune) bool {
	if r >= 0x1c && r <= 0x1f {
		return true
	}
	return unicode.IsSpace(r)
}

// pyStrip is Python's str.strip() with no argument.
func pyStrip(s string) string {
	return strings.TrimFunc(s, pyIsSpace)
}

// isASCIISpace is CPython's Py_ISSPACE (used by float() after its Unicode pass).
func isASCIISpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'
}

// decimalValue returns the digit value of a Unicode decimal digit (category Nd),
// or -1. Every Nd range in the Unicode tables is a run of whole 0..9 blocks.
func decimalValue(r rune) int {
	if r >= '0' && r <= '9' {
		return int(r - '0')
	}
	if r < 0x80 || !unicode.Is(unicode.Nd, r) {
		return -1
	}
	for _, rg := range unicode.Nd.R16 {
		if r >= rune(rg.Lo) && r <= rune(rg.Hi) {
			return int(r-rune(rg.Lo)) % 10
		}
	}
	for _, rg := range unicode.Nd.R32 {
		if r >= rune(rg.Lo) && r <= rune(rg.Hi) {
			return int(r-rune(rg.Lo)) % 10
		}
	}
	return -1
}

// pyFloat parses s the way Python's float(s) does: surrounding whitespace
// (Unicode included), any Unicode decimal digits, underscores between digits,
// "inf"/"infinity"/"nan" in any case with an optional sign, decimal and
// exponent forms. ok is false where Python raises ValueError.
func pyFloat(s string) (x float64, ok bool) {
	t, ok := floatText(s)
	if !ok || !pyFloatSyntax(t) {
		return 0, false
	}
	body := strings.TrimLeft(t, "+-")
	switch strings.ToLower(body) {
	case "nan":
		return math.NaN(), true
	case "inf", "infinity":
		if t[0] == '-' {
			return math.Inf(-1), true
		}
		return math.Inf(1), true
	}
	v, err := strconv.ParseFloat(t, 64)
	if err != nil {
		if ne, isNum := err.(*strconv.NumError); !isNum || ne.Err != strconv.ErrRange {
			return 0, false
		}
	}
	return v, true
}

// floatText is the ASCII text float(s) goes on to parse: Unicode whitespace
// becomes ' ' and Unicode decimal digits their ASCII digit, underscores
// between digits go, then surrounding ASCII whitespace is trimmed. ok is
// false for an invalid character or a misplaced underscore. A string of
// ASCII characters (below DEL) without underscores is only trimmed.
func floatText(s string) (string, bool) {
	t := s
	for i := 0; i < len(s); i++ {
		if s[i] >= 127 {
			var ok bool
			if t, ok = asciiDigitsAndSpaces(s); !ok {
				return "", false
			}
			break
		}
	}
	if strings.IndexByte(t, '_') >= 0 {
		var ok bool
		if t, ok = dropUnderscores(t); !ok {
			return "", false
		}
	}
	for len(t) > 0 && isASCIISpace(t[0]) {
		t = t[1:]
	}
	for len(t) > 0 && isASCIISpace(t[len(t)-1]) {
		t = t[:len(t)-1]
	}
	return t, true
}

// asciiDigitsAndSpaces maps Unicode whitespace to ' ' and Unicode decimal
// digits to ASCII digits; ok is false for any other character from DEL up.
func asciiDigitsAndSpaces(s string) (string, bool) {
	buf := make([]byte, 0, len(s))
	for i := 0; i < len(s); {
		r, w := utf8.DecodeRuneInString(s[i:])
		i += w
		switch {
		case r == utf8.RuneError && w == 1:
			return "", false
		case r < 127:
			buf = append(buf, byte(r))
		case pyIsSpace(r):
			buf = append(buf, ' ')
		default:
			d := decimalValue(r)
			if d < 0 {
				return "", false
			}
			buf = append(buf, byte('0'+d))
		}
	}
	return string(buf), true
}

// dropUnderscores removes the underscores of s, each of which must sit
// between two ASCII digits; ok is false otherwise.
func dropUnderscores(s string) (string, bool) {
	clean := make([]byte, 0, len(s))
	prev := byte(0)
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '_' {
			if prev < '0' || prev > '9' {
				return "", false
			}
		} else {
			if prev == '_' && (c < '0' || c > '9') {
				return "", false
			}
			clean = append(clean, c)
		}
		prev = c
	}
	if prev == '_' {
		return "", false
	}
	return string(clean), true
}

// pyFloatSyntax checks the ASCII grammar CPython's float() accepts once
// whitespace and underscores are gone.
func pyFloatSyntax(t string) bool {
	if t != "" && (t[0] == '+' || t[0] == '-') {
		t = t[1:]
	}
	switch strings.ToLower(t) {
	case "inf", "infinity", "nan":
		return true
	}
	i, digits := 0, 0
	for i < len(t) && t[i] >= '0' && t[i] <= '9' {
		i, digits = i+1, digits+1
	}
	if i < len(t) && t[i] == '.' {
		i++
		for i < len(t) && t[i] >= '0' && t[i] <= '9' {
			i, digits = i+1, digits+1
		}
	}
	if digits == 0 {
		return false
	}
	if i < len(t) && (t[i] == 'e' || t[i] == 'E') {
		i++
		if i < len(t) && (t[i] == '+' || t[i] == '-') {
			i++
		}
		exp := 0
		for i < len(t) && t[i] >= '0' && t[i] <= '9' {
			i, exp = i+1, exp+1
		}
		if exp == 0 {
			return false
		}
	}
	return i == len(t)
}

// pyIsNearInt is `abs(x - int(round(x))) <= 1e-7` with Python's exceptions
// (inf and nan raise) read as false.
func pyIsNearInt(x float64) bool {
	if math.IsInf(x, 0) || math.IsNaN(x) {
		return false
	}
	return math.Abs(x-math.RoundToEven(x)) <= 1e-7
}

// pyIntString is str(int(x)) for a finite float: truncation toward zero,
// printed exactly.
func pyIntString(x float64) string {
	if t := math.Trunc(x); math.Abs(t) < 1<<63 {
		return strconv.FormatInt(int64(t), 10)
	}
	i, _ := big.NewFloat(math.Trunc(x)).Int(nil)
	return i.String()
}

// pyFloatRepr is Python's repr(float) (= str(float)): the shortest round-trip
// digits, fixed notation for decimal exponents -4..15 with at least one
// fractional digit, otherwise d.ddde+XX.
func pyFloatRepr(x float64) string {
	switch {
	case math.IsInf(x, 1):
		return "inf"
	case math.IsInf(x, -1):
		return "-inf"
	case math.IsNaN(x):
		return "nan"
	}
	e := strconv.FormatFloat(x, 'e', -1, 64) // [-]d[.ddd]e±XX
	sign := ""
	if e[0] == '-' {
		sign, e = "-", e[1:]
	}
	mant, expPart, _ := strings.Cut(e, "e")
	exp, _ := strconv.Atoi(expPart)
	digits := strings.Replace(mant, ".", "", 1)
	if exp < -4 || exp >= 16 {
		m := digits[:1]
		if len(digits) > 1 {
			m += "." + digits[1:]
		}
		es := "+"
		if exp < 0 {
			es, exp = "-", -exp
		}
		return sign + m + "e" + es + leftPad(strconv.Itoa(exp), 2)
	}
	point := exp + 1 // digits before the decimal point
	var out string
	switch {
	case point <= 0:
		out = "0." + strings.Repeat("0", -point) + digits
	case point >= len(digits):
		out = digits + strings.Repeat("0", point-len(digits)) + ".0"
	default:
		out = digits[:point] + "." + digits[point:]
	}
	return sign + out
}

func leftPad(s string, n int) string {
	for len(s) < n {
		s = "0" + s
	}
	return s
}

// pyIsDigits is Python's str.isdigit(): non-empty and every character has
// Numeric_Type Decimal or Digit.
func pyIsDigits(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if decimalValue(r) < 0 && !isDigitNotDecimal(r) {
			return false
		}
	}
	return true
}

// digitNotDecimal lists the characters with Unicode Numeric_Type=Digit
// (superscripts, subscripts, circled digits, ...), Unicode 14 as in CPython 3.11.
var digitNotDecimal = [][2]rune{
	{0xB2, 0xB3}, {0xB9, 0xB9}, {0x1369, 0x1371}, {0x19DA, 0x19DA}, {0x2070, 0x2070},
	{0x2074, 0x2079}, {0x2080, 0x2089}, {0x2460, 0x2468}, {0x2474, 0x247C}, {0x2488, 0x2490},
	{0x24EA, 0x24EA}, {0x24F5, 0x24FD}, {0x24FF, 0x24FF}, {0x2776, 0x277E}, {0x2780, 0x2788},
	{0x278A, 0x2792}, {0x10A40, 0x10A43}, {0x10E60, 0x10E68}, {0x11052, 0x1105A}, {0x1F100, 0x1F10A},
}

func isDigitNotDecimal(r rune) bool {
	for _, rg := range digitNotDecimal {
		if r >= rg[0] && r <= rg[1] {
			return true
		}
	}
	return false
}

// pyLower is Python's str.lower(): the simple lower-case mapping, plus the two
// context rules CPython applies (U+0130 becomes "i\u0307"; a capital sigma
// that ends a word becomes a final sigma).
func pyLower(s string) string {
	if !hasUpper(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i, r := range s {
		switch {
		case r == 0x130:
			b.WriteString("i\u0307")
		case r == 0x3A3:
			if finalSigma(s, i) {
				b.WriteRune(0x3C2)
			} else {
				b.WriteRune(0x3C3)
			}
		case r == utf8.RuneError:
			if _, w := utf8.DecodeRuneInString(s[i:]); w == 1 {
				b.WriteByte(s[i])
				continue
			}
			b.WriteRune(r)
		default:
			b.WriteRune(unicode.ToLower(r))
		}
	}
	return b.String()
}

func hasUpper(s string) bool {
	for _, r := range s {
		if r >= 'A' && r <= 'Z' || r >= 0x80 && unicode.ToLower(r) != r || r == 0x130 {
			return true
		}
	}
	return false
}

// finalSigma applies the Unicode Final_Sigma condition to the capital sigma at
// byte i: a cased letter before it and none after it (skipping case-ignorable
// characters in both directions).
func finalSigma(s string, i int) bool {
	before := false
	for j := i; j > 0; {
		r, w := utf8.DecodeLastRuneInString(s[:j])
		j -= w
		if caseIgnorable(r) {
			continue
		}
		before = cased(r)
		break
	}
	if !before {
		return false
	}
	for j := i + utf8.RuneLen(0x3A3); j < len(s); {
		r, w := utf8.DecodeRuneInString(s[j:])
		j += w
		if caseIgnorable(r) {
			continue
		}
		return !cased(r)
	}
	return true
}

func cased(r rune) bool {
	return unicode.IsUpper(r) || unicode.IsLower(r) || unicode.IsTitle(r)
}

func caseIgnorable(r rune) bool {
	switch r {
	case '\'', '.', ':', '^', '`', 0xB7, 0x2019, 0x2024, 0x2027:
		return true
	}
	return unicode.In(r, unicode.Mn, unicode.Me, unicode.Cf, unicode.Lm, unicode.Sk)
}

// runeCount is Python's len(s).
func runeCount(s string) int { return utf8.RuneCountInString(s) }

// firstRune and lastRune are Python's s[0] and s[-1] for a non-empty s.
func firstRune(s string) string {
	_, w := utf8.DecodeRuneInString(s)
	return s[:w]
}

func lastRune(s string) string {
	_, w := utf8.DecodeLastRuneInString(s)
	return s[len(s)-w:]
}

// lastRunes is Python's s[-n:].
func lastRunes(s string, n int) string {
	i := len(s)
	for k := 0; k < n && i > 0; k++ {
		_, w := utf8.DecodeLastRuneInString(s[:i])
		i -= w
	}
	return s[i:]
}

// PythonFloat parses s as Python's float(s) would; ok is false where Python
// raises ValueError. It accepts surrounding whitespace, Unicode digits,
// underscores between digits, "inf", "infinity" and "nan".
func PythonFloat(s string) (x float64, ok bool) { return pyFloat(s) }

// PythonStrip is Python's str.strip() with no argument.
func PythonStrip(s string) string { return pyStrip(s) }
