package symbolic

import (
	"errors"
	"strings"
	"unicode"
	"unicode/utf8"
)

// errUnsupported marks input sympy accepts but that this package does not
// model (a rarely used sympy function, a comparison, a tuple...). DiffIsZero
// answers false for it, which is what sympy answers in nearly every such case.
var errUnsupported = errors.New("symbolic: unsupported expression")

// nodeKind says what an AST node is.
type nodeKind int

const (
	nNum      nodeKind = iota // a number literal: text
	nSym                      // a sympy Symbol: text is its name
	nConst                    // pi, E, I, oo, zoo, nan: text
	nCall                     // a function call: text is the function, args its arguments
	nAdd                      // args[0] + args[1]
	nSub                      // args[0] - args[1]
	nMul                      // args[0] * args[1]
	nDiv                      // args[0] / args[1]
	nFloorDiv                 // args[0] // args[1]
	nMod                      // args[0] % args[1]
	nPow                      // args[0] ** args[1]
	nNeg                      // -args[0]
	nFact                     // factorial(args[0])
	nFact2                    // factorial2(args[0]), written "!!"
	nSum                      // the sum of args (folded sums only)
)

// node is one node of the parsed expression.
type node struct {
	kind nodeKind
	text string
	args []*node
	num  *number // the value of an nNum node once folded
	hash uint64  // structural hash of a folded node
	fsum uint64  // for a folded product, the sum of its factors' hashes
}

// pyKeywords are Python's reserved words: sympy leaves them alone, so the
// compiled expression is a syntax error.
var pyKeywords = map[string]bool{
	"False": true, "None": true, "True": true, "and": true, "as": true, "assert": true,
	"async": true, "await": true, "break": true, "class": true, "continue": true,
	"def": true, "del": true, "elif": true, "else": true, "except": true,
	"finally": true, "for": true, "from": true, "global": true, "if": true,
	"import": true, "in": true, "is": true, "lambda": true, "nonlocal": true,
	"not": true, "or": true, "pass": true, "raise": true, "return": true,
	"try": true, "while": true, "with": true, "yield": true,
}

// constants are the non-callable names of sympy's namespace that DiffIsZero models.
var constants = map[string]bool{"pi": true, "E": true, "I": true, "oo": true, "zoo": true, "nan": true}

// functions are the callable names of sympy's namespace that DiffIsZero
// models. Other functions (log, sin, exp...) have three letters or more and
// never pass the guard.
var functions = map[string]bool{"sqrt": true, "re": true, "im": true, "ln": true}

// otherNames are the remaining names of `from sympy import *` (plus Python's
// built-in functions) that a guarded input can contain: at most two distinct
// letters once "sqrt" and "frac" are deleted. They are not split into letters
// the way unknown names are, and using them makes the expression unsupported.
var otherNames = map[string]bool{
	"Add": true, "CC": true, "Ci": true, "E1": true, "EX": true, "Ei": true, "Eq": true,
	"FF": true, "FU": true, "GF": true, "Ge": true, "Gt": true, "Id": true, "LC": true,
	"LM": true, "LT": true, "Le": true, "Li": true, "Lt": true, "N": true, "Ne": true,
	"O": true, "Or": true, "Q": true, "QQ": true, "QQ_I": true, "RR": true, "S": true,
	"Si": true, "ZZ": true, "ZZ_I": true, "all": true, "csc": true, "eye": true,
	"ff": true, "fft": true, "frac": true, "fu": true, "gff": true, "hn1": true,
	"hn2": true, "id": true, "jn": true, "li": true, "ntt": true, "rf": true, "yn": true,
}

func inNamespace(name string) bool { return constants[name] || functions[name] || otherNames[name] }

// greekNames are the lower-case Greek letter names Python's unicodedata knows;
// sympy's split_symbols never splits them ("xi" stays one symbol).
var greekNames = map[string]bool{
	"alpha": true, "beta": true, "gamma": true, "delta": true, "epsilon": true, "zeta": true,
	"eta": true, "theta": true, "iota": true, "kappa": true, "lamda": true, "lambda": true,
	"mu": true, "nu": true, "xi": true, "omicron": true, "pi": true, "rho": true,
	"sigma": true, "tau": true, "upsilon": true, "phi": true, "chi": true, "psi": true,
	"omega": true, "digamma": true, "stigma": true, "koppa": true, "sampi": true,
	"heta": true, "san": true, "sho": true, "yot": true,
}

