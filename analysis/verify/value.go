package verify

import (
	"regexp"
	"strings"
)

// kind is what an answer is (see the package doc, Values).
type kind int

const (
	scalarKind kind = iota
	textKind
	choiceKind
	tupleKind
	setKind
	intervalKind
	unionKind
	matrixKind
	equationKind
)

// value is one read answer.
type value struct {
	kind    kind
	text    string // text and choice answers; for scalars, the normal form (compared when expr is nil)
	expr    *node  // scalars that parse; for an equation L = R, L - R
	eq      *node  // a scalar read from name = expr: name - expr
	percent bool   // a scalar written with %
	name    string // the name a value was given (AB = 4: AB), spaces and braces dropped
	figure  bool   // that name is a figure's quantity (AB, |AB|, A:B, \frac{NO}{BO}), not a variable
	record  bool   // a list of values with distinct names (AB = 4, CD = 5)
	built   bool   // an entry of matrix arithmetic: its variables may cancel (a·(-1) + 1·a)
	elems   []value
	rows    [][]value
	// intervals: the endpoints (inf -1/+1 for ∓∞) and their closedness
	lo, hi             *value
	loInf, hiInf       int
	loClosed, hiClosed bool
}

// maxAnswer bounds the length of an answer that is read as math; a longer
// one is compared as text.
const maxAnswer = 2000

// maxElems bounds the elements of a tuple, set or matrix.
const maxElems = 256

var (
	choiceRe     = regexp.MustCompile(`^\(?([A-E])\)?$|^\(([a-e])\)$`)
	matrixRe     = regexp.MustCompile(`^\\begin\{([pbB]?matrix|array)\}(?:\{[lcr|]*\})?(.*)\\end\{([pbB]?matrix|array)\}$`)
	lhsRe        = regexp.MustCompile(`^(?:[a-zA-Z](?:_\{?\w+\}?)?|\\[a-zA-Z]+|[a-zA-Z]+\([^()=]*\))$`)
	thousandsIn  = regexp.MustCompile(`(?:^|\b)\d{1,3}(?:,\d{3})+\b`)
	decimalComma = regexp.MustCompile(`^([+-]?\d+),(\d+)$`)
	namesRe      = regexp.MustCompile(`^\([a-zA-Z](?:,[a-zA-Z])+\)$`)
	relationRe   = regexp.MustCompile(`\\le|\\ge|<|>`)
	inPrefixRe   = regexp.MustCompile(`^[a-zA-Z]\s*\\in\s*`)
	figureRe     = regexp.MustCompile(`^(?:[A-Z]{2,4}|\|[A-Z]{2,4}\||\\frac\{[A-Z]{1,4}\}\{[A-Z]{1,4}\}|` +
		ratioName + `:` + ratioName + `)$`)
)

// ratioName is one side of a named ratio (A:B, V_{1}:V_{2}, S_{MBCN}:S).
const ratioName = `(?:[A-Z]{1,4}|[a-z])(?:_\{?\w+\}?)?`

// read reads an answer into a value.
func read(s string, depth int) value {
	if len(s) > maxAnswer || depth > 8 {
		return value{kind: scalarKind, text: strings.TrimSpace(s)}
	}
	if v, ok := readEither(s, depth); ok {
		return v
	}
	s = approximated(normalize(s))
	if inner, ok := ungrouped(s); ok {
		return read(inner, depth+1) // {1, 2, 3}: braces that only group
	}
	if inner, ok := wholeText(s); ok {
		if v, ok := readWords(inner, depth); ok {
			return v
		}
		return read(inner, depth+1) // \text{(C)}, \text{1,\!000}, \text{H, E}
	}
	if m := choiceRe.FindStringSubmatch(s); m != nil {
		return value{kind: choiceKind, text: m[1] + strings.ToUpper(m[2])}
	}
	s = inPrefixRe.ReplaceAllString(s, "")
	for _, r := range readers() {
		if v, ok := r(s, depth); ok {
			return v
		}
	}
	return readScalar(s)
}

// approximated is the answer of a line with \approx: what follows it after
// a single name (x \approx 11), else what precedes it (1/3 \approx 0.33,
// x = 1/3 \approx 0.33).
func approximated(s string) string {
	if !strings.Contains(s, `\approx`) {
		return s
	}
	parts := splitTop(s, `\approx`)
	if len(parts) == 2 && isVariable(parts[0]) {
		return parts[1]
	}
	return parts[0]
}

