package latextext

import (
	"errors"
	"strings"
	"unicode"
)

// This file is the parser: LaTeX source -> node tree, following the tolerant
// parsing of pylatexenc's LatexWalker (recoverable errors are dropped and
// parsing goes on, as pylatexenc does by default).

// argSpec says how a macro's (or an environment's) arguments are read.
type argSpec struct {
	spec       string // one char per argument: '{' mandatory, '[' optional, '*' optional star
	optNoSpace bool   // an optional '[' argument must follow without whitespace
	mathMode   string // per argument: 'T' math, 'F' text, '-' unchanged; "" = all unchanged
	verbatim   string // "verb-macro" or "verbatim-environment" for verbatim readers
}

// envSpec is an environment's argument spec and whether its body is math.
type envSpec struct {
	args argSpec
	math bool
}

type nodeKind int

const (
	charsNode nodeKind = iota
	groupNode
	commentNode
	macroNode
	environmentNode
	specialsNode
	mathNode
)

// node is one element of the parsed tree.
type node struct {
	kind      nodeKind
	text      string  // chars, comment text, or specials characters
	name      string  // macro or environment name
	postSpace string  // whitespace after a macro name, or after a comment
	nodes     []*node // contents of a group, environment or math node
	display   bool    // math node: display rather than inline

	// Parsed arguments (macros and environments): hasArgs is false when the
	// argument parser failed or was not run. args has one entry per argSpec
	// character, nil for a missing optional argument.
	hasArgs bool
	args    []*node
	// pylatexenc 1.x view of the arguments, used by some replacements:
	// optArg is a leading optional argument, plainArgs the rest.
	// plainArgsNil is set for macros read as a single argument of another macro.
	optArg       *node
	plainArgs    []*node
	plainArgsNil bool
}

// legacyArgs fills optArg and plainArgs from args the way pylatexenc does.
func (n *node) legacyArgs(spec string) {
	i := 0
	for i < len(spec) && spec[i] == '*' {
		i++
	}
	rest := spec[i:]
	if strings.HasPrefix(rest, "[") && strings.Trim(rest[1:], "{") == "" {
		n.optArg = n.args[i]
		n.plainArgs = n.args[i+1:]
		return
	}
	n.plainArgs = n.args
}

type tokenKind int

const (
	charTok tokenKind = iota
	macroTok
	commentTok
	braceOpenTok
	braceCloseTok
	mathInlineTok
	mathDisplayTok
	specialsTok
	beginEnvTok
	endEnvTok
)

type token struct {
	kind      tokenKind
	arg       string // the char(s), macro name, comment, brace, math delimiter, specials or environment name
	pos, len  int
	preSpace  string
	postSpace string
}

// parseState is pylatexenc's ParsingState, reduced to what changes parsing.
type parseState struct {
	math  bool
	delim string // math delimiter when math is set
}

func (st parseState) withMath(math bool) parseState {
	if !math {
		return parseState{}
	}
	return parseState{math: true, delim: st.delim}
}

// endOfStream is pylatexenc's LatexWalkerEndOfStream: the input ended, after finalSpace.
type endOfStream struct{ finalSpace string }

func (e *endOfStream) Error() string { return "end of input" }

// parseError is a recoverable LatexWalkerParseError.
type parseError struct{ msg string }

func (e *parseError) Error() string { return e.msg }

// recoverable reports whether err is one pylatexenc's tolerant parser swallows.
func recoverable(err error) bool {
	var eos *endOfStream
	var pe *parseError
	return errors.As(err, &eos) || errors.As(err, &pe)
}

// maxDepth bounds nesting; pylatexenc stops with a RecursionError at a depth of
// a few hundred, so inputs this deep fail in both.
const maxDepth = 150

var errTooDeep = errors.New("input nested too deeply")

type parser struct {
	s     []rune
	depth int
}

// pyIsSpace is Python's str.isspace for one character.
func pyIsSpace(r rune) bool {
	switch {
	case r >= 0x09 && r <= 0x0d, r >= 0x1c && r <= 0x20, r == 0x85, r == 0xa0, r == 0x1680,
		r >= 0x2000 && r <= 0x200a, r == 0x2028, r == 0x2029, r == 0x202f, r == 0x205f, r == 0x3000:
		return true
	}
	return false
}

// pyIsAlpha is Python's str.isalpha for one character.
func pyIsAlpha(r rune) bool { return unicode.IsLetter(r) }

// pyIsWord is one character of Python's \w in a str pattern.
func pyIsWord(r rune) bool { return unicode.IsLetter(r) || unicode.IsNumber(r) || r == '_' }

