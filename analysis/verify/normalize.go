package verify

import (
	"regexp"
	"strings"
)

// decorations are removed or rewritten before an answer is read (see the
// package doc, Normal form). Longer names come before their prefixes.
var decorations = strings.NewReplacer(
	`\\`, `\\`, `\left.`, "", `\right.`, "", `\rightarrow`, `\to`, `\leftarrow`, `\gets`,
	`\left`, "", `\right`, "",
	`\bigl`, "", `\bigr`, "", `\Bigl`, "", `\Bigr`, "", `\biggl`, "", `\biggr`, "",
	`\bigg`, "", `\Bigg`, "", `\big`, "", `\Big`, "",
	`\displaystyle`, "", `\textstyle`, "",
	`\dfrac`, `\frac`, `\tfrac`, `\frac`, `\cfrac`, `\frac`, `\dbinom`, `\binom`, `\tbinom`, `\binom`,
	`,\! `, ",", `,\!`, ",", `\qquad`, " ", `\quad`, " ", `\,`, " ", `\;`, " ", `\:`, " ", `\!`, "", `\ `, " ", "~", " ",
	`{,}`, "", `{, }`, "",
	`^{\circ}`, "", `^\circ`, "", `^{\circ }`, "", "°", "", `\degree`, "", `^{\prime}`, "'",
	`\leqslant`, `\le`, `\geqslant`, `\ge`, `\leq`, `\le`, `\geq`, `\ge`, "≤", `\le`, "≥", `\ge`,
	`\neq`, `\ne`, "≠", `\ne`, "!=", `\ne`, ">=", `\ge`, "<=", `\le`, `\lt`, "<", `\gt`, ">", "≈", `\approx`,
	`\infin`, `\infty`, "∞", `\infty`, "π", `\pi`, "√", `\sqrt`, "−", "-", "×", `\times`,
	`\lbrace`, `\{`, `\rbrace`, `\}`, `\lvert`, "|", `\rvert`, "|", `\vert`, "|", `\mid`, "|",
	`\mathbf`, `\text`, `\textbf`, `\text`, `\mathrm`, `\text`, `\textrm`, `\text`,
	`\mbox`, `\text`, `\textit`, `\text`, `\mathit`, `\text`, `\operatorname`, `\text`,
	`\textnormal`, `\text`, `\textup`, `\text`, `\textsf`, `\text`,
	`\mathbb{R}`, `(-\infty,\infty)`, `\mathbb R`, `(-\infty,\infty)`, "ℝ", `(-\infty,\infty)`,
	`\$`, "", "$", "", "€", "", "£", "", "¥", "", `\euro`, "", `\pounds`, "", "²", "^2", "³", "^3",
)

// decorated holds the first bytes of every pattern of decorations: a string
// without any needs no replacing.
const decorated = "\\{^°π√−×≤≥≠≈∞$€£¥²³~!<>ℝ"

var (
	spaces         = regexp.MustCompile(`\s+`)
	spaceThousands = regexp.MustCompile(`(^|[^\d.])(\d{1,3}(?: \d{3})+)($|[^\d])`)
	commaThousands = regexp.MustCompile(`^[+-]?[1-9]\d{0,2}(?:,\d{3})+(?:\.\d+)?$`) // 0,111 is no thousands
	textMacro      = regexp.MustCompile(`\\text\s*\{([^{}]*)\}`)
	unitPower      = regexp.MustCompile(`^\s*\^\s*(?:\d|\{\s*\d\s*\})`)
	squareUnit     = regexp.MustCompile(`(\d)\s?(?:mm|cm|dm|km|m|in|ft|yd|mi)[²³]`)
	listAnd        = regexp.MustCompile(`,\s*(?:(?:and|or)\s+|,)`)
	moneyThousands = regexp.MustCompile(`\$ ?(\d{1,3}(?:,\d{3})+)`)
	joiningWord    = regexp.MustCompile(`\s*\b(?:or|and)\b\s*`)
	unitWord       = regexp.MustCompile(`^(.*[\d}).])\s*((?:[a-zA-Z]{2,}\.?\s*)+)(\^\{?\d\}?)?$`)
)

// normalize rewrites an answer into the form the readers below expect:
// decorations removed, spaces collapsed, thousands separators joined, units
// dropped.
func normalize(s string) string {
	if strings.Contains(s, `\\`) {
		s = singleBackslashes(s)
	}
	if strings.ContainsAny(s, "²³") {
		s = squareUnit.ReplaceAllString(s, "$1") // 12 m², 5cm³
	}
	if strings.Contains(s, "$") && strings.Contains(s, ",") {
		s = joinMoney(s)
	}
	if strings.ContainsAny(s, decorated) {
		s = decorations.Replace(s)
	}
	s = dropUnits(strings.TrimSpace(spaces.ReplaceAllString(s, " ")))
	for pass := 0; pass < 3 && strings.Contains(s, " ") && spaceThousands.MatchString(s); pass++ {
		s = spaceThousands.ReplaceAllStringFunc(s, func(m string) string { return strings.ReplaceAll(m, " ", "") })
	}
	if strings.Contains(s, ",") {
		if commaThousands.MatchString(s) {
			s = strings.ReplaceAll(s, ",", "")
		}
		s = listAnd.ReplaceAllString(s, ", ") // 19, 46, and 82
	}
	if strings.Contains(s, "or") || strings.Contains(s, "and") {
		s = joinWords(s)
	}
	if strings.Contains(s, ";") {
		s = semicolonList(s)
	}
	return strings.TrimSpace(strings.TrimRight(s, "."))
}

