package validation

import (
	"math/big"
	"regexp"
	"slices"
	"strings"
)

// Restatements are the ways a model restates an answer that a strict scorer
// may not recognise, each in a boxed response unless named otherwise: \dfrac
// for \frac, no spaces (except after a command name), no \left and \right,
// an "x = " prefix, $-wrapped, \text-wrapped, "Answer: \boxed{…}",
// "Answer: $…$", the answer boxed twice; and restatements of the value: a
// \frac{p}{q} as p/q or as its decimal when that ends, a list in reverse
// order, an interval [a, b) as a \le x < b. A restatement that would not
// change the answer, or would change its meaning (an "x = " before an
// equation, a list or text; \text around text), does not apply.
var Restatements = []Template{
	{"dfrac", func(a string) string { return boxedIfChanged(a, strings.ReplaceAll(a, `\frac`, `\dfrac`)) }},
	{"no spaces", func(a string) string { return boxedIfChanged(a, withoutSpaces(a)) }},
	{"no left/right", func(a string) string {
		return boxedIfChanged(a, strings.NewReplacer(`\left`, "", `\right`, "").Replace(a))
	}},
	{"x = prefix", func(a string) string {
		if strings.ContainsAny(a, "=<>,\n") || strings.Contains(a, `\le`) || strings.Contains(a, `\ge`) ||
			strings.Contains(a, `\text`) {
			return ""
		}
		return `\boxed{x = ` + a + `}`
	}},
	{"$-wrapped", func(a string) string { return `\boxed{$` + a + `$}` }},
	{"text-wrapped", func(a string) string {
		if strings.Contains(a, `\text`) {
			return ""
		}
		return `\boxed{\text{` + a + `}}`
	}},
	{"Answer: boxed", func(a string) string { return intro + "Answer: \\boxed{" + a + "}" }},
	{"Answer: $", func(a string) string { return intro + "Answer: $" + a + "$" }},
	{"two boxes", func(a string) string {
		return intro + "First we find \\boxed{" + a + "}.\n\nChecking again, the answer is \\boxed{" + a + "}."
	}},
	{"slash fraction", func(a string) string {
		sign, p, q, ok := wholeFraction(a)
		if !ok {
			return ""
		}
		return `\boxed{` + sign + p + "/" + q + `}`
	}},
	{"decimal", func(a string) string {
		if d, ok := terminatingDecimal(a); ok {
			return `\boxed{` + d + `}`
		}
		return ""
	}},
	{"reversed list", func(a string) string {
		parts := strings.Split(a, ", ")
		if len(parts) < 2 || strings.ContainsAny(a, "()[]{}=") {
			return ""
		}
		slices.Reverse(parts)
		return boxedIfChanged(a, strings.Join(parts, ", "))
	}},
	{"inequality", func(a string) string {
		m := finiteInterval.FindStringSubmatch(a)
		if m == nil {
			return ""
		}
		rel := map[string]string{"[": `\le`, "(": "<", "]": `\le`, ")": "<"}
		return `\boxed{` + m[2] + " " + rel[m[1]] + " x " + rel[m[4]] + " " + m[3] + `}`
	}},
}

var (
	// simpleFrac is \frac{p}{q} of two natural numbers.
	simpleFrac = regexp.MustCompile(`\\frac\{(\d+)\}\{(\d+)\}`)
	// finiteInterval is an interval with numeric endpoints: [a, b), (a, b].
	finiteInterval = regexp.MustCompile(`^([\[(])\s*(-?\d+)\s*,\s*(-?\d+)\s*([\])])$`)
)

// wholeFraction splits an answer that is \frac{p}{q} of natural numbers,
// optionally negative, into its sign and parts.
func wholeFraction(a string) (sign, p, q string, ok bool) {
	body := strings.TrimSpace(a)
	if rest, neg := strings.CutPrefix(body, "-"); neg {
		sign, body = "-", rest
	}
	m := simpleFrac.FindStringSubmatch(body)
	if m == nil || m[0] != body {
		return "", "", "", false
	}
	return sign, m[1], m[2], true
}

// terminatingDecimal writes an answer \frac{p}{q} (or -\frac{p}{q}) whose
// value is not an integer and has a finite decimal expansion as that decimal.
func terminatingDecimal(a string) (string, bool) {
	sign, p, q, ok := wholeFraction(a)
	if !ok {
		return "", false
	}
	r, ok := new(big.Rat).SetString(p + "/" + q)
	if !ok || r.IsInt() {
		return "", false
	}
	rest := new(big.Int).Set(r.Denom())
	digits := 0
	for _, f := range []int64{2, 5} {
		for new(big.Int).Mod(rest, big.NewInt(f)).Sign() == 0 {
			rest.Div(rest, big.NewInt(f))
			digits++
		}
	}
	if rest.Cmp(big.NewInt(1)) != 0 {
		return "", false
	}
	return sign + r.FloatString(digits), true
}

// boxedIfChanged is after in a box, or "" when it equals before.
func boxedIfChanged(before, after string) string {
	if after == before {
		return ""
	}
	return `\boxed{` + after + `}`
}

// withoutSpaces removes the spaces of a, except one that ends a command name
// before a letter (removing the space in "\pi r" would make "\pir").
func withoutSpaces(a string) string {
	var b strings.Builder
	for i := 0; i < len(a); i++ {
		if a[i] == '\\' && i+1 < len(a) && a[i+1] == ' ' { // a control space is a command
			b.WriteString(`\ `)
			i++
			continue
		}
		if a[i] != ' ' && a[i] != '\n' && a[i] != '\t' {
			b.WriteByte(a[i])
			continue
		}
		if endsCommand(b.String()) && i+1 < len(a) && isLetter(a[i+1]) {
			b.WriteByte(' ')
		}
	}
	return b.String()
}

// endsCommand reports whether s ends with a command name (\ and letters).
func endsCommand(s string) bool {
	j := len(s)
	for j > 0 && isLetter(s[j-1]) {
		j--
	}
	return j < len(s) && j > 0 && s[j-1] == '\\'
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
