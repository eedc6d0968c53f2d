package verify

import (
	"regexp"
	"slices"
	"strings"
)

// Extract returns the candidate answers of a response, best first (see the
// package doc, Extraction): the last box, then the boxes of its line joined
// by commas; or the last "Answer:" line or final-answer sentence; or the last
// math span; or the last line. It returns nil when text has no answer.
func Extract(text string) []string {
	return extract(text, false)
}

// ExtractLabel is the answer of a label: as Extract, except that a label
// with no box, answer line or math span is its whole text.
func ExtractLabel(label string) string {
	if a := extract(label, true); len(a) > 0 {
		return a[0]
	}
	return ""
}

// allOf is a label's last resort: all of it.
func allOf(s string) (string, bool) { return s, true }

// extract is Extract, or for a label ExtractLabel's one candidate.
func extract(text string, label bool) []string {
	text, ok := afterThinking(endOfTurn(text))
	if !ok {
		return nil
	}
	text = currencyDollars(text)
	if boxes, gaps, end := lastLineBoxes(text); len(boxes) > 0 {
		if a, ok := finalAfterBox(text[end:]); ok && !label {
			return []string{a} // \boxed{255} … The final answer is $10,455$.
		}
		joined := cleanCandidate(strings.Join(boxes, ", "))
		switch {
		case len(boxes) == 1:
			return []string{cleanCandidate(boxes[0])}
		case label && fewWords(gaps):
			return []string{joined} // \boxed{1} and \boxed{-2}: one answer
		case label:
			return []string{cleanCandidate(boxes[len(boxes)-1])}
		}
		return []string{cleanCandidate(boxes[len(boxes)-1]), joined}
	}
	last := lastLine
	if label {
		if a, ok := joinedSpans(text); ok {
			return []string{a}
		}
		last = allOf
	}
	for _, find := range []func(string) (string, bool){answerLine, plainAmount, lastMathSpan, last} {
		if a, ok := find(text); ok {
			if a = cleanCandidate(a); a != "" {
				return []string{a}
			}
		}
	}
	return nil
}