// ungrouped is the inside of s when s is one plain brace group, which
// LaTeX does not print.
func ungrouped(s string) (string, bool) {
	if len(s) < 2 || s[0] != '{' || !closesAtEnd(s, 0) {
		return "", false
	}
	return strings.TrimSpace(s[1 : len(s)-1]), true
}

// readings are the ways a response's answer can be read, best first: a
// number with comma thousands separators and no spaces (81,256) is also the
// list 81, 256, unless a dollar sign makes it one amount (a label is read
// the first way only).
func readings(s string) []value {
	v := read(s, 0)
	if len(s) > maxAnswer || !strings.Contains(s, ",") {
		return []value{v}
	}
	plain := strings.TrimSpace(decorations.Replace(s))
	if commaThousands.MatchString(plain) && !strings.Contains(s, "$") {
		if list, ok := elements(setKind, plain, 0); ok {
			return []value{v, list}
		}
	}
	if m := decimalComma.FindStringSubmatch(plain); m != nil && (len(m[2]) != 3 || strings.TrimLeft(m[1], "+-") == "0") {
		return []value{v, read(m[1]+"."+m[2], 0)}
	}
	return []value{v}
}

// readers are the structured forms an answer can take, in the order they are tried.
func readers() []func(string, int) (value, bool) {
	return []func(string, int) (value, bool){readMatrix, readMatrixArithmetic, readUnion, readNotEqual,
		readInequality, readPlusMinus, readBraced, readBracketed, readChain, readList, readEquation, readWords}
}

// textValue is a text answer in its compared form: lower case, without a
// leading "the", a final period and spaces.
func textValue(s string) value {
	s = strings.ToLower(strings.TrimSpace(spaces.ReplaceAllString(s, " ")))
	s = strings.TrimSuffix(strings.TrimPrefix(s, "the "), ".")
	return value{kind: textKind, text: strings.ReplaceAll(s, " ", "")}
}

// readWords reads an answer of words with no math in it as text: two words
// or more, or one of three letters or more (xy is a product).
func readWords(s string, _ int) (value, bool) {
	if strings.ContainsAny(s, "0123456789+-*/^=\\()[]{}|_<>,") || len(strings.Fields(s)) == 0 {
		return value{}, false
	}
	fields := strings.Fields(s)
	long := len(fields) > 1
	for _, f := range fields {
		if len(f) < 2 || isMathWord(f) {
			return value{}, false
		}
		long = long || len(f) > 2
	}
	if !long {
		return value{}, false // xy is a product
	}
	return textValue(s), true
}

// readScalar reads an expression; one that does not parse keeps its text.
func readScalar(s string) value {
	v := value{kind: scalarKind, text: s}
	body := s
	for _, pct := range []string{`\%`, "%"} {
		if b, ok := strings.CutSuffix(body, pct); ok {
			body, v.percent = strings.TrimSpace(b), true
			break
		}
	}
	if e, err := parseExpr(body); err == nil {
		v.expr = e
	}
	return v
}

// splitTop splits s at the separators sep that are outside brackets and
// braces.
func splitTop(s string, sep string) []string {
	var parts []string
	depth, start := 0, 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\\' && i+1 < len(s) && (s[i+1] == '{' || s[i+1] == '}'):
			if s[i+1] == '{' {
				depth++
			} else {
				depth--
			}
			i++
		case c == '(' || c == '[' || c == '{':
			depth++
		case c == ')' || c == ']' || c == '}':
			depth--
		case depth == 0 && strings.HasPrefix(s[i:], sep):
			parts = append(parts, strings.TrimSpace(s[start:i]))
			start = i + len(sep)
			i += len(sep) - 1
		}
	}
	return append(parts, strings.TrimSpace(s[start:]))
}

