package verify

import (
	"errors"
	"fmt"
	"math/big"
	"slices"
	"strings"
)

// node is one node of a scalar expression.
type node struct {
	op   string   // "num", "var", "i", "pi", "+", "*", "/", "neg", "^", "!", "sqrt", "root", "binom", "abs", "matrix", "sum", "prod", "seq", or a function name
	num  *big.Rat // op "num"
	lit  string   // op "num": the literal as written (0.0833333); op "matrix": its environment
	name string   // op "var"; "sum" and "prod": the index; "seq": the sequence
	args []*node  // "sum" and "prod": the bounds and the summand; "seq": the index
}

// token is one lexical unit of LaTeX math: a number, a letter, a macro
// (with its backslash), a single character or, in matrix arithmetic, a
// whole matrix environment.
type token struct {
	kind byte // 'n' number, 'l' letter, 'm' macro, 'c' character, 'M' matrix
	text string
}

// functions are the names applied to an argument, with or without a
// backslash.
var functions = map[string]bool{"sin": true, "cos": true, "tan": true, "sec": true, "csc": true, "cot": true,
	"arcsin": true, "arccos": true, "arctan": true, "sinh": true, "cosh": true, "tanh": true,
	"log": true, "ln": true, "exp": true, "lg": true}

// greek letters are variables.
var greek = map[string]bool{`\alpha`: true, `\beta`: true, `\gamma`: true, `\delta`: true, `\theta`: true,
	`\lambda`: true, `\mu`: true, `\phi`: true, `\varphi`: true, `\omega`: true, `\sigma`: true, `\tau`: true,
	`\rho`: true, `\epsilon`: true, `\varepsilon`: true, `\psi`: true, `\xi`: true, `\eta`: true, `\kappa`: true,
	`\zeta`: true, `\nu`: true, `\chi`: true}

// lex splits s into tokens; spaces separate tokens and are dropped. With
// matrices, each \begin{…}…\end{…} is one token.
func lex(s string, matrices bool) ([]token, error) {
	var toks []token
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n':
			i++
		case matrices && strings.HasPrefix(s[i:], envBegin):
			end, ok := envEnd(s, i)
			if !ok {
				return nil, errSyntax
			}
			toks = append(toks, token{'M', s[i:end]})
			i = end
		case isDigit(c) || c == '.' && i+1 < len(s) && isDigit(s[i+1]):
			j := i
			for j < len(s) && isDigit(s[j]) {
				j++
			}
			if j < len(s) && s[j] == '.' {
				j++
				for j < len(s) && isDigit(s[j]) {
					j++
				}
			}
			j = scientific(s, j)
			toks = append(toks, token{'n', s[i:j]})
			i = j
		case c == '\\':
			j := i + 1
			for j < len(s) && isLetter(s[j]) {
				j++
			}
			if j == i+1 && j < len(s) {
				j++ // \{ \} \| and the like
			}
			toks = append(toks, token{'m', s[i:j]})
			i = j
		case isLetter(c):
			j := i
			for j < len(s) && isLetter(s[j]) {
				j++
			}
			toks = append(toks, wordTokens(s[i:j])...)
			i = j
		case c < 0x80:
			toks = append(toks, token{'c', string(c)})
			i++
		default:
			return nil, fmt.Errorf("character %q", s[i:])
		}
	}
	return toks, nil
}

// scientific extends a number ending at j by an exponent part (e3, E-5).
func scientific(s string, j int) int {
	if j < len(s) && (s[j] == 'e' || s[j] == 'E') {
		k := j + 1
		if k < len(s) && (s[k] == '+' || s[k] == '-') {
			k++
		}
		if k < len(s) && isDigit(s[k]) {
			for k < len(s) && isDigit(s[k]) {
				k++
			}
			return k
		}
	}
	return j
}

