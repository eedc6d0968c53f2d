package symbolic

import (
	"errors"
	"strings"
	"unicode"
	"unicode/utf8"
)

// errSyntax stands for every input sympy's parser rejects.
var errSyntax = errors.New("symbolic: syntax error")

type tokKind int

const (
	tokNum   tokKind = iota // a Python number literal
	tokName                 // a Python identifier
	tokOp                   // an operator or bracket
	tokPiece                // one piece of a name split into letters (set by the parser)
	tokEnd
)

type token struct {
	kind  tokKind
	text  string
	piece *node // the piece, for tokPiece
}

// pyOps lists the operators the lexer knows, longest first so that "**" wins over "*".
var pyOps = []string{
	"**=", "//=", ">>=", "<<=", "...",
	"**", "//", "==", "!=", "<=", ">=", "<<", ">>", "->", ":=",
	"+=", "-=", "*=", "/=", "%=", "&=", "|=", "@=",
	"+", "-", "*", "/", "%", "(", ")", "[", "]", "{", "}", ",", ":", ";", ".",
	"=", "<", ">", "&", "|", "~", "@", "!",
}

// lex splits s like Python 3.11's tokenize module does (spaces separate tokens
// and are dropped). A lone "!" is kept as an operator token: sympy turns it into
// a factorial. Characters Python cannot tokenize give errSyntax.
func lex(s string) ([]token, error) {
	var toks []token
	depth := 0
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\f':
			i++
			continue
		case c == '\n' || c == '\r':
			if depth == 0 {
				return nil, errSyntax // a second logical line
			}
			i++
			continue
		case c == '#' || c == '\\' || c == '\'' || c == '"':
			return nil, errSyntax
		}
		if n := numberLen(s[i:]); n > 0 {
			toks = append(toks, token{kind: tokNum, text: s[i : i+n]})
			i += n
			continue
		}
		if n := nameLen(s[i:]); n > 0 {
			toks = append(toks, token{kind: tokName, text: s[i : i+n]})
			i += n
			continue
		}
		matched := false
		for _, op := range pyOps {
			if strings.HasPrefix(s[i:], op) {
				switch op {
				case "(", "[", "{":
					depth++
				case ")", "]", "}":
					depth--
					if depth < 0 {
						return nil, errSyntax
					}
				}
				toks = append(toks, token{kind: tokOp, text: op})
				i += len(op)
				matched = true
				break
			}
		}
		if !matched {
			return nil, errSyntax
		}
	}
	if depth != 0 {
		return nil, errSyntax
	}
	return append(toks, token{kind: tokEnd}), nil
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// digitsLen matches [0-9](?:_?[0-9])* at the start of s.
func digitsLen(s string, digit func(byte) bool) int {
	if len(s) == 0 || !digit(s[0]) {
		return 0
	}
	n := 1
	for n < len(s) {
		if digit(s[n]) {
			n++
		} else if s[n] == '_' && n+1 < len(s) && digit(s[n+1]) {
			n += 2
		} else {
			break
		}
	}
	return n
}

// exponentLen matches [eE][-+]?[0-9](?:_?[0-9])* at the start of s.
func exponentLen(s string) int {
	if len(s) < 2 || (s[0] != 'e' && s[0] != 'E') {
		return 0
	}
	n := 1
	if s[n] == '+' || s[n] == '-' {
		n++
	}
	d := digitsLen(s[n:], isDigit)
	if d == 0 {
		return 0
	}
	return n + d
}

// numberLen returns the length of the Python number literal at the start of s,
// trying the alternatives in tokenize's order: imaginary, float, integer.
func numberLen(s string) int {
	if len(s) == 0 || !(isDigit(s[0]) || (s[0] == '.' && len(s) > 1 && isDigit(s[1]))) {
		return 0
	}
	float := floatLen(s)
	// Imagnumber: [0-9](?:_?[0-9])*[jJ] | Floatnumber[jJ]
	if d := digitsLen(s, isDigit); d > 0 && d < len(s) && (s[d] == 'j' || s[d] == 'J') {
		return d + 1
	}
	if float > 0 && float < len(s) && (s[float] == 'j' || s[float] == 'J') {
		return float + 1
	}
	if float > 0 {
		return float
	}
	return intLen(s)
}

// floatLen matches tokenize's Floatnumber (Pointfloat or Expfloat).
func floatLen(s string) int {
	d := digitsLen(s, isDigit)
	n := 0
	switch {
	case d > 0 && d < len(s) && s[d] == '.':
		n = d + 1 + digitsLen(s[d+1:], isDigit)
	case d == 0 && len(s) > 1 && s[0] == '.':
		if f := digitsLen(s[1:], isDigit); f > 0 {
			n = 1 + f
		}
	}
	if n > 0 {
		return n + exponentLen(s[n:])
	}
	if d > 0 {
		if e := exponentLen(s[d:]); e > 0 {
			return d + e
		}
	}
	return 0
}

// intLen matches tokenize's Intnumber: hex, binary, octal, then decimal, where a
// decimal starting with 0 is only zeros (so "025" is the two tokens "0" "25").
func intLen(s string) int {
	if len(s) > 2 && s[0] == '0' {
		var digit func(byte) bool
		switch s[1] {
		case 'x', 'X':
			digit = func(c byte) bool { return isDigit(c) || (c|0x20 >= 'a' && c|0x20 <= 'f') }
		case 'b', 'B':
			digit = func(c byte) bool { return c == '0' || c == '1' }
		case 'o', 'O':
			digit = func(c byte) bool { return c >= '0' && c <= '7' }
		}
		if digit != nil {
			// (?:_?[digit])+
			n := 2
			for n < len(s) {
				if digit(s[n]) {
					n++
				} else if s[n] == '_' && n+1 < len(s) && digit(s[n+1]) {
					n += 2
				} else {
					break
				}
			}
			if n > 2 {
				return n
			}
		}
	}
	if s[0] == '0' {
		return digitsLen(s, func(c byte) bool { return c == '0' })
	}
	return digitsLen(s, isDigit)
}

// nameLen returns the length of the identifier (\w+ not starting with a digit) at the start of s.
func nameLen(s string) int {
	n := 0
	for n < len(s) {
		r, w := utf8.DecodeRuneInString(s[n:])
		ok := r == '_' || unicode.IsLetter(r) ||
			(n > 0 && (unicode.IsDigit(r) || unicode.Is(unicode.Mn, r) || unicode.Is(unicode.Mc, r)))
		if !ok || r == utf8.RuneError {
			break
		}
		n += w
	}
	return n
}
