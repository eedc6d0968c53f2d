package latextext

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// textSpec is what latex2text writes for a macro or an environment: a
// replacement string (with Python %-placeholders for the arguments), the
// arguments' text (keep), nothing (discard), or a named conversion fn.
type textSpec struct {
	repl    string // replacement; "" when there is none
	keep    bool   // no replacement, not discarded: the arguments' text (documents the table; it is the default)
	discard bool   // no replacement: nothing
	fn      string // a conversion implemented in callFn, with its parameter
	param   string
}

// ToText returns the plain text of the LaTeX string s, as pylatexenc 2.10's
// LatexNodes2Text().latex_to_text(s) with default settings does. It returns an
// error exactly where pylatexenc raises an exception (e.g. `\sqrt` with no
// argument, an empty matrix) and for input nested more deeply than pylatexenc
// can handle.
func ToText(s string) (string, error) {
	nodes, err := parse(s)
	if err != nil {
		return "", fmt.Errorf("latextext: %w", err)
	}
	c := &converter{}
	out, err := c.nodeList(nodes)
	if err != nil {
		return "", fmt.Errorf("latextext: %w", err)
	}
	return out, nil
}

// converter is pylatexenc's LatexNodes2Text state for one conversion.
type converter struct {
	// inMath is set while converting math: pylatexenc then switches its
	// whitespace rules ("strict_latex_spaces") from "macros" to "based-on-source".
	inMath bool
	// \title, \author, \date as set so far, for \maketitle.
	title, author, date *string
}

// nodeList converts a list of sibling nodes.
func (c *converter) nodeList(nodes []*node) (string, error) {
	var b strings.Builder
	var prev *node
	for _, n := range nodes {
		if c.inMath && n.kind == charsNode && isBareMacro(prev) {
			// in math, the space after a macro without arguments is kept before characters
			b.WriteString(prev.postSpace)
		}
		s, err := c.node(n)
		if err != nil {
			return "", err
		}
		b.WriteString(s)
		prev = n
	}
	return b.String(), nil
}

func isBareMacro(n *node) bool {
	return n != nil && n.kind == macroNode && n.optArg == nil && len(n.plainArgs) == 0
}

func (c *converter) node(n *node) (string, error) {
	if n == nil {
		return "", nil
	}
	switch n.kind {
	case charsNode:
		if c.inMath && pyStrip(n.text) == "" {
			return "", nil
		}
		return n.text, nil
	case commentNode:
		return n.postSpace, nil
	case groupNode:
		return c.nodeList(n.nodes)
	case macroNode:
		spec, ok := textMacros[n.name]
		if !ok {
			return "", nil // unknown macros vanish
		}
		return c.apply(n, spec)
	case environmentNode:
		spec, ok := textEnvironments[n.name]
		if !ok {
			spec = textSpec{keep: true}
		}
		return c.apply(n, spec)
	case specialsNode:
		if r, ok := textSpecials[n.text]; ok {
			return r, nil
		}
		return n.text, nil
	case mathNode:
		return c.math(n.nodes, n.display)
	}
	return "", nil
}

// apply is pylatexenc's macro_node_to_text / environment_node_to_text for a known spec.
func (c *converter) apply(n *node, spec textSpec) (string, error) {
	switch {
	case spec.fn != "":
		return c.callFn(n, spec)
	case spec.repl != "":
		return c.format(n, spec.repl)
	case spec.discard:
		return "", nil
	case n.kind == environmentNode:
		return c.nodeList(n.nodes)
	}
	var b strings.Builder
	if n.hasArgs {
		for _, a := range n.args {
			s, err := c.arg(a)
			if err != nil {
				return "", err
			}
			b.WriteString(s)
		}
	}
	return b.String(), nil
}

// arg converts one macro argument: a group's contents, or the node itself ("" for a missing one).
func (c *converter) arg(a *node) (string, error) {
	switch {
	case a == nil:
		return "", nil
	case a.kind == groupNode:
		return c.nodeList(a.nodes)
	}
	return c.node(a)
}

// argText is pylatexenc's node_arg_to_text(node, k).
func (c *converter) argText(n *node, k int) (string, error) {
	if !n.hasArgs || len(n.args) == 0 {
		return "", nil
	}
	if k >= len(n.args) {
		return "", fmt.Errorf(`\%s: no argument %d`, n.name, k+1)
	}
	return c.arg(n.args[k])
}

var percentS = regexp.MustCompile(`(^|[^%])(%%)*%s`)