// doubledCommand is a command name written after two backslashes, as
// text escaped for Python or JSON shows it (\\frac, \\le).
var doubledCommand = regexp.MustCompile(`\\\\([a-zA-Z]+)`)

// commandNames are the commands whose names, after two backslashes, are
// read as the command: a line break followed by the letters "frac" or
// "left" is no answer anyone writes.
var commandNames = map[string]bool{
	"frac": true, "dfrac": true, "tfrac": true, "sqrt": true, "left": true, "right": true, "pi": true,
	"le": true, "ge": true, "leq": true, "geq": true, "lt": true, "gt": true, "ne": true, "neq": true,
	"cdot": true, "times": true, "div": true, "pm": true, "mp": true, "infty": true, "in": true,
	"cup": true, "cap": true, "text": true, "mathrm": true, "mathbf": true, "boxed": true, "binom": true,
	"dbinom": true, "circ": true, "degree": true, "emptyset": true, "varnothing": true, "approx": true,
}

// singleBackslashes writes a known command after two backslashes with one
// (\\left( 3, \\frac{\\pi}{2} \\right) is (3, π/2)); the row break \\ of a
// matrix, and two backslashes before any other letters, are left alone.
func singleBackslashes(s string) string {
	var b strings.Builder
	prev := 0
	for _, m := range doubledCommand.FindAllStringSubmatchIndex(s, -1) {
		name := s[m[2]:m[3]]
		if m[0] > 0 && s[m[0]-1] == '\\' || !commandNames[name] && !functions[name] && !greek[`\`+name] {
			continue // \\\frac is a row break before \frac
		}
		b.WriteString(s[prev:m[0]])
		prev = m[0] + 1
	}
	if prev == 0 {
		return s
	}
	return b.String() + s[prev:]
}

// joinMoney joins the thousands separators of a number after a dollar sign
// (\$10,455 is 10455), where a list cannot start.
func joinMoney(s string) string {
	var b strings.Builder
	prev := 0
	for _, m := range moneyThousands.FindAllStringSubmatchIndex(s, -1) {
		if m[1] < len(s) && (isDigit(s[m[1]]) || s[m[1]] == ',' && m[1]+1 < len(s) && isDigit(s[m[1]+1])) {
			continue // 1,0000 or 1,000,00: not thousands
		}
		b.WriteString(s[prev:m[2]])
		b.WriteString(strings.ReplaceAll(s[m[2]:m[3]], ",", ""))
		prev = m[3]
	}
	return b.String() + s[prev:]
}

// joinWords writes "or" and "and" between two values as a list comma:
// (11,7) or (7,11), 1 and 2. A word between letters is left alone.
func joinWords(s string) string {
	var b strings.Builder
	prev := 0
	for _, m := range joiningWord.FindAllStringIndex(s, -1) {
		if m[0] == 0 || m[1] == len(s) || !strings.ContainsRune(")]}0123456789", rune(s[m[0]-1])) ||
			!strings.ContainsRune("([{0123456789-+\\", rune(s[m[1]])) {
			continue
		}
		b.WriteString(s[prev:m[0]])
		b.WriteString(", ")
		prev = m[1]
	}
	return b.String() + s[prev:]
}

// semicolonList writes the top-level semicolons of an answer with no
// top-level comma as commas: -12;-11;-10 and (-4, 27);(2, 15) are lists.
func semicolonList(s string) string {
	parts := splitTop(s, ";")
	if len(parts) < 2 {
		return s
	}
	if len(splitTop(s, ",")) > 1 {
		if tuples, ok := namedGroups(parts); ok {
			return tuples
		}
		return s
	}
	return strings.Join(parts, ", ")
}

// namedValue is one name = value of a named group.
var namedValue = regexp.MustCompile(`^\s*([a-zA-Z](?:_\{?\w+\}?)?)\s*=\s*(\S.*)$`)

// namedGroups writes groups of named values, the same names in the same
// order in each (p=5,q=2;p=7,q=2), as the tuples of their values: (5, 2),
// (7, 2). It is false for any other groups.
func namedGroups(groups []string) (string, bool) {
	var names string
	tuples := make([]string, len(groups))
	for i, g := range groups {
		var these, values []string
		for _, part := range splitTop(g, ",") {
			m := namedValue.FindStringSubmatch(part)
			if m == nil {
				return "", false
			}
			these, values = append(these, m[1]), append(values, strings.TrimSpace(m[2]))
		}
		if len(these) < 2 || i > 0 && strings.Join(these, ",") != names {
			return "", false
		}
		names, tuples[i] = strings.Join(these, ","), "("+strings.Join(values, ", ")+")"
	}
	return strings.Join(tuples, ", "), true
}

// dropUnits removes \text{…} words and bare words after a number, and turns
// \text{ or } and \text{ and } into list commas. Text with digits in \text
// is kept as math.
func dropUnits(s string) string {
	if whole, ok := wholeText(s); ok && !strings.ContainsAny(whole, "0123456789") {
		return s // a text answer
	}
	if !strings.Contains(s, `\text`) {
		return dropUnitWord(s)
	}
	var b strings.Builder
	prev := 0
	for _, m := range textMacro.FindAllStringSubmatchIndex(s, -1) {
		if m[0] < prev {
			continue
		}
		b.WriteString(s[prev:m[0]])
		g, unit := textGroup(strings.TrimSpace(s[m[2]:m[3]]), strings.TrimSpace(s[:m[0]]))
		b.WriteString(g)
		prev = m[1]
		if unit { // cm^2: the unit's exponent goes with it
			prev += len(unitPower.FindString(s[prev:]))
		}
	}
	s = b.String() + s[prev:]
	return dropUnitWord(strings.TrimSpace(spaces.ReplaceAllString(s, " ")))
}

// dropUnitWord removes bare words after a number (12 inches, 5 cm^2); the
// letters after a sum's bounds are its summand (\sum_{k=1}^{n} kx).
func dropUnitWord(s string) string {
	if !hasBareWord(s) || strings.Contains(s, `\sum`) || strings.Contains(s, `\prod`) {
		return s
	}
	if m := unitWord.FindStringSubmatch(s); m != nil && !isMathWord(m[2]) && unitWords(m[2]) {
		return strings.TrimSpace(m[1])
	}
	return s
}

// hasBareWord reports whether s has two letters in a row outside a command
// name.
func hasBareWord(s string) bool {
	for i := 1; i < len(s); i++ {
		if isLetter(s[i]) && isLetter(s[i-1]) {
			j := i - 1
			for j > 0 && isLetter(s[j-1]) {
				j--
			}
			if j == 0 || s[j-1] != '\\' {
				return true
			}
			for i < len(s) && isLetter(s[i]) {
				i++
			}
		}
	}
	return false
}

// textGroup is what replaces \text{inner} after the text before: "," for
// "or" and "and"; nothing when it is a unit (words after a number or an
// expression); else inner itself (\text{4}, (\text{E}), x = \text{four}).
func textGroup(inner, before string) (string, bool) {
	switch strings.ToLower(inner) {
	case "or", "and", ",":
		return ",", false
	}
	last := byte(0)
	if before != "" {
		last = before[len(before)-1]
	}
	if strings.ContainsAny(inner, "0123456789()") || len(inner) < 2 || !(isDigit(last) || isLetter(last) || strings.IndexByte("})", last) >= 0) {
		return inner, false
	}
	return " ", true
}

// shortUnits are the unit words of two or three letters a bare word after
// a number may be; shorter words than four letters that are none of them
// are read as products of variables (2 xy is not 2 ab).
var shortUnits = map[string]bool{
	"mm": true, "cm": true, "dm": true, "km": true, "in": true, "ft": true, "yd": true, "mi": true,
	"yds": true, "kg": true, "mg": true, "lb": true, "lbs": true, "oz": true, "ml": true, "hr": true,
	"hrs": true, "min": true, "sec": true, "mph": true, "kph": true, "cal": true, "gal": true, "qt": true,
	"pt": true, "sq": true, "cu": true, "ha": true, "ac": true, "am": true, "pm": true, "deg": true,
	"rad": true, "yr": true, "yrs": true, "mo": true, "wk": true, "wks": true, "day": true,
}

// unitWords reports whether every word of w is a unit or a word of four
// letters or more, not the letters of a product.
func unitWords(w string) bool {
	for _, f := range strings.Fields(w) {
		if f = strings.TrimSuffix(f, "."); len(f) < 4 && !shortUnits[strings.ToLower(f)] {
			return false
		}
	}
	return true
}

// isMathWord reports whether w (a run of words) is math written in letters,
// not a unit.
func isMathWord(w string) bool {
	for _, f := range strings.Fields(w) {
		f = strings.TrimSuffix(f, ".")
		if functions[f] || f == "pi" || f == "sqrt" || f == "or" || f == "and" {
			return true
		}
	}
	return false
}

// wholeText returns the content of s when s is one \text{…} group.
func wholeText(s string) (string, bool) {
	if !strings.HasPrefix(s, `\text{`) {
		return "", false
	}
	end, ok := matchBrace(s, len(`\text`))
	if !ok || end != len(s)-1 {
		return "", false
	}
	return strings.TrimSpace(s[len(`\text{`):end]), true
}