// readMatrix reads one matrix environment, alone or in brackets or
// parentheses (not a vmatrix: a determinant).
func readMatrix(s string, depth int) (value, bool) {
	if len(s) > 2 && (s[0] == '[' || s[0] == '(') && closesAtEnd(s, 0) {
		s = strings.TrimSpace(s[1 : len(s)-1]) // \left[\begin{array}{cc}…\end{array}\right]
	}
	if !strings.HasPrefix(s, envBegin) {
		return value{}, false
	}
	if end, ok := envEnd(s, 0); !ok || end != len(s) {
		return value{}, false // M + N is no one matrix
	}
	m := matrixRe.FindStringSubmatch(s)
	if m == nil || m[1] != m[3] {
		return value{}, false
	}
	v := value{kind: matrixKind}
	for _, row := range splitTop(m[2], `\\`) {
		if row == "" {
			continue
		}
		var cells []value
		for _, c := range splitTop(row, "&") {
			cells = append(cells, read(c, depth+1))
		}
		v.rows = append(v.rows, cells)
		if len(v.rows)*len(cells) > maxElems {
			return value{}, false
		}
	}
	return v, len(v.rows) > 0
}

func readUnion(s string, depth int) (value, bool) {
	if !strings.Contains(s, `\cup`) {
		return value{}, false
	}
	parts := splitTop(s, `\cup`)
	if len(parts) < 2 {
		return value{}, false
	}
	v := value{kind: unionKind}
	for _, p := range parts {
		iv := read(p, depth+1)
		if iv.kind == tupleKind && len(iv.elems) == 2 {
			iv = openInterval(iv)
		}
		if iv.kind != intervalKind {
			return value{}, false
		}
		v.elems = append(v.elems, iv)
	}
	return v, true
}

// readPlusMinus reads a ± b as the set {a+b, a−b}.
func readPlusMinus(s string, depth int) (value, bool) {
	if !strings.Contains(s, `\pm`) && !strings.Contains(s, "±") {
		return value{}, false
	}
	for _, pm := range []string{`\pm`, "±"} {
		if parts := splitTop(s, pm); len(parts) == 2 {
			plus := read(parts[0]+"+"+parts[1], depth+1)
			minus := read(parts[0]+"-("+parts[1]+")", depth+1)
			if parts[0] == "" {
				plus, minus = read(parts[1], depth+1), read("-("+parts[1]+")", depth+1)
			}
			return value{kind: setKind, elems: []value{plus, minus}}, true
		}
	}
	return value{}, false
}

// readBraced reads \{a, b\} as a set.
func readBraced(s string, depth int) (value, bool) {
	if !strings.HasPrefix(s, `\{`) || !strings.HasSuffix(s, `\}`) || !closesAtEnd(s, 1) {
		return value{}, false
	}
	return elements(setKind, s[2:len(s)-2], depth)
}

// readBracketed reads (a, b) as a tuple or an interval, [a, b] and mixed
// brackets as an interval, \langle a, b\rangle as a tuple.
func readBracketed(s string, depth int) (value, bool) {
	if inner, ok := strings.CutPrefix(s, `\langle`); ok && strings.HasSuffix(inner, `\rangle`) {
		return elements(tupleKind, strings.TrimSuffix(inner, `\rangle`), depth)
	}
	if len(s) < 2 || !strings.ContainsRune("([", rune(s[0])) || !strings.ContainsRune(")]", rune(s[len(s)-1])) ||
		!closesAtEnd(s, 0) {
		return value{}, false
	}
	inner := s[1 : len(s)-1]
	parts := splitTop(inner, ",")
	if len(parts) == 1 && strings.Contains(inner, ";") {
		parts = splitTop(inner, ";") // (0;-2;6), [1;2]: semicolons where commas would be
		inner = strings.Join(parts, ",")
	}
	if len(parts) == 1 {
		return value{}, false // a parenthesised scalar
	}
	if len(parts) == 2 && (s[0] == '[' || s[len(s)-1] == ']' || strings.Contains(s, `\infty`)) {
		return interval(s[0] == '[', s[len(s)-1] == ']', parts, depth)
	}
	if s[0] == '[' {
		return elements(setKind, inner, depth)
	}
	return elements(tupleKind, inner, depth)
}

// closesAtEnd reports whether the bracket at open closes at the end of s
// (so that (1,2)\cup(3,4) is not one bracket).
func closesAtEnd(s string, open int) bool {
	depth := 0
	for i := open; i < len(s); i++ {
		switch s[i] {
		case '\\':
			if i+1 < len(s) && (s[i+1] == '{' || s[i+1] == '}') {
				if s[i+1] == '{' {
					depth++
				} else {
					depth--
				}
				i++
				if depth == 0 {
					return i == len(s)-1
				}
			}
			continue
		case '(', '[', '{':
			depth++
		case ')', ']', '}':
			depth--
		}
		if depth == 0 {
			return i == len(s)-1
		}
	}
	return false
}