func pyStrip(s string) string { return strings.TrimFunc(s, pyIsSpace) }

// getToken reads one token at pos. extraOpen/extraClose (0 if none) are an
// extra pair of brace characters; environments selects whether \begin and \end
// are environment tokens. The only error is *endOfStream.
func (p *parser) getToken(pos int, extraOpen, extraClose rune, environments bool, st parseState) (token, error) {
	s := p.s
	n := len(s)
	start := pos
	for pos < n && pyIsSpace(s[pos]) {
		pos++
		if pos-start >= 2 && s[pos-1] == '\n' && s[pos-2] == '\n' {
			return token{kind: charTok, arg: "\n\n", pos: pos - 2, len: 2, preSpace: string(s[start : pos-2])}, nil
		}
	}
	space := string(s[start:pos])
	if pos >= n {
		return token{}, &endOfStream{finalSpace: space}
	}
	switch c := s[pos]; {
	case c == '\\':
		return p.escapeToken(pos, space, environments)
	case c == '%':
		return p.commentToken(pos, space), nil
	case c == '{' || (extraOpen != 0 && c == extraOpen):
		return token{kind: braceOpenTok, arg: string(c), pos: pos, len: 1, preSpace: space}, nil
	case c == '}' || (extraClose != 0 && c == extraClose):
		return token{kind: braceCloseTok, arg: string(c), pos: pos, len: 1, preSpace: space}, nil
	}
	if s[pos] == '$' {
		if pos+1 < n && s[pos+1] == '$' && !(st.math && st.delim == "$") {
			return token{kind: mathDisplayTok, arg: "$$", pos: pos, len: 2, preSpace: space}, nil
		}
		return token{kind: mathInlineTok, arg: "$", pos: pos, len: 1, preSpace: space}, nil
	}
	if sp := p.specialsAt(pos); sp != "" {
		return token{kind: specialsTok, arg: sp, pos: pos, len: len([]rune(sp)), preSpace: space}, nil
	}
	return token{kind: charTok, arg: string(s[pos]), pos: pos, len: 1, preSpace: space}, nil
}

// specialsAt returns the longest specials sequence starting at pos, or "".
// The sequences are ASCII (TestSpecialsASCII), so bytes and runes count alike.
func (p *parser) specialsAt(pos int) string {
	best := ""
	for _, sp := range parserSpecials {
		if len(sp) > len(best) && p.hasASCIIAt(pos, sp) {
			best = sp
		}
	}
	return best
}

// hasASCIIAt reports whether the ASCII string sp occurs in the input at pos.
func (p *parser) hasASCIIAt(pos int, sp string) bool {
	if pos+len(sp) > len(p.s) {
		return false
	}
	for i := 0; i < len(sp); i++ {
		if p.s[pos+i] != rune(sp[i]) {
			return false
		}
	}
	return true
}

// plainChar reports whether getToken would read the character at pos < len(p.s)
// as a one-character charTok with no space before it: not whitespace, not
// one of \ % { } $ or the extra braces, and no specials sequence starts there.
func (p *parser) plainChar(pos int, extraOpen, extraClose rune) bool {
	switch c := p.s[pos]; {
	case c == '\\' || c == '%' || c == '{' || c == '}' || c == '$' || pyIsSpace(c):
		return false
	case extraOpen != 0 && c == extraOpen || extraClose != 0 && c == extraClose:
		return false
	}
	return p.specialsAt(pos) == ""
}

