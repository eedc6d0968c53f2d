package scorer

import (
	"regexp"
	"strings"
	"unicode/utf8"
)

// textWrapRe is `^\\text\{(?P<text>.+?)\}$` with Python's `$`, which also
// matches before a final newline.
var textWrapRe = regexp.MustCompile(`^\\text\{(.+?)\}\n?$`)

// MathdNormalize is Dan Hendrycks' MATH answer normaliser as slime runs it
// (mathd_normalize_answer): strip, unwrap a whole-string \text{...}, then the
// strip_string steps in their original order. Where strip_string would raise
// (a `\text{ ` split into more than two pieces, a `\sqrt` or `\frac` at the very
// end) the string is returned as it was after the \text{} unwrapping.
func MathdNormalize(answer string) string {
	answer = pyStrip(answer)
	if m, ok := unwrapText(answer); ok {
		answer = pyStrip(m)
	}
	if s, ok := stripString(answer); ok {
		return s
	}
	return answer
}

// unwrapText returns the text inside a whole-string \text{...} (textWrapRe's
// group) and true, or false when s is not one.
func unwrapText(s string) (string, bool) {
	if !strings.HasPrefix(s, `\text{`) {
		return "", false
	}
	m := textWrapRe.FindStringSubmatch(s)
	if m == nil {
		return "", false
	}
	return m[1], true
}

// mathdEqual is grade_answer_mathd: both sides through MathdNormalize, then ==.
// Identical strings normalise alike, so they are not normalised.
func mathdEqual(given, truth string) bool {
	return given == truth || MathdNormalize(truth) == MathdNormalize(given)
}

// stripString is Hendrycks' _strip_string; ok is false where Python raises.
func stripString(s string) (string, bool) {
	var ok bool
	s = strings.ReplaceAll(s, "\n", "")
	// Each step up to the \% one deletes or rewrites a backslash sequence, except
	// tfrac and dfrac, and none makes a backslash: without one they are no-ops.
	if !strings.Contains(s, `\`) {
		s = strings.ReplaceAll(s, "tfrac", "frac")
		s = strings.ReplaceAll(s, "dfrac", "frac")
	} else if s, ok = stripBackslashForms(s); !ok {
		return "", false
	}
	s = strings.ReplaceAll(s, " .", " 0.")
	s = strings.ReplaceAll(s, "{.", "{0.")
	if s == "" {
		return s, true
	}
	if s[0] == '.' {
		s = "0" + s
	}
	if left, right, ok := strings.Cut(s, "="); ok && !strings.Contains(right, "=") && runeCount(left) <= 2 {
		s = right
	}
	s, ok = fixSqrt(s)
	if !ok {
		return "", false
	}
	s = strings.ReplaceAll(s, " ", "")
	s, ok = fixFracs(s)
	if !ok {
		return "", false
	}
	if s == "0.5" {
		s = `\frac{1}{2}`
	}
	return fixASlashB(s), true
}

// stripBackslashForms is _strip_string's steps from "\\!" to "\\%": delete
// \!, \\ -> \, tfrac and dfrac -> frac, delete \left, \right, ^{\circ},
// ^\circ and \$, cut the string at "\text{ " (ok is false where that does not
// give exactly two pieces), delete \%.
func stripBackslashForms(s string) (string, bool) {
	s = strings.ReplaceAll(s, `\!`, "")
	s = strings.ReplaceAll(s, `\\`, `\`)
	s = strings.ReplaceAll(s, "tfrac", "frac")
	s = strings.ReplaceAll(s, "dfrac", "frac")
	s = strings.ReplaceAll(s, `\left`, "")
	s = strings.ReplaceAll(s, `\right`, "")
	s = strings.ReplaceAll(s, `^{\circ}`, "")
	s = strings.ReplaceAll(s, `^\circ`, "")
	s = strings.ReplaceAll(s, `\$`, "")
	// Units on the right: "\text{ " must split the string into exactly two pieces.
	if strings.Contains(s, `\text{ `) {
		parts := strings.Split(s, `\text{ `)
		if len(parts) != 2 {
			return "", false
		}
		s = parts[0]
	}
	return strings.ReplaceAll(s, `\%`, ""), true
}

// fixSqrt wraps the single character after a brace-less \sqrt in braces
// (\sqrt3 -> \sqrt{3}, \sqrt13 -> \sqrt{1}3); ok is false when a \sqrt ends the string.
func fixSqrt(s string) (string, bool) {
	if !strings.Contains(s, `\sqrt`) {
		return s, true
	}
	parts := strings.Split(s, `\sqrt`)
	var b strings.Builder
	b.WriteString(parts[0])
	for _, p := range parts[1:] {
		if p == "" {
			return "", false
		}
		if p[0] != '{' {
			_, w := utf8.DecodeRuneInString(p)
			b.WriteString(`\sqrt{` + p[:w] + "}" + p[w:])
		} else {
			b.WriteString(`\sqrt` + p)
		}
	}
	return b.String(), true
}

// fixFracs rewrites brace-less \frac shorthand (\frac12 -> \frac{1}{2},
// \frac1{72} -> \frac{1}{72}). A piece shorter than two characters returns the
// input unchanged; ok is false when a \frac ends the string.
func fixFracs(s string) (string, bool) {
	if !strings.Contains(s, `\frac`) {
		return s, true
	}
	parts := strings.Split(s, `\frac`)
	var b strings.Builder
	b.WriteString(parts[0])
	for _, p := range parts[1:] {
		b.WriteString(`\frac`)
		if p == "" {
			return "", false
		}
		if p[0] == '{' {
			b.WriteString(p)
			continue
		}
		if runeCount(p) < 2 {
			return s, true
		}
		_, wa := utf8.DecodeRuneInString(p)
		_, wb := utf8.DecodeRuneInString(p[wa:])
		a, c, rest := p[:wa], p[wa:wa+wb], p[wa+wb:]
		if c != "{" {
			b.WriteString("{" + a + "}{" + c + "}" + rest)
		} else {
			b.WriteString("{" + a + "}" + c + rest)
		}
	}
	return b.String(), true
}

// pyMaxIntDigits is CPython 3.11's default limit on int(str) digits.
const pyMaxIntDigits = 4300

// fixASlashB turns a canonical "a/b" (both Python ints, printed back
// identically) into \frac{a}{b}.
func fixASlashB(s string) string {
	a, b, ok := strings.Cut(s, "/")
	if !ok || strings.Contains(b, "/") || !canonicalInt(a) || !canonicalInt(b) {
		return s
	}
	return `\frac{` + a + "}{" + b + "}"
}

// canonicalInt reports whether s == str(int(s)) in Python 3.11.
func canonicalInt(s string) bool {
	d := strings.TrimPrefix(s, "-")
	if d == "" || len(d) > pyMaxIntDigits || (d[0] == '0' && (len(d) > 1 || s[0] == '-')) {
		return false
	}
	for i := 0; i < len(d); i++ {
		if d[i] < '0' || d[i] > '9' {
			return false
		}
	}
	return true
}