func elements(k kind, inner string, depth int) (value, bool) {
	parts := splitTop(inner, ",")
	if len(parts) > maxElems {
		return value{}, false
	}
	v := value{kind: k}
	for _, p := range parts {
		if p == "" {
			return value{}, false
		}
		e := read(p, depth+1)
		if k == setKind && e.kind == setKind {
			v.elems = append(v.elems, e.elems...) // \{1\pm\sqrt5, -2\} has three elements
			continue
		}
		v.elems = append(v.elems, e)
	}
	v.record = k == setKind && distinctNames(v.elems)
	return v, true
}

// distinctNames reports whether there are two values or more, each with a
// name, and no name twice (x = 1, x = 2 are two solutions, not a record).
func distinctNames(elems []value) bool {
	seen := map[string]bool{}
	for _, e := range elems {
		if e.name == "" || seen[e.name] {
			return false
		}
		seen[e.name] = true
	}
	return len(elems) > 1
}

// readList reads a, b, c (no brackets) as a set.
func readList(s string, depth int) (value, bool) {
	if !strings.Contains(s, ",") || len(splitTop(s, ",")) < 2 {
		return value{}, false
	}
	return elements(setKind, s, depth)
}

// readEquation keeps the right-hand side of name = value (remembering the
// equation when it has one =), and of (x, y) = value; any other L = R whose
// sides parse is an equation.
func readEquation(s string, depth int) (value, bool) {
	if !strings.Contains(s, "=") {
		return value{}, false
	}
	parts := splitTop(s, "=")
	if len(parts) < 2 {
		return value{}, false
	}
	lhs := strings.ReplaceAll(parts[0], " ", "")
	if namesRe.MatchString(lhs) {
		return read(parts[len(parts)-1], depth+1), true
	}
	eq := difference(parts)
	if figure := figureRe.MatchString(lhs); figure || lhsRe.MatchString(lhs) {
		v := read(parts[len(parts)-1], depth+1)
		if v.kind == scalarKind && !figure {
			v.eq = eq
		}
		v.name, v.figure = strings.NewReplacer("{", "", "}", "").Replace(lhs), figure
		return v, true
	}
	if eq == nil {
		return value{}, false
	}
	return value{kind: equationKind, text: s, expr: eq}, true
}

// readChain reads an equation chain whose left is not a name as its last
// side, when that side has no variables and either every side has none
// (10,200 + 255 = 10,455) or there are three sides or more (a = b = 0):
// what is left is a computation shown with its result. Thousands
// separators in its numbers are joined.
func readChain(s string, depth int) (value, bool) {
	if !strings.Contains(s, "=") {
		return value{}, false
	}
	sides := splitTop(s, "=")
	if len(sides) < 2 || lhsRe.MatchString(sides[0]) || figureRe.MatchString(sides[0]) || namesRe.MatchString(sides[0]) {
		return value{}, false
	}
	last, ok := joinThousands(sides[len(sides)-1])
	if !ok || !constant(last) {
		return value{}, false
	}
	if first, ok := joinThousands(sides[0]); len(sides) == 2 && (!ok || !constant(first)) {
		return value{}, false // 2x + 4y - 3 = 0 is an equation
	}
	return read(last, depth+1), true
}

// joinThousands joins every number with comma thousands separators in s
// (10,200 + 255); false when a comma of s is not one.
func joinThousands(s string) (string, bool) {
	if !strings.Contains(s, ",") {
		return s, true
	}
	joined := thousandsIn.ReplaceAllStringFunc(s, func(m string) string { return strings.ReplaceAll(m, ",", "") })
	return joined, !strings.Contains(joined, ",")
}

// constant reports whether s parses as an expression with no variables.
func constant(s string) bool {
	e, err := parseExpr(s)
	if err != nil {
		return false
	}
	vars := map[string]bool{}
	variables(e, vars)
	return len(vars) == 0
}

// difference is L - R for the two sides of an equation; nil when there are
// more sides or one does not parse.
func difference(sides []string) *node {
	if len(sides) != 2 {
		return nil
	}
	l, errL := parseExpr(sides[0])
	r, errR := parseExpr(sides[1])
	if errL != nil || errR != nil {
		return nil
	}
	return linkSequences(&node{op: "+", args: []*node{l, {op: "neg", args: []*node{r}}}})
}