// parser is a recursive-descent parser for the Python expression grammar,
// after sympy's transformations: unknown names become symbols split into
// letters, adjacent operands multiply, "!" is a factorial.
type parser struct {
	toks []token
	pos  int
	b    *budget
}

// parse parses s (already with "^" replaced by "**") into an AST.
func parse(s string, b *budget) (*node, error) {
	toks, err := lex(s)
	if err != nil {
		return nil, err
	}
	p := &parser{toks: toks, b: b}
	n, err := p.expr()
	if err != nil {
		return nil, err
	}
	if p.peek().kind != tokEnd {
		return nil, p.rest()
	}
	return n, nil
}

func (p *parser) peek() token { return p.toks[p.pos] }

func (p *parser) next() token {
	t := p.toks[p.pos]
	if t.kind != tokEnd {
		p.pos++
	}
	return t
}

func (p *parser) isOp(text string) bool {
	t := p.peek()
	return t.kind == tokOp && t.text == text
}

// rest classifies a token that ends the expression early: Python operators
// sympy evaluates into something that is not an expression (comparisons,
// tuples, logic) are unsupported, anything else is a syntax error.
func (p *parser) rest() error {
	t := p.peek()
	if t.kind == tokOp {
		switch t.text {
		case "==", "!=", "<", ">", "<=", ">=", ",", "&", "|", "<<", ">>", "@", "[", ".":
			return errUnsupported
		}
	}
	return errSyntax
}

// expr parses a sum: term (("+" | "-") term)*.
func (p *parser) expr() (*node, error) {
	left, err := p.term()
	if err != nil {
		return nil, err
	}
	for p.isOp("+") || p.isOp("-") {
		op := p.next().text
		right, err := p.term()
		if err != nil {
			return nil, err
		}
		kind := nAdd
		if op == "-" {
			kind = nSub
		}
		left = &node{kind: kind, args: []*node{left, right}}
	}
	return left, nil
}

// startsOperand reports whether the next token can begin an operand; sympy's
// implicit multiplication puts a "*" before it.
func (p *parser) startsOperand() bool {
	t := p.peek()
	return t.kind == tokNum || t.kind == tokName || t.kind == tokPiece || (t.kind == tokOp && t.text == "(")
}

// term parses a product: factor (("*" | "/" | "//" | "%" | implicit) factor)*.
func (p *parser) term() (*node, error) {
	left, err := p.factor()
	if err != nil {
		return nil, err
	}
	for {
		if err := p.b.check(); err != nil {
			return nil, err
		}
		kind := nMul
		switch {
		case p.isOp("*"):
		case p.isOp("/"):
			kind = nDiv
		case p.isOp("//"):
			kind = nFloorDiv
		case p.isOp("%"):
			kind = nMod
		case p.startsOperand():
			right, err := p.factor()
			if err != nil {
				return nil, err
			}
			left = &node{kind: nMul, args: []*node{left, right}}
			continue
		default:
			return left, nil
		}
		p.next()
		right, err := p.factor()
		if err != nil {
			return nil, err
		}
		left = &node{kind: kind, args: []*node{left, right}}
	}
}

// factor parses unary signs: ("+" | "-") factor | power.
func (p *parser) factor() (*node, error) {
	if err := p.b.check(); err != nil {
		return nil, err
	}
	switch {
	case p.isOp("+"):
		p.next()
		return p.factor()
	case p.isOp("-"):
		p.next()
		x, err := p.factor()
		if err != nil {
			return nil, err
		}
		return &node{kind: nNeg, args: []*node{x}}, nil
	case p.isOp("~"):
		return nil, errUnsupported
	}
	return p.power()
}

// power parses primary ["**" factor]; Python's "**" binds right to left and
// takes a signed operand on its right.
func (p *parser) power() (*node, error) {
	base, err := p.primary()
	if err != nil {
		return nil, err
	}
	if !p.isOp("**") {
		return base, nil
	}
	p.next()
	exp, err := p.factor()
	if err != nil {
		return nil, err
	}
	return &node{kind: nPow, args: []*node{base, exp}}, nil
}

