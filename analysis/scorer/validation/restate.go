package validation

import "strings"

// Restatements are the ways a model restates an answer that a strict scorer
// may not recognise, each in a boxed response unless named otherwise: \dfrac
// for \frac, no spaces (except after a command name), no \left and \right,
// an "x = " prefix, $-wrapped, \text-wrapped, "Answer: \boxed{…}",
// "Answer: $…$" and the answer boxed twice. A restatement that would not
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

// boxedIfChanged is after in a box, or "" when it equals before.
func boxedIfChanged(before, after string) string {
	if after == before {
		return ""
	}
	return `\boxed{` + after + `}`
}