// interval reads the endpoints of an interval.
func interval(loClosed, hiClosed bool, parts []string, depth int) (value, bool) {
	v := value{kind: intervalKind, loClosed: loClosed, hiClosed: hiClosed}
	var ok bool
	if v.lo, v.loInf, ok = endpoint(parts[0], depth); !ok {
		return value{}, false
	}
	if v.hi, v.hiInf, ok = endpoint(parts[1], depth); !ok {
		return value{}, false
	}
	if v.loInf != 0 {
		v.loClosed = false // [-∞ is read as (-∞
	}
	if v.hiInf != 0 {
		v.hiClosed = false
	}
	return v, true
}

// endpoint reads an interval endpoint: ±\infty or a scalar.
func endpoint(s string, depth int) (*value, int, bool) {
	switch strings.ReplaceAll(s, " ", "") {
	case `\infty`, `+\infty`, "oo", "+oo":
		return nil, 1, true
	case `-\infty`, "-oo":
		return nil, -1, true
	}
	e := read(s, depth+1)
	return &e, 0, e.kind == scalarKind
}

// openInterval reads a tuple (a, b) as the open interval.
func openInterval(t value) value {
	return value{kind: intervalKind, lo: &t.elems[0], hi: &t.elems[1]}
}

// readInequality reads an inequality in one variable as an interval:
// x < 3, x \ge 0, 3 > x, -1 < x \le 2, |x| > 2, 0 < f(x) \le 1.
func readInequality(s string, depth int) (value, bool) {
	if !strings.ContainsAny(s, "<>") && !strings.Contains(s, `\le`) && !strings.Contains(s, `\ge`) {
		return value{}, false
	}
	locs := relationRe.FindAllStringIndex(s, -1)
	if len(locs) == 0 || len(locs) > 2 {
		return value{}, false
	}
	var sides, rels []string
	prev := 0
	for _, l := range locs {
		sides = append(sides, strings.TrimSpace(s[prev:l[0]]))
		rels = append(rels, s[l[0]:l[1]])
		prev = l[1]
	}
	sides = append(sides, strings.TrimSpace(s[prev:]))
	if len(sides) == 3 {
		return readChainOf(sides, rels, depth)
	}
	switch {
	case isVariable(sides[0]): // x < 3
		return bound(rels[0], sides[1], depth)
	case isVariable(sides[1]): // 3 > x is x < 3
		return bound(flip(rels[0]), sides[0], depth)
	case absolute(sides[0]): // |x| < 3
		return absBound(rels[0], sides[1], depth)
	case absolute(sides[1]): // 3 > |x|
		return absBound(flip(rels[0]), sides[0], depth)
	}
	return solveLinear(sides[0], rels[0], sides[1], depth)
}

// readChainOf reads a < m < b (both relations the same way) for a variable,
// |x| or a range f(x) in the middle.
func readChainOf(sides, rels []string, depth int) (value, bool) {
	if less(rels[0]) != less(rels[1]) {
		return value{}, false
	}
	lo, hi, loRel, hiRel := sides[0], sides[2], rels[0], rels[1]
	if !less(rels[0]) { // b > x > a
		lo, hi, loRel, hiRel = sides[2], sides[0], flip(rels[1]), flip(rels[0])
	}
	switch mid := sides[1]; {
	case absolute(mid):
		l, okL := newEdge(lo, loRel == `\le`)
		h, okH := newEdge(hi, hiRel == `\le`)
		if !okL || !okH {
			return value{}, false
		}
		return absSet(l, h, depth)
	case isVariable(mid), isRange(mid) && constant(lo) && constant(hi):
		return interval(loRel == `\le`, hiRel == `\le`, []string{lo, hi}, depth)
	}
	return value{}, false
}

// bound is the interval of x rel b.
func bound(rel, b string, depth int) (value, bool) {
	switch rel {
	case "<", `\le`:
		return interval(false, rel == `\le`, []string{`-\infty`, b}, depth)
	default:
		return interval(rel == `\ge`, false, []string{b, `\infty`}, depth)
	}
}

func less(rel string) bool { return rel == "<" || rel == `\le` }

func flip(rel string) string {
	return map[string]string{"<": ">", ">": "<", `\le`: `\ge`, `\ge`: `\le`}[rel]
}