// format fills a replacement string as Python's `repl % args` does in
// pylatexenc's apply_simplify_repl.
func (c *converter) format(n *node, repl string) (string, error) {
	if !strings.Contains(repl, "%") || repl == "%" {
		return repl, nil
	}
	var args []*node
	if n.hasArgs {
		args = n.args
	}
	var texts []string
	for _, a := range args {
		s, err := c.arg(a)
		if err != nil {
			return "", err
		}
		texts = append(texts, s)
	}
	tuple := percentS.MatchString(repl)
	if n.kind == environmentNode {
		body, err := c.nodeList(n.nodes)
		if err != nil {
			return "", err
		}
		if tuple {
			texts = []string{body}
		}
	}
	return pyFormat(repl, texts, tuple, n.name)
}

// pyFormat substitutes %s (tuple) or %(N)s (mapping, N 1-based) placeholders and
// %% in repl. A tuple whose size does not match is left unformatted (Python
// raises TypeError, which pylatexenc catches); a missing key is an error (a
// KeyError pylatexenc does not catch).
func pyFormat(repl string, args []string, tuple bool, name string) (string, error) {
	var b strings.Builder
	next := 0
	for i := 0; i < len(repl); i++ {
		if repl[i] != '%' || i+1 >= len(repl) {
			b.WriteByte(repl[i])
			continue
		}
		switch {
		case repl[i+1] == '%':
			b.WriteByte('%')
			i++
		case repl[i+1] == 's' && tuple:
			if next >= len(args) {
				return repl, nil
			}
			b.WriteString(args[next])
			next++
			i++
		case repl[i+1] == '(' && !tuple:
			end := strings.Index(repl[i:], ")s")
			if end < 0 {
				return repl, nil
			}
			k, err := strconv.Atoi(repl[i+2 : i+end])
			if err != nil || k < 1 || k > len(args) {
				return "", fmt.Errorf(`\%s: no argument %d`, name, k)
			}
			b.WriteString(args[k-1])
			i += end + 1
		default:
			return repl, nil
		}
	}
	if tuple && next != len(args) {
		return repl, nil
	}
	return b.String(), nil
}

// math converts the contents of a math node or a math environment.
func (c *converter) math(nodes []*node, block bool) (string, error) {
	saved := c.inMath
	c.inMath = true
	s, err := c.nodeList(nodes)
	c.inMath = saved
	if err != nil {
		return "", err
	}
	s = pyStrip(s)
	if block {
		return indentedBlock(s, "    "), nil
	}
	return s, nil
}

func indentedBlock(s, indent string) string {
	return "\n" + indent + strings.ReplaceAll(s, "\n", "\n"+indent) + "\n"
}

// callFn runs the conversions pylatexenc implements as Python functions.
func (c *converter) callFn(n *node, spec textSpec) (string, error) {
	switch spec.fn {
	case "mathstyle":
		s, err := c.argText(n, 0)
		return mathStyle(s, spec.param), err
	case "accent":
		return c.accent(n, spec.param)
	case "placeholder":
		return indentedBlock("< "+strings.Join(strings.Split(spec.param, ""), " ")+" >", "    "), nil
	case "matrix":
		return c.matrix(n)
	case "equation":
		return c.math(n.nodes, true)
	case "input":
		if n.plainArgsNil || len(n.plainArgs) == 0 {
			return "", fmt.Errorf(`\%s without an argument`, n.name)
		}
		_, err := c.nodeList([]*node{n.plainArgs[0]})
		return "", err // no input folder: pylatexenc reads nothing
	case "uebung":
		return c.uebung(n)
	case "today":
		return time.Now().Format("January 2, 2006"), nil
	}
	return c.macroFn(n, strings.TrimPrefix(spec.fn, "macro:"))
}

func (c *converter) accent(n *node, combining string) (string, error) {
	text := " "
	if !n.plainArgsNil && len(n.plainArgs) > 0 {
		s, err := c.nodeList([]*node{n.plainArgs[0]})
		if err != nil {
			return "", err
		}
		text = pyStrip(s)
	}
	var b strings.Builder
	for _, r := range text {
		switch r {
		case 'ı':
			r = 'i'
		case 'ȷ':
			r = 'j'
		}
		b.WriteString(norm.NFC.String(string(r) + combining))
	}
	return b.String(), nil
}