// finalAfterBox is the value a final-answer statement after the last box
// states (The final answer is $10,455$; Final Answer: 7): the last word on
// the answer. A plain Answer: line, or a statement without a digit or a
// command (the final answer is correct), does not count.
func finalAfterBox(tail string) (string, bool) {
	if !hasFinalAnswer(tail) {
		return "", false
	}
	a, ok := answerLine(tail)
	if !ok || !strings.ContainsAny(a, `0123456789\`) {
		return "", false
	}
	a = cleanCandidate(a)
	return a, a != ""
}

// hasFinalAnswer reports whether text says "final answer" in any case,
// with any spaces between the words. It looks for "nswer" and "NSWER" with
// strings.Index, so a megabyte without them costs little.
func hasFinalAnswer(text string) bool {
	for _, tail := range []string{"nswer", "NSWER"} {
		for from := 0; ; {
			i := strings.Index(text[from:], tail)
			if i < 0 {
				break
			}
			at := from + i - 1 // the a of answer
			from += i + len(tail)
			if at < 0 || text[at]|0x20 != 'a' {
				continue
			}
			k := at
			for k > 0 && (text[k-1] == ' ' || text[k-1] == '\t' || text[k-1] == '\n') {
				k--
			}
			if k < at && k >= len("final") && strings.EqualFold(text[k-len("final"):k], "final") {
				return true
			}
		}
	}
	return false
}

// currencyDollars escapes the dollar signs of each line in which every
// dollar sign is followed by a digit: they are currency ($10,200 + $255 =
// $10,455), not math delimiters, which a $5$ closes.
func currencyDollars(text string) string {
	if !strings.Contains(text, "$") {
		return text
	}
	var b strings.Builder
	for start := 0; start < len(text); {
		end := strings.IndexByte(text[start:], '\n')
		if end < 0 {
			end = len(text)
		} else {
			end += start + 1
		}
		line := text[start:end]
		if strings.Contains(line, "$") && allCurrency(line) {
			if b.Len() == 0 {
				b.WriteString(text[:start])
			}
			b.WriteString(escapeDollars(line))
		} else if b.Len() > 0 {
			b.WriteString(line)
		}
		start = end
	}
	if b.Len() == 0 {
		return text
	}
	return b.String()
}

// allCurrency reports whether every unescaped $ of line is followed by a
// digit.
func allCurrency(line string) bool {
	for i := 0; i < len(line); i++ {
		switch {
		case line[i] == '\\':
			i++
		case line[i] == '$' && (i+1 == len(line) || !isDigit(line[i+1])):
			return false
		}
	}
	return true
}

// escapeDollars writes each unescaped $ of line as \$.
func escapeDollars(line string) string {
	var b strings.Builder
	for i := 0; i < len(line); i++ {
		if line[i] == '\\' && i+1 < len(line) {
			b.WriteString(line[i : i+2])
			i++
			continue
		}
		if line[i] == '$' {
			b.WriteByte('\\')
		}
		b.WriteByte(line[i])
	}
	return b.String()
}

// plainAmountRe is an amount written plainly at the end of a line: a
// number after a currency sign, or before a percent sign.
var plainAmountRe = regexp.MustCompile(`(?:\\\$ ?\d[\d,]*(?:\.\d+)?|\d[\d,]*(?:\.\d+)? ?%)[ \t]*\.?$`)

// plainAmount is the amount that ends the prose after the last math span
// of the last line of text (Dr. Zaius has $10,455.; so it increases by
// 100%.).
func plainAmount(text string) (string, bool) {
	text = strings.TrimSpace(text)
	tail := text[max(0, len(text)-maxAmountProse):] // an amount and the words before it
	tail = tail[strings.LastIndexByte(tail, '\n')+1:]
	for _, closer := range []string{`\)`, `\]`, "$"} {
		if i := lastUnescaped(tail, closer); i >= 0 {
			tail = tail[i+len(closer):]
		}
	}
	if strings.Contains(tail, `\(`) || strings.Contains(tail, `\[`) || !hasBareWord(tail) {
		return "", false
	}
	m := plainAmountRe.FindString(tail)
	return m, m != ""
}

// maxAmountProse bounds how much of a line's end plainAmount reads, so that
// a line of a megabyte costs no more than a short one.
const maxAmountProse = 256

// spanJoiner is what may stand between the math spans of a label that
// lists its values in several ($1$ and $2$ and $3$, $21,16$ or $11$).
var spanJoiner = regexp.MustCompile(`^\s*(?:[,;]|,?\s*\b(?:and|or)\b)\s*$`)

// dollarSpan is one $…$ math span.
var dollarSpan = regexp.MustCompile(`\$[^$]+\$`)

// joinedSpans is text made only of $…$ spans joined by commas, semicolons,
// "and" or "or" (a label, or what an answer line states), as one list of
// their contents.
func joinedSpans(text string) (string, bool) {
	text = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(text), "."))
	spans := dollarSpan.FindAllStringIndex(text, maxElems+1)
	if len(spans) < 2 || len(spans) > maxElems || spans[0][0] != 0 || spans[len(spans)-1][1] != len(text) {
		return "", false
	}
	values := make([]string, len(spans))
	for i, sp := range spans {
		if i > 0 && !spanJoiner.MatchString(text[spans[i-1][1]:sp[0]]) {
			return "", false
		}
		values[i] = strings.TrimSpace(text[sp[0]+1 : sp[1]-1])
	}
	return strings.Join(values, ", "), true
}

// lastUnescaped is the index of the last sub in s that no backslash
// precedes, or -1.
func lastUnescaped(s, sub string) int {
	for end := len(s); ; {
		i := strings.LastIndex(s[:end], sub)
		if i <= 0 || s[i-1] != '\\' {
			return i
		}
		end = i
	}
}

// turnEnds are the chat-template tokens that end a model's turn: what a
// response holds past the first of them is not its answer.
var turnEnds = []string{"<|im_end|>", "<|im_start|>", "<|endoftext|>"}

// endOfTurn is text up to its first turn-ending token.
func endOfTurn(text string) string {
	if !strings.Contains(text, "<|") {
		return text
	}
	for _, t := range turnEnds {
		if i := strings.Index(text, t); i >= 0 {
			text = text[:i]
		}
	}
	return text
}

// afterThinking is the text after the last </think>; false when a <think> is
// never closed.
func afterThinking(text string) (string, bool) {
	if i := lastThinkEnd(text); i >= 0 {
		return text[i+len("</think>"):], true
	}
	return text, !strings.Contains(text, "<think>")
}

// lastThinkEnd is the index of the last "</think>" in s, or -1: a plain
// backward loop that stops at each '>', several times faster on long text
// than strings.LastIndex, and as fast where '>' is dense.
func lastThinkEnd(s string) int {
	const end = "</think>"
	for j := len(s) - 1; j >= len(end)-1; j-- {
		if s[j] == '>' && s[j-len(end)+1:j+1] == end {
			return j - len(end) + 1
		}
	}
	return -1
}

// boxMacros are the commands whose argument is a boxed answer.
var boxMacros = []string{`\boxed`, `\fbox`}

// maxBoxes bounds how many box commands, from the end, are tried: extraction
// stays linear in the text however many unclosed boxes it holds.
const maxBoxes = 64

// maxGapWords is how many words may stand between two boxes of a label for
// them to be one answer (\boxed{1} papers and \boxed{2} bins).
const maxGapWords = 2

// fewWords reports whether every gap has at most maxGapWords words.
func fewWords(gaps []string) bool {
	for _, g := range gaps {
		words := 0
		for i := 0; i < len(g); i++ {
			if isLetter(g[i]) && (i == 0 || !isLetter(g[i-1]) && g[i-1] != '\\') {
				words++
			}
			for g[i] == '\\' && i+1 < len(g) && isLetter(g[i+1]) {
				i++ // a command's name is no word
			}
		}
		if words > maxGapWords {
			return false
		}
	}
	return true
}

// lastLineBoxes returns the contents of the boxes on the line of the last
// box that closes, in order, the text between each two and the index after
// the last; nil when text has no box.
func lastLineBoxes(text string) (out, gaps []string, last int) {
	lineStart := -1
	end, after := len(text), -1
	for tried := 0; tried < maxBoxes; tried++ {
		i, m := lastBox(text[:end])
		if i < 0 || i < lineStart {
			break
		}
		end = i
		content, next, ok := boxArgument(text, i+len(m))
		if !ok {
			continue
		}
		if lineStart < 0 {
			lineStart = strings.LastIndexByte(text[:i], '\n') + 1
			last = next
		} else {
			gaps = append(gaps, text[next:after])
		}
		out, after = append(out, content), i
	}
	slices.Reverse(out)
	return out, gaps, last
}

// lastBox returns the position and the name of the last box macro in s, or
// -1: one backward pass over s that stops at each "box" (both names hold
// one), a plain loop, so dense x's cost no call each.
func lastBox(s string) (int, string) {
	for j := len(s) - 1; j >= 2; j-- {
		if s[j] != 'x' || s[j-1] != 'o' || s[j-2] != 'b' {
			continue // both names hold "box"
		}
		for _, m := range boxMacros {
			at := j - strings.IndexByte(m, 'x')
			if at >= 0 && strings.HasPrefix(s[at:], m) {
				return at, m
			}
		}
	}
	return -1, ""
}

// boxArgument reads the argument of a box macro whose name ends at i: a
// braced group (nested braces; \{ and \} do not count) or, after spaces, one
// token: a run of digits, a letter, or a macro name. It returns the content
// and the index after it.
func boxArgument(text string, i int) (string, int, bool) {
	if i < len(text) && isLetter(text[i]) {
		return "", 0, false // \boxedx is another macro
	}
	if i < len(text) && text[i] == '{' {
		end, ok := matchBrace(text, i)
		if !ok {
			return "", 0, false
		}
		return text[i+1 : end], end + 1, true
	}
	j := i
	for j < len(text) && text[j] == ' ' {
		j++
	}
	if j == i || j == len(text) {
		return "", 0, false
	}
	k := j + 1
	switch c := text[j]; {
	case isDigit(c) || c == '-':
		for k < len(text) && (isDigit(text[k]) || text[k] == '.') {
			k++
		}
	case c == '\\':
		for k < len(text) && isLetter(text[k]) {
			k++
		}
	case isLetter(c):
	default:
		return "", 0, false
	}
	return text[j:k], k, true
}

// matchBrace returns the index of the brace closing the one at open; escaped
// braces are skipped.
func matchBrace(s string, open int) (int, bool) {
	depth := 0
	for i := open; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '{':
			depth++
		case '}':
			depth--
			if depth == 0 {
				return i, true
			}
		}
	}
	return 0, false
}

var (
	answerLineRe  = regexp.MustCompile(`(?im)^[ \t>*#_]*(?:final\s+)?answer\s*[*_]*\s*[:：][*_]*[ \t]*(.*)$`)
	finalAnswerRe = regexp.MustCompile(`(?i)the\s+(?:final\s+)?answer\s+is[:\s]*`)
	finalColonRe  = regexp.MustCompile(`(?i)final\s+answer\s*[*_]*\s*[:：][*_]*[ \t]*`)
	iHopeRe       = regexp.MustCompile(`(?i)\.?\s*I hope it is correct.*$`)
)

// answerReach bounds how far before its "answer" a match of the answer
// patterns can start ("the final answer is" with its spacing), and
// answerTrail how far after it the pattern itself (not the answer) ends.
const (
	answerReach = 256
	answerTrail = 64
)

// maxAnswerWords bounds how many of the last "answer" words of a text are
// tried as the start of an answer line: a text that repeats the word costs
// no more than one that says it once.
const maxAnswerWords = 64

// answerLine finds the last "Answer:" line or the text after the last "the
// final answer is", "the answer is" or "Final Answer:" in a line, up to the
// end of the line (and before "I hope it is correct"); of a sentence (The
// largest $n$ is 34.), what follows its last " is ".
func answerLine(text string) (string, bool) {
	end := len(text)
	for try := 0; try < maxAnswerWords; try++ {
		at := lastIndexFold(text[:end], "answer")
		if at < 0 {
			return "", false
		}
		end = at
		if best, ok := answerAt(text, at); ok {
			return answerOf(best), true
		}
	}
	return "", false
}

// answerAt is the answer stated by the match of the answer patterns that
// holds the word "answer" at text[at:], the one that starts latest; false
// when none holds it. Each pattern is matched within one line and at most
// answerReach bytes before the word.
func answerAt(text string, at int) (string, bool) {
	lineStart := strings.LastIndexByte(text[:at], '\n') + 1
	lineEnd := len(text)
	if nl := strings.IndexByte(text[at:], '\n'); nl >= 0 {
		lineEnd = at + nl
	}
	from := max(lineStart, at-answerReach)
	window := text[from:min(lineEnd, at+len("answer")+answerTrail)]
	word := at - from
	holds := func(m []int) bool { return m[0] <= word && word < m[1] }
	best, bestAt := "", -1
	if m := answerLineRe.FindStringSubmatchIndex(window); m != nil && from == lineStart && holds(m) {
		best, bestAt = untilBalanced(text, from+m[2], lineEnd), m[0]
	}
	for _, re := range []*regexp.Regexp{finalAnswerRe, finalColonRe} {
		for _, m := range re.FindAllStringIndex(window, -1) {
			if holds(m) && m[0] > bestAt {
				best, bestAt = text[from+m[1]:lineEnd], m[0]
			}
		}
	}
	return best, bestAt >= 0
}

// answerOf is the answer in what follows an answer pattern: without "I
// hope it is correct", after the last " is " of a sentence, its spans
// joined by words as one list, or its last math span.
func answerOf(best string) string {
	best = afterIs(iHopeRe.ReplaceAllString(best, ""))
	if joined, ok := joinedSpans(strings.Trim(best, ` "\`)); ok {
		return joined // The final answer is $12$ and $13$.
	}
	if span, ok := lastMathSpan(best); ok {
		return span
	}
	return best
}

// lastIndexFold is the index of the last lower-case ASCII word w in s in
// any case, or -1.
func lastIndexFold(s, w string) int {
	for i := len(s) - len(w); i >= 0; i-- {
		if s[i]|0x20 == w[0] && strings.EqualFold(s[i:i+len(w)], w) {
			return i
		}
	}
	return -1
}

// afterIs is what follows the last " is " of s outside math spans, when
// something does; else s.
func afterIs(s string) string {
	i := strings.LastIndex(s, " is ")
	if i < 0 || strings.Count(s[:i], "$")%2 == 1 || strings.Count(s[i:], `\)`) > strings.Count(s[i:], `\(`) {
		return s
	}
	if rest := strings.TrimSpace(s[i+len(" is "):]); rest != "" && rest != "." {
		return rest
	}
	return s
}

// untilBalanced returns text[start:end], extended line by line (at most 20)
// while it has more opening braces than closing ones or an unclosed $ (an
// answer written over lines).
func untilBalanced(text string, start, end int) string {
	open := func(s string) bool {
		return strings.Count(s, "{") > strings.Count(s, "}") || (strings.Count(s, "$")-strings.Count(s, `\$`))%2 == 1
	}
	for extra := 0; open(text[start:end]) && end < len(text) && extra < 20; extra++ {
		nl := strings.IndexByte(text[end+1:], '\n')
		if nl < 0 {
			end = len(text)
		} else {
			end += 1 + nl
		}
	}
	return text[start:end]
}

// mathDelims are the math span delimiters, longest first.
var mathDelims = [][2]string{{"$$", "$$"}, {`\[`, `\]`}, {`\(`, `\)`}, {"$", "$"}}

// lastMathSpan returns the content of the last math span of text.
func lastMathSpan(text string) (string, bool) {
	var best string
	bestEnd := -1
	unclosed := map[string]bool{} // a delimiter that found no closer once finds none later either
	for i := 0; i < len(text); i++ {
		next := strings.IndexAny(text[i:], `$\`) // every delimiter starts with one of these
		if next < 0 {
			break
		}
		i += next
		if text[i] == '\\' && i+1 < len(text) && text[i+1] == '$' {
			i++ // an escaped dollar
			continue
		}
		if text[i] == '\\' && (i+1 == len(text) || text[i+1] != '[' && text[i+1] != '(') {
			continue // a command: no delimiter starts here
		}
		for _, d := range mathDelims {
			if !strings.HasPrefix(text[i:], d[0]) {
				continue
			}
			start := i + len(d[0])
			end := -1
			if !unclosed[d[0]] {
				end = indexUnescaped(text[start:], d[1])
			}
			if end < 0 {
				unclosed[d[0]] = true
				break
			}
			if start+end > bestEnd {
				best, bestEnd = text[start:start+end], start+end
			}
			i = start + end + len(d[1]) - 1
			break
		}
	}
	return best, bestEnd >= 0
}

// indexUnescaped is strings.Index of sub in s, skipping a sub preceded by a
// backslash (\$ is a dollar sign, not a delimiter).
func indexUnescaped(s, sub string) int {
	for from := 0; ; {
		i := strings.Index(s[from:], sub)
		if i < 0 {
			return -1
		}
		if at := from + i; at == 0 || s[at-1] != '\\' || sub != "$" {
			return at
		}
		from += i + 1
	}
}

// lastLine is the last non-empty line, after its last " is ".
func lastLine(text string) (string, bool) {
	lines := strings.Split(strings.TrimSpace(text), "\n")
	line := strings.TrimSpace(lines[len(lines)-1])
	if i := strings.LastIndex(line, " is "); i >= 0 {
		line = line[i+len(" is "):]
	}
	return line, line != ""
}

// cleanCandidate trims spaces, an enclosing math span and trailing periods.
func cleanCandidate(s string) string {
	s = strings.TrimSpace(s)
	for {
		before := s
		for _, d := range mathDelims {
			if len(s) >= len(d[0])+len(d[1]) && strings.HasPrefix(s, d[0]) && strings.HasSuffix(s, d[1]) {
				s = strings.TrimSpace(s[len(d[0]) : len(s)-len(d[1])])
				break
			}
		}
		s = strings.TrimSpace(strings.TrimRight(s, "."))
		if s == before {
			return s
		}
	}
}

func isDigit(c byte) bool  { return c >= '0' && c <= '9' }
func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