func (p *parser) escapeToken(pos int, space string, environments bool) (token, error) {
	s := p.s
	n := len(s)
	if pos+1 >= n {
		return token{}, &endOfStream{}
	}
	i := 2
	alpha := pyIsAlpha(s[pos+1])
	if alpha {
		for pos+i < n && pyIsAlpha(s[pos+i]) {
			i++
		}
	}
	macro := string(s[pos+1 : pos+i])
	switch macro {
	case "[", "]":
		return token{kind: mathDisplayTok, arg: `\` + macro, pos: pos, len: i, preSpace: space}, nil
	case "(", ")":
		return token{kind: mathInlineTok, arg: `\` + macro, pos: pos, len: i, preSpace: space}, nil
	}
	if environments && (macro == "begin" || macro == "end") {
		name, l, ok := p.environmentName(pos + i)
		if !ok {
			// pylatexenc reports a parse error and, being tolerant, reads "\begin" as plain characters.
			return token{kind: charTok, arg: `\` + macro, pos: pos, len: i, preSpace: space}, nil
		}
		kind := beginEnvTok
		if macro == "end" {
			kind = endEnvTok
		}
		return token{kind: kind, arg: name, pos: pos, len: i + l, preSpace: space}, nil
	}
	post := ""
	if alpha {
		j := pos + i
		for j < n && pyIsSpace(s[j]) {
			j++
			if j-(pos+i) >= 2 && s[j-1] == '\n' && s[j-2] == '\n' {
				// a blank line ends the macro's space: it is a new paragraph
				j -= 2
				break
			}
		}
		post = string(s[pos+i : j])
		i = j - pos
	}
	return token{kind: macroTok, arg: macro, pos: pos, len: i, preSpace: space, postSpace: post}, nil
}

// environmentName matches `\s*\{([\w* ._-]+)\}` at pos, returning the name and the match length.
func (p *parser) environmentName(pos int) (string, int, bool) {
	s := p.s
	i := pos
	for i < len(s) && pyIsSpace(s[i]) {
		i++
	}
	if i >= len(s) || s[i] != '{' {
		return "", 0, false
	}
	i++
	start := i
	for i < len(s) && (pyIsWord(s[i]) || strings.ContainsRune("* ._-", s[i])) {
		i++
	}
	if i == start || i >= len(s) || s[i] != '}' {
		return "", 0, false
	}
	return string(s[start:i]), i + 1 - pos, true
}

func (p *parser) commentToken(pos int, space string) token {
	s := p.s
	n := len(s)
	nl := -1
	for j := pos; j < n; j++ {
		if s[j] == '\n' || s[j] == '\r' {
			nl = j
			break
		}
	}
	if nl < 0 {
		return token{kind: commentTok, arg: string(s[pos+1:]), pos: pos, len: n - pos, preSpace: space}
	}
	end := nl + 1
	for end < n && pyIsSpace(s[end]) {
		end++
	}
	arg := string(s[pos+1 : nl])
	if end > nl+1 && (s[nl+1] == '\n' || s[nl+1] == '\r') {
		// a blank line follows: the comment ends at its newline, which starts a new paragraph
		return token{kind: commentTok, arg: arg, pos: pos, len: nl - pos, preSpace: space}
	}
	return token{kind: commentTok, arg: arg, pos: pos, len: end - pos, preSpace: space, postSpace: string(s[nl:end])}
}

// expression reads one macro argument: a single character, a macro (without
// its arguments), or a braced group. It returns the node and the position
// after it.
func (p *parser) expression(pos int, st parseState) (*node, int, error) {
	tok, err := p.getToken(pos, 0, 0, false, st)
	for err == nil && tok.kind == commentTok {
		// comments between a macro and its argument are skipped
		tok, err = p.getToken(tok.pos+tok.len, 0, 0, false, st)
	}
	if err != nil {
		return nil, 0, err
	}
	switch tok.kind {
	case macroTok:
		if tok.arg == "end" {
			return &node{kind: charsNode}, tok.pos, nil
		}
		return &node{kind: macroNode, name: tok.arg, postSpace: tok.postSpace, plainArgsNil: true}, tok.pos + tok.len, nil
	case specialsTok:
		return &node{kind: specialsNode, text: tok.arg}, tok.pos + tok.len, nil
	case braceOpenTok:
		return p.bracedGroup(tok.pos, '{', '}', st)
	case braceCloseTok:
		return &node{kind: charsNode}, tok.pos, nil
	case mathInlineTok, mathDisplayTok:
		if strings.HasPrefix(tok.arg, `\`) {
			return &node{kind: macroNode, name: tok.arg, plainArgsNil: true}, tok.pos + tok.len, nil
		}
		return &node{kind: charsNode, text: tok.arg}, tok.pos + tok.len, nil
	}
	return &node{kind: charsNode, text: tok.arg}, tok.pos + tok.len, nil
}

// optionalArg reads a [...] argument at pos, or returns nil when there is none.
func (p *parser) optionalArg(pos int, st parseState) (*node, int, error) {
	tok, err := p.getToken(pos, '[', ']', false, st)
	if err != nil {
		var eos *endOfStream
		if errors.As(err, &eos) {
			return nil, pos, nil
		}
		return nil, 0, err
	}
	if tok.kind == braceOpenTok && tok.arg == "[" {
		return p.bracedGroup(pos, '[', ']', st)
	}
	return nil, pos, nil
}

// bracedGroup reads a group opened by open at pos (after optional whitespace).
func (p *parser) bracedGroup(pos int, open, close rune, st parseState) (*node, int, error) {
	var eo, ec rune
	if open != '{' {
		eo, ec = open, close
	}
	first, err := p.getToken(pos, eo, ec, true, st)
	if err != nil {
		return nil, 0, err
	}
	if first.kind != braceOpenTok || first.arg != string(open) {
		return nil, 0, &parseError{"not an opening brace"}
	}
	nodes, end, err := p.nodes(first.pos+first.len, string(close), "", "", st)
	if err != nil {
		return nil, 0, err
	}
	return &node{kind: groupNode, nodes: nodes}, end, nil
}

// parseArgs reads the arguments described by spec at pos. It returns the
// argument nodes and the position after them.
func (p *parser) parseArgs(spec argSpec, pos int, st parseState) ([]*node, int, error) {
	if spec.verbatim != "" {
		return p.verbatimArg(spec.verbatim, pos)
	}
	args := make([]*node, 0, len(spec.spec))
	for j, kind := range spec.spec {
		inner := st
		if spec.mathMode != "" {
			switch spec.mathMode[j] {
			case 'T':
				if !st.math {
					inner = st.withMath(true)
				}
			case 'F':
				if st.math {
					inner = st.withMath(false)
				}
			}
		}
		switch kind {
		case '{':
			n, next, err := p.expression(pos, inner)
			if err != nil {
				return nil, 0, err
			}
			args = append(args, n)
			pos = next
		case '[':
			if spec.optNoSpace && pos < len(p.s) && pyIsSpace(p.s[pos]) {
				args = append(args, nil)
				continue
			}
			n, next, err := p.optionalArg(pos, inner)
			if err != nil {
				return nil, 0, err
			}
			args = append(args, n)
			pos = next
		case '*':
			// pylatexenc reads the star with its default parsing state.
			tok, err := p.getToken(pos, 0, 0, true, parseState{})
			if err != nil {
				return nil, 0, err
			}
			if tok.kind == charTok && strings.HasPrefix(tok.arg, "*") {
				args = append(args, &node{kind: charsNode, text: "*"})
				pos = tok.pos + 1
			} else {
				args = append(args, nil)
			}
		}
	}
	return args, pos, nil
}

// errPythonIndex stands for the IndexError pylatexenc raises when \verb ends the input.
var errPythonIndex = errors.New(`\verb at the end of the input`)

func (p *parser) verbatimArg(kind string, pos int) ([]*node, int, error) {
	s := p.s
	if kind == "verbatim-environment" {
		end := strings.Index(string(s[pos:]), `\end{verbatim}`)
		if end < 0 {
			return nil, 0, &parseError{`cannot find \end{verbatim}`}
		}
		l := len([]rune(string(s[pos:])[:end]))
		return []*node{{kind: charsNode, text: string(s[pos : pos+l])}}, pos + l, nil
	}
	if pos >= len(s) {
		return nil, 0, errPythonIndex
	}
	for pyIsSpace(s[pos]) {
		pos++
		if pos >= len(s) {
			return nil, 0, &parseError{`missing argument to \verb`}
		}
	}
	delim := s[pos]
	for end := pos + 1; end < len(s); end++ {
		if s[end] == delim {
			return []*node{{kind: charsNode, text: string(s[pos+1 : end])}}, end + 1, nil
		}
	}
	return nil, 0, &parseError{`end of input in \verb argument`}
}

// environment reads \begin{name}...\end{name} starting at the \begin token tok.
func (p *parser) environment(tok token, st parseState) (*node, int, error) {
	name := tok.arg
	pos := tok.pos + tok.len
	spec, known := parserEnvironments[name]
	env := &node{kind: environmentNode, name: name}
	args, next, err := p.parseArgs(spec.args, pos, st)
	switch {
	case err == nil:
		env.hasArgs, env.args = true, args
		env.legacyArgs(spec.args.spec)
		pos = next
	case !recoverable(err):
		return nil, 0, err
	}
	inner := st
	if known && spec.math {
		inner = parseState{math: true, delim: "{" + name + "}"}
	}
	nodes, end, err := p.nodes(pos, "", name, "", inner)
	if err != nil {
		return nil, 0, err
	}
	env.nodes = nodes
	return env, end, nil
}

// nodes reads nodes from pos until the closing brace stopBrace, the end of the
// environment stopEnv, the closing math delimiter stopMath, or the end of the
// input. It returns the nodes and the position after the closing token.
// Recoverable errors are dropped, as in pylatexenc's tolerant mode.
func (p *parser) nodes(pos int, stopBrace, stopEnv, stopMath string, st parseState) ([]*node, int, error) {
	p.depth++
	defer func() { p.depth-- }()
	if p.depth > maxDepth {
		return nil, 0, errTooDeep
	}
	var extraOpen, extraClose rune
	if stopBrace != "" && stopBrace != "}" {
		extraClose = []rune(stopBrace)[0]
		extraOpen = map[rune]rune{']': '[', ')': '(', '>': '<'}[extraClose]
	}

	var list []*node
	var chars strings.Builder
	hasChars := false
	flush := func(extra string) {
		if hasChars {
			list = append(list, &node{kind: charsNode, text: chars.String() + extra})
			chars.Reset()
			hasChars = false
		}
	}

	for {
		if end := p.plainChars(pos, extraOpen, extraClose, &chars); end > pos {
			pos, hasChars = end, true
			continue
		}
		tok, err := p.getToken(pos, extraOpen, extraClose, true, st)
		if err != nil {
			var eos *endOfStream
			if !errors.As(err, &eos) {
				return nil, 0, err
			}
			if eos.finalSpace != "" {
				chars.WriteString(eos.finalSpace)
				hasChars = true
				pos += len([]rune(eos.finalSpace))
			}
			flush("")
			return list, pos, nil
		}
		pos = tok.pos + tok.len
		if tok.kind == charTok {
			chars.WriteString(tok.preSpace + tok.arg)
			hasChars = true
			continue
		}
		if hasChars {
			flush(tok.preSpace)
		} else if tok.preSpace != "" {
			list = append(list, &node{kind: charsNode, text: tok.preSpace})
		}

		switch tok.kind {
		case braceCloseTok:
			if tok.arg == stopBrace {
				return list, pos, nil
			}
			// mismatched closing brace: dropped
		case endEnvTok:
			if stopEnv != "" && tok.arg == stopEnv {
				return list, pos, nil
			}
			// unexpected \end: dropped
		case mathInlineTok, mathDisplayTok:
			if stopMath != "" && tok.arg == stopMath {
				return list, pos, nil
			}
			if tok.arg == `\)` || tok.arg == `\]` {
				continue // closing delimiter that closes nothing: dropped
			}
			math, end, err := p.math(tok, pos)
			if err != nil {
				return nil, 0, err
			}
			pos = end
			list = append(list, math)
		case commentTok:
			list = append(list, &node{kind: commentNode, text: tok.arg, postSpace: tok.postSpace})
		case braceOpenTok:
			var close rune = '}'
			if tok.arg != "{" {
				close = extraClose
			}
			group, end, err := p.bracedGroup(tok.pos, []rune(tok.arg)[0], close, st)
			if err != nil {
				return nil, 0, err
			}
			pos = end
			list = append(list, group)
		case beginEnvTok:
			env, end, err := p.environment(tok, st)
			if err != nil {
				return nil, 0, err
			}
			pos = end
			list = append(list, env)
		case macroTok:
			spec := parserMacros[tok.arg]
			m := &node{kind: macroNode, name: tok.arg, postSpace: tok.postSpace}
			args, end, err := p.parseArgs(spec, pos, st)
			switch {
			case err == nil:
				m.hasArgs, m.args = true, args
				m.legacyArgs(spec.spec)
				pos = end
			case !recoverable(err):
				return nil, 0, err
			}
			list = append(list, m)
		case specialsTok:
			list = append(list, &node{kind: specialsNode, text: tok.arg})
		}
	}
}

// math reads the math group that the opening delimiter tok starts; its
// content begins at pos.
func (p *parser) math(tok token, pos int) (*node, int, error) {
	closing := map[string]string{`\(`: `\)`, `\[`: `\]`}[tok.arg]
	if closing == "" {
		closing = tok.arg
	}
	inner, end, err := p.nodes(pos, "", "", closing, parseState{math: true, delim: tok.arg})
	if err != nil {
		return nil, 0, err
	}
	return &node{kind: mathNode, nodes: inner, display: tok.arg != "$" && tok.arg != `\(`}, end, nil
}

// plainChars writes the run of characters from pos that getToken would read
// as one-character charToks with no space before them (see plainChar) into
// chars, and returns the position after the run.
func (p *parser) plainChars(pos int, extraOpen, extraClose rune, chars *strings.Builder) int {
	for pos < len(p.s) && p.plainChar(pos, extraOpen, extraClose) {
		chars.WriteRune(p.s[pos])
		pos++
	}
	return pos
}

// parse reads the whole input.
func parse(s string) ([]*node, error) {
	p := &parser{s: []rune(s)}
	nodes, _, err := p.nodes(0, "", "", "", parseState{})
	return nodes, err
}