// wordTokens splits a run of letters: a function name is one token (as a
// macro), anything else one letter each (implicit multiplication).
func wordTokens(w string) []token {
	var toks []token
	for len(w) > 0 {
		matched := false
		for _, n := range []string{"arcsin", "arccos", "arctan", "sinh", "cosh", "tanh", "sqrt", "sin", "cos",
			"tan", "sec", "csc", "cot", "log", "exp", "ln", "pi"} {
			if strings.HasPrefix(w, n) {
				toks = append(toks, token{'m', `\` + n})
				w, matched = w[len(n):], true
				break
			}
		}
		if !matched {
			toks = append(toks, token{'l', w[:1]})
			w = w[1:]
		}
	}
	return toks
}

// parser is a recursive-descent parser of one scalar expression.
type parser struct {
	toks  []token
	pos   int
	depth int
	bound []string // the indices of the sums being read, innermost last
}

var errSyntax = errors.New("not an expression")

// parseExpr parses s as a scalar expression.
func parseExpr(s string) (*node, error) { return parse(s, false) }

// parseMatrixExpr parses s as an expression whose operands may be matrix
// environments (nodes "matrix").
func parseMatrixExpr(s string) (*node, error) { return parse(s, true) }

// parse parses s as an expression, with matrix operands or not.
func parse(s string, matrices bool) (*node, error) {
	toks, err := lex(s, matrices)
	if err != nil {
		return nil, err
	}
	if len(toks) == 0 {
		return nil, errSyntax
	}
	p := &parser{toks: toks}
	n, err := p.sum()
	if err != nil {
		return nil, err
	}
	if p.pos != len(p.toks) {
		return nil, fmt.Errorf("%w: unexpected %q", errSyntax, p.toks[p.pos].text)
	}
	return linkSequences(n), nil
}

func (p *parser) peek() token {
	if p.pos < len(p.toks) {
		return p.toks[p.pos]
	}
	return token{}
}

func (p *parser) accept(texts ...string) bool {
	t := p.peek()
	for _, x := range texts {
		if t.kind != 0 && t.text == x {
			p.pos++
			return true
		}
	}
	return false
}

func (p *parser) expect(text string) error {
	if !p.accept(text) {
		return fmt.Errorf("%w: want %q", errSyntax, text)
	}
	return nil
}

// maxDepth bounds the nesting of an expression.
const maxDepth = 200

func (p *parser) sum() (*node, error) {
	if p.depth++; p.depth > maxDepth {
		return nil, errTooLarge
	}
	defer func() { p.depth-- }()
	left, err := p.product()
	if err != nil {
		return nil, err
	}
	for {
		switch {
		case p.accept("+"):
			right, err := p.product()
			if err != nil {
				return nil, err
			}
			left = &node{op: "+", args: []*node{left, right}}
		case p.accept("-"):
			right, err := p.product()
			if err != nil {
				return nil, err
			}
			left = &node{op: "+", args: []*node{left, {op: "neg", args: []*node{right}}}}
		default:
			return left, nil
		}
	}
}

func (p *parser) product() (*node, error) {
	left, err := p.signed()
	if err != nil {
		return nil, err
	}
	for {
		switch {
		case p.accept("*", `\cdot`, `\times`, `\ast`):
			right, err := p.signed()
			if err != nil {
				return nil, err
			}
			left = &node{op: "*", args: []*node{left, right}}
		case p.accept("/", `\div`):
			right, err := p.signed()
			if err != nil {
				return nil, err
			}
			left = &node{op: "/", args: []*node{left, right}}
		case p.startsPrimary():
			mixed := left.op == "num" && left.num.IsInt() && p.peek().text == `\frac`
			right, err := p.power()
			if err != nil {
				return nil, err
			}
			if mixed && isProperFraction(right) {
				left = &node{op: "+", args: []*node{left, right}} // 2\frac{1}{2} is 5/2
			} else {
				left = &node{op: "*", args: []*node{left, right}}
			}
		default:
			return left, nil
		}
	}
}

// isProperFraction reports whether n is \frac{a}{b} of natural numbers with a < b.
func isProperFraction(n *node) bool {
	if n.op != "/" || n.args[0].op != "num" || n.args[1].op != "num" {
		return false
	}
	a, b := n.args[0].num, n.args[1].num
	return a.IsInt() && b.IsInt() && a.Sign() > 0 && a.Cmp(b) < 0
}

// startsPrimary reports whether the next token can begin an implicit factor.
func (p *parser) startsPrimary() bool {
	t := p.peek()
	switch t.kind {
	case 'n', 'l', 'M':
		return true
	case 'm':
		return t.text == `\frac` || t.text == `\sqrt` || t.text == `\pi` || t.text == `\binom` ||
			t.text == `\sum` || t.text == `\prod` || functions[t.text[1:]] || greek[t.text]
	case 'c':
		return t.text == "(" || t.text == "{" || t.text == "["
	}
	return false
}

func (p *parser) signed() (*node, error) {
	if p.accept("-") {
		n, err := p.signed()
		if err != nil {
			return nil, err
		}
		return &node{op: "neg", args: []*node{n}}, nil
	}
	if p.accept("+") {
		return p.signed()
	}
	return p.power()
}

func (p *parser) power() (*node, error) {
	base, err := p.postfix()
	if err != nil {
		return nil, err
	}
	if !p.accept("^") {
		return base, nil
	}
	var exp *node
	if p.accept("-") {
		e, err := p.argument()
		if err != nil {
			return nil, err
		}
		exp = &node{op: "neg", args: []*node{e}}
	} else if exp, err = p.argument(); err != nil {
		return nil, err
	}
	return &node{op: "^", args: []*node{base, exp}}, nil
}

func (p *parser) postfix() (*node, error) {
	n, err := p.primary()
	if err != nil {
		return nil, err
	}
	for p.accept("!") {
		n = &node{op: "!", args: []*node{n}}
	}
	return n, nil
}

// argument is a braced group or a single primary (a whole number: 2^10 is 1024).
func (p *parser) argument() (*node, error) {
	if p.accept("{") {
		n, err := p.sum()
		if err != nil {
			return nil, err
		}
		return n, p.expect("}")
	}
	return p.postfix()
}

// digitArgument is an argument of \frac: a braced group or one character
// (\frac13 is 1/3).
func (p *parser) digitArgument() (*node, error) {
	if t := p.peek(); t.kind == 'n' && len(t.text) > 1 {
		p.toks[p.pos].text = t.text[1:]
		r, err := parseNumber(t.text[:1])
		return &node{op: "num", num: r}, err
	}
	return p.argument()
}

func (p *parser) primary() (*node, error) {
	t := p.peek()
	if t.kind == 0 {
		return nil, fmt.Errorf("%w: unexpected end", errSyntax)
	}
	p.pos++
	switch t.kind {
	case 'n':
		r, err := parseNumber(t.text)
		return &node{op: "num", num: r, lit: t.text}, err
	case 'l':
		if t.text == "i" && !p.binds(t) {
			return &node{op: "i"}, nil
		}
		return p.variable(t.text)
	case 'c':
		return p.group(t.text)
	case 'M':
		return &node{op: "matrix", lit: t.text}, nil
	}
	return p.macro(t.text)
}

// group parses a parenthesised, braced or bracketed expression, or |x|.
func (p *parser) group(open string) (*node, error) {
	closer := map[string]string{"(": ")", "{": "}", "[": "]", "|": "|"}[open]
	if closer == "" {
		return nil, fmt.Errorf("%w: unexpected %q", errSyntax, open)
	}
	n, err := p.sum()
	if err != nil {
		return nil, err
	}
	if err := p.expect(closer); err != nil {
		return nil, err
	}
	if open == "|" {
		return &node{op: "abs", args: []*node{n}}, nil
	}
	return n, nil
}

// variable reads a name with an optional subscript (x_1, a_{n}); a
// subscript that holds a sum's index is a term of a sequence (F_{n-k}).
func (p *parser) variable(name string) (*node, error) {
	if !p.accept("_") {
		return &node{op: "var", name: name}, nil
	}
	t := p.peek()
	if t.kind == 0 {
		return nil, errSyntax
	}
	p.pos++
	sub := []token{t}
	if t.text == "{" {
		start := p.pos
		for p.peek().kind != 0 && p.peek().text != "}" {
			p.pos++
		}
		if err := p.expect("}"); err != nil {
			return nil, err
		}
		sub = p.toks[start : p.pos-1]
	}
	if slices.ContainsFunc(sub, p.binds) {
		return p.sequence(name, sub)
	}
	var b strings.Builder
	for _, s := range sub {
		b.WriteString(s.text)
	}
	return &node{op: "var", name: name + "_" + b.String()}, nil
}

// twoArguments reads the two arguments of \frac or \binom (\frac13 is 1/3)
// as the operands of op.
func (p *parser) twoArguments(op string) (*node, error) {
	a, err := p.digitArgument()
	if err != nil {
		return nil, err
	}
	b, err := p.digitArgument()
	if err != nil {
		return nil, err
	}
	return &node{op: op, args: []*node{a, b}}, nil
}

func (p *parser) macro(m string) (*node, error) {
	switch {
	case m == `\frac`:
		return p.twoArguments("/")
	case m == `\binom`:
		return p.twoArguments("binom")
	case m == `\sqrt`:
		return p.root()
	case m == `\pi`:
		return &node{op: "pi"}, nil
	case m == `\sum` || m == `\prod`:
		return p.bigOperator(m[1:])
	case greek[m]:
		return p.variable(m)
	case functions[strings.TrimPrefix(m, `\`)]:
		return p.function(strings.TrimPrefix(m, `\`))
	}
	return nil, fmt.Errorf("%w: macro %s", errSyntax, m)
}

// root parses \sqrt{x}, \sqrt[n]{x} and \sqrt3.
func (p *parser) root() (*node, error) {
	if p.accept("[") {
		n, err := p.sum()
		if err != nil {
			return nil, err
		}
		if err := p.expect("]"); err != nil {
			return nil, err
		}
		x, err := p.argument()
		if err != nil {
			return nil, err
		}
		return &node{op: "root", args: []*node{x, n}}, nil
	}
	x, err := p.argument()
	if err != nil {
		return nil, err
	}
	return &node{op: "sqrt", args: []*node{x}}, nil
}

// function parses a function application: \sin x, \sin(x), \sin^2 x, \log_2 8.
func (p *parser) function(name string) (*node, error) {
	var base, exp *node
	var err error
	if name == "log" && p.accept("_") {
		if base, err = p.argument(); err != nil {
			return nil, err
		}
	}
	if p.accept("^") {
		if exp, err = p.argument(); err != nil {
			return nil, err
		}
	}
	var arg *node
	if p.peek().text == "(" {
		arg, err = p.postfix()
	} else {
		arg, err = p.power()
	}
	if err != nil {
		return nil, err
	}
	n := &node{op: name, args: []*node{arg}}
	if base != nil {
		n = &node{op: "/", args: []*node{n, {op: "ln", args: []*node{base}}}}
		n.args[0].op = "ln"
	}
	if exp != nil {
		n = &node{op: "^", args: []*node{n, exp}}
	}
	return n, nil
}

// parseNumber reads a decimal literal (digits, an optional point, an
// optional exponent of at most four digits) as an exact rational.
func parseNumber(s string) (*big.Rat, error) {
	if i := strings.IndexAny(s, "eE"); i >= 0 && len(strings.TrimLeft(s[i+1:], "+-")) > 4 {
		return nil, errTooLarge
	}
	r, ok := new(big.Rat).SetString(s)
	if !ok {
		return nil, fmt.Errorf("%w: number %q", errSyntax, s)
	}
	return r, nil
}
