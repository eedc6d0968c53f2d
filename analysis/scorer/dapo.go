package scorer

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"strings"
)

// ErrNonNumericLabel is wrapped by the dapo scorer's error for a label that
// Python's float() rejects after Minerva normalisation (slime raises ValueError,
// or OverflowError for an infinite label, out of the reward computation).
var ErrNonNumericLabel = errors.New("non-numeric label")

// dapoWindow is how many trailing characters (code points) dapo searches.
const dapoWindow = 300

// dapoInvalid is the prediction dapo uses when no Answer: line is found.
const dapoInvalid = "[INVALID]"

// pyWS is Python's Unicode \s as a character class body.
const pyWS = `\x09-\x0d\x1c-\x1f\x85\p{Z}`

var (
	answerRe = regexp.MustCompile(`(?i)Answer[` + pyWS + `]*:[` + pyWS + `]*([^\n]+)`)

	minervaSubstitutions = [][2]string{
		{"an ", ""}, {"a ", ""}, {".$", "$"}, {`\$`, ""}, {`\ `, ""}, {" ", ""},
		{"mbox", "text"}, {`,\text{and}`, ","}, {`\text{and}`, ","}, {`\text{m}`, `\text{}`},
	}
	minervaRemovals = []string{
		"square", "ways", "integers", "dollars", "mph", "inches", "hours", "km", "units", `\ldots`,
		"sue", "points", "feet", "minutes", "digits", "cents", "degrees", "cm", "gm", "pounds",
		"meters", "meals", "edges", "students", "childrentickets", "multiples", `\text{s}`,
		`\text{.}`, "\\text{\ns}", `\text{}^2`, `\text{}^3`, "\\text{\n}", `\text{}`, `\mathrm{th}`,
		`^\circ`, `^{\circ}`, `\;`, `,\!`, "{,}", `"`, `\dots`, "<|im_end|>", "<|endoftext|>",
	}
	// minervaRegexes run in order; each can only match where its literal
	// occurs, so it is skipped when the literal is absent.
	minervaRegexes = []struct {
		literal string
		re      *regexp.Regexp
		repl    string
	}{
		{"$", regexp.MustCompile(`(.*?)(\$)(.*?)(\$)(.*)`), "$$${3}$$"},
		{`\text{`, regexp.MustCompile(`(\\text\{)(.*?)(\})`), "${2}"},
		{`\textbf{`, regexp.MustCompile(`(\\textbf\{)(.*?)(\})`), "${2}"},
		{`\overline{`, regexp.MustCompile(`(\\overline\{)(.*?)(\})`), "${2}"},
		{`\boxed{`, regexp.MustCompile(`(\\boxed\{)(.*)(\})`), "${2}"},
		{"frac", regexp.MustCompile(`(frac)([^{])(.)`), "frac{${2}}{${3}}"},
		{"sqrt", regexp.MustCompile(`(sqrt)([^{])`), "sqrt{${2}}"},
	}
)

// MinervaNormalize is dapo's normalize_final_answer (the Minerva / lm-eval
// MATH normaliser): keep the text after the last "="; fixed substitutions
// (articles "a "/"an " anywhere, every space) and deletions (units, \text{},
// <|im_end|>, ...) in order; keep what lies between the first two $; unwrap
// \text{}, \textbf{}, \overline{} (non-greedy) and \boxed{} (greedy); \frac and
// \sqrt shorthand; drop $; drop commas when only digits remain; strip.
func MinervaNormalize(s string) string {
	if i := strings.LastIndex(s, "="); i >= 0 {
		s = s[i+1:]
	}
	for _, sub := range minervaSubstitutions {
		s = strings.ReplaceAll(s, sub[0], sub[1])
	}
	for _, r := range minervaRemovals {
		s = strings.ReplaceAll(s, r, "")
	}
	for _, x := range minervaRegexes {
		if strings.Contains(s, x.literal) {
			s = x.re.ReplaceAllString(s, x.repl)
		}
	}
	s = strings.ReplaceAll(s, "$", "")
	if noCommas := strings.ReplaceAll(s, ",", ""); pyIsDigits(noCommas) {
		s = noCommas
	}
	return pyStrip(s)
}

// dapoPrediction is the normalised content of the last case-insensitive
// `Answer\s*:\s*(...)` line within the last 300 characters, or "[INVALID]".
func dapoPrediction(response string) string {
	tail := lastRunes(response, dapoWindow)
	raw := dapoInvalid
	if ms := answerRe.FindAllStringSubmatch(tail, -1); len(ms) > 0 {
		raw = ms[len(ms)-1][1]
	}
	return MinervaNormalize(raw)
}

// DapoTruth converts a label the way dapo does: str(int(float(normalised
// label))), truncating toward zero ("2.5" -> "2", "025" -> "25"). A label that
// float() rejects, or an infinite one, gives an error wrapping ErrNonNumericLabel.
func DapoTruth(label string) (string, error) {
	norm := MinervaNormalize(label)
	x, ok := pyFloat(norm)
	switch {
	case !ok:
		return "", fmt.Errorf("scorer: dapo: label %s normalises to %s, which float() rejects: %w",
			quoteShort(label), quoteShort(norm), ErrNonNumericLabel)
	case math.IsNaN(x):
		return "", fmt.Errorf("scorer: dapo: label %s is NaN, which int() rejects: %w", quoteShort(label), ErrNonNumericLabel)
	case math.IsInf(x, 0):
		return "", fmt.Errorf("scorer: dapo: label %s is infinite, which int() rejects: %w", quoteShort(label), ErrNonNumericLabel)
	}
	return pyIntString(x), nil
}

// quoteShort quotes s for an error message, cutting it to 80 bytes.
func quoteShort(s string) string {
	if len(s) > 80 {
		return fmt.Sprintf("%q...", s[:80])
	}
	return fmt.Sprintf("%q", s)
}