// primary parses an operand followed by factorial marks.
func (p *parser) primary() (*node, error) {
	x, err := p.atom()
	if err != nil {
		return nil, err
	}
	bangs := 0
	for p.isOp("!") {
		p.next()
		bangs++
	}
	switch bangs {
	case 0:
	case 1:
		x = &node{kind: nFact, args: []*node{x}}
	case 2:
		x = &node{kind: nFact2, args: []*node{x}}
	default:
		return nil, errSyntax
	}
	if p.isOp("!") {
		return nil, errSyntax
	}
	return x, nil
}

// atom parses a number, a name (or a call of a sympy function) or a parenthesised expression.
func (p *parser) atom() (*node, error) {
	t := p.next()
	switch t.kind {
	case tokNum:
		return numberNode(t.text), nil
	case tokName:
		return p.name(t.text)
	case tokPiece:
		return t.piece, nil
	case tokOp:
		switch t.text {
		case "(":
			if p.isOp(")") {
				return nil, errUnsupported // the empty tuple
			}
			x, err := p.expr()
			if err != nil {
				return nil, err
			}
			if !p.isOp(")") {
				return nil, p.rest()
			}
			p.next()
			return x, nil
		case "[", "{", "...":
			return nil, errUnsupported
		}
	}
	return nil, errSyntax
}

// numberNode turns a Python number literal into an AST node; an imaginary
// literal 2j becomes 2*I, as sympy's auto_number does.
func numberNode(text string) *node {
	if last := text[len(text)-1]; last == 'j' || last == 'J' {
		return &node{kind: nMul, args: []*node{{kind: nNum, text: text[:len(text)-1]}, {kind: nConst, text: "I"}}}
	}
	return &node{kind: nNum, text: text}
}

// name resolves an identifier the way sympy's auto_symbol and split_symbols do.
func (p *parser) name(name string) (*node, error) {
	if pyKeywords[name] {
		return nil, errSyntax
	}
	switch {
	case constants[name]:
		return &node{kind: nConst, text: name}, nil
	case functions[name]:
		if !p.isOp("(") {
			return nil, errUnsupported // a bare function object
		}
		return p.call(name)
	case otherNames[name]:
		return nil, errUnsupported
	}
	if !splittable(name) {
		return &node{kind: nSym, text: name}, nil
	}
	var pieces []*node
	for i := 0; i < len(name); {
		r, w := utf8.DecodeRuneInString(name[i:])
		var piece *node
		switch {
		case r >= '0' && r <= '9':
			j := i
			for j < len(name) && name[j] >= '0' && name[j] <= '9' {
				j++
			}
			piece = &node{kind: nNum, text: name[i:j]}
			w = j - i
		case unicode.IsDigit(r):
			return nil, errUnsupported
		case inNamespace(string(r)):
			if !constants[string(r)] {
				return nil, errUnsupported
			}
			piece = &node{kind: nConst, text: string(r)}
		default:
			piece = &node{kind: nSym, text: string(r)}
		}
		pieces = append(pieces, piece)
		i += w
	}
	// sympy wraps a factorial around the whole name before splitting it
	// ("xy!" is (x*y)!), but the pieces are separate operands for every other
	// operator ("2^xy" is 2**x*y): push them back as tokens.
	if p.isOp("!") {
		x := pieces[0]
		for _, piece := range pieces[1:] {
			x = &node{kind: nMul, args: []*node{x, piece}}
		}
		return x, nil
	}
	rest := make([]token, 0, len(p.toks)+len(pieces))
	rest = append(rest, p.toks[:p.pos]...)
	for _, piece := range pieces[1:] {
		rest = append(rest, token{kind: tokPiece, piece: piece})
	}
	p.toks = append(rest, p.toks[p.pos:]...)
	return pieces[0], nil
}

// splittable is sympy's _token_splittable: names with an underscore, Greek
// letter names and single characters stay whole.
func splittable(name string) bool {
	if strings.Contains(name, "_") || greekNames[strings.ToLower(name)] {
		return false
	}
	return utf8.RuneCountInString(name) > 1
}

// call parses the argument list of a sympy function.
func (p *parser) call(fn string) (*node, error) {
	p.next() // "("
	var args []*node
	if !p.isOp(")") {
		for {
			a, err := p.expr()
			if err != nil {
				return nil, err
			}
			args = append(args, a)
			if !p.isOp(",") {
				break
			}
			p.next()
		}
	}
	if !p.isOp(")") {
		return nil, p.rest()
	}
	p.next()
	if len(args) != 1 {
		return nil, errUnsupported
	}
	return &node{kind: nCall, text: fn, args: args}, nil
}