// matrix is pylatexenc's fmt_matrix_environment_node: cells split at & and
// rows at \\, written as "[ a b; c d ]" with cells right-aligned to the widest.
func (c *converter) matrix(n *node) (string, error) {
	var rows [][]string
	var row []string
	var cell []*node
	newColumn := func() error {
		if len(cell) > 0 {
			s, err := c.nodeList(cell)
			if err != nil {
				return err
			}
			row = append(row, pyStrip(s))
		}
		cell = nil
		return nil
	}
	newRow := func() error {
		if err := newColumn(); err != nil {
			return err
		}
		rows = append(rows, row)
		row = nil
		return nil
	}
	for _, m := range n.nodes {
		switch {
		case m.kind == specialsNode && m.text == "&":
			if err := newColumn(); err != nil {
				return "", err
			}
		case m.kind == macroNode && m.name == `\`:
			if err := newRow(); err != nil {
				return "", err
			}
		default:
			cell = append(cell, m)
		}
	}
	if err := newRow(); err != nil {
		return "", err
	}
	width, cells := 0, 0
	for _, r := range rows {
		for _, x := range r {
			width = max(width, utf8.RuneCountInString(x))
			cells++
		}
	}
	if cells == 0 {
		return "", fmt.Errorf(`environment %q: no cells`, n.name)
	}
	parts := make([]string, len(rows))
	for i, r := range rows {
		padded := make([]string, len(r))
		for j, x := range r {
			padded[j] = strings.Repeat(" ", width-utf8.RuneCountInString(x)) + x
		}
		parts[i] = strings.Join(padded, " ")
	}
	return "[ " + strings.Join(parts, "; ") + " ]", nil
}

func (c *converter) uebung(n *node) (string, error) {
	if n.plainArgsNil || len(n.plainArgs) < 2 {
		return "", fmt.Errorf(`\%s: missing arguments`, n.name)
	}
	s, err := c.nodeList([]*node{n.plainArgs[0]})
	if err != nil {
		return "", err
	}
	out := "\n" + s + "\n"
	if opt := n.plainArgs[1]; opt != nil {
		o, err := c.nodeList([]*node{opt})
		if err != nil {
			return "", err
		}
		out += "[" + o + "]\n"
	}
	return out, nil
}

// macroFn implements the macros pylatexenc handles with small Python lambdas.
func (c *converter) macroFn(n *node, name string) (string, error) {
	switch name {
	case "%":
		return "%", nil
	case "title", "author", "date":
		if !n.hasArgs {
			return "", fmt.Errorf(`\%s without arguments`, name)
		}
		var first []*node
		if len(n.args) > 0 {
			first = n.args[:1]
		}
		s, err := c.nodeList(first)
		if err != nil {
			return "", err
		}
		switch name {
		case "title":
			c.title = &s
		case "author":
			c.author = &s
		default:
			c.date = &s
		}
		return "", nil
	case "maketitle":
		title, author, date := `[NO \title GIVEN]`, `[NO \author GIVEN]`, time.Now().Format("January 2, 2006")
		if c.title != nil {
			title = *c.title
		}
		if c.author != nil {
			author = *c.author
		}
		if c.date != nil {
			date = *c.date
		}
		w := max(utf8.RuneCountInString(title), 4+utf8.RuneCountInString(author), 4+utf8.RuneCountInString(date))
		return title + "\n    " + author + "\n    " + date + "\n" + strings.Repeat("=", w) + "\n\n", nil
	case "item":
		if n.optArg != nil {
			s, err := c.nodeList([]*node{n.optArg})
			return "\n  " + s, err
		}
		return "\n  * ", nil
	case "href":
		if !n.hasArgs || len(n.args) < 2 {
			return "", fmt.Errorf(`\href without its two arguments`)
		}
		url, err := c.nodeList([]*node{n.args[0]})
		if err != nil {
			return "", err
		}
		text, err := c.nodeList([]*node{n.args[1]})
		return text + " <" + url + ">", err
	case "texorpdfstring":
		if n.plainArgsNil {
			return "", fmt.Errorf(`\texorpdfstring read as an argument`)
		}
		if len(n.plainArgs) < 2 {
			return "", nil
		}
		return c.nodeList(n.plainArgs[1:2])
	}
	s, err := c.argText(n, 2)
	if err != nil {
		return "", err
	}
	switch name {
	case "part":
		return "\n\nPART: " + strings.ToUpper(s) + "\n", nil
	case "chapter":
		return "\n\nCHAPTER: " + strings.ToUpper(s) + "\n", nil
	case "section":
		return "\n\n§ " + strings.ToUpper(s) + "\n", nil
	case "subsection":
		return "\n\n §.§ " + s + "\n", nil
	case "subsubsection":
		return "\n\n  §.§.§ " + s + "\n", nil
	case "paragraph":
		return "\n\n  " + s + "\n", nil
	case "subparagraph":
		return "\n\n    " + s + "\n", nil
	}
	return "", fmt.Errorf("no conversion for \\%s", name)
}
