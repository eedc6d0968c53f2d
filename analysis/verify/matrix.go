package verify

import "strings"

// Matrix arithmetic (see the package doc, Values): sums, differences,
// products and scalar multiples of explicit matrices are the matrix they
// equal, each entry built as an expression from the operands' entries and
// then compared like any scalar.

const (
	envBegin = `\begin{`
	envClose = `\end{`
)

// maxMatrixWork bounds the expression nodes of the entries of one result of
// matrix arithmetic, counted as trees (what evaluating them visits); past
// it the arithmetic is refused.
const maxMatrixWork = 500

// envEnd returns the index just past the \end{name} that closes the
// \begin{name} at s[i:], environments nested in it counted; false when it
// does not close.
func envEnd(s string, i int) (int, bool) {
	rest := s[i+len(envBegin):]
	k := strings.IndexByte(rest, '}')
	if k <= 0 {
		return 0, false
	}
	closer := envClose + rest[:k+1]
	depth, nb, ne := 0, -2, -2
	for j := i; ; {
		nb, ne = nextIndex(s, j, nb, envBegin), nextIndex(s, j, ne, envClose)
		switch {
		case ne < 0:
			return 0, false
		case nb >= 0 && nb < ne:
			depth, j = depth+1, nb+len(envBegin)
		default:
			depth, j = depth-1, ne+len(envClose)
			if depth == 0 {
				if !strings.HasPrefix(s[ne:], closer) {
					return 0, false
				}
				return ne + len(closer), true
			}
		}
	}
}

// nextIndex is the index of the first sub in s at or after from, given
// the one found before (cached: -2 when none was looked for, -1 when none
// is left), so that a scan looks at each byte once.
func nextIndex(s string, from, cached int, sub string) int {
	if cached == -1 || cached >= from {
		return cached
	}
	if k := strings.Index(s[from:], sub); k >= 0 {
		return from + k
	}
	return -1
}

// entry is an expression of matrix arithmetic with the number of nodes of
// its tree (at most maxMatrixWork+1: a shared subtree counts each time).
type entry struct {
	n    *node
	size int
}

// operand is a value of matrix arithmetic: a matrix, or a scalar when rows
// is nil.
type operand struct {
	rows   [][]entry
	scalar entry
}

// readMatrixArithmetic reads a sum, difference or product of explicit
// matrices, or a scalar multiple of one (M + N, M - N, MN, M \cdot N,
// 2M, \frac{1}{2}M, -M, M/2), as the matrix it equals.
func readMatrixArithmetic(s string, depth int) (value, bool) {
	if !strings.Contains(s, envBegin) {
		return value{}, false
	}
	n, err := parseMatrixExpr(s)
	if err != nil || n.op == "matrix" || !hasMatrix(n) {
		return value{}, false // a lone matrix is readMatrix's
	}
	m, ok := evalMatrix(n, depth)
	if !ok || m.rows == nil {
		return value{}, false
	}
	return m.value(), true
}

// evalMatrix computes n, whose operands are matrices or scalars; false
// when it is refused: shapes that do not agree, an operation matrices do
// not have here (a power, a root, a function), a result past maxMatrixWork.
func evalMatrix(n *node, depth int) (operand, bool) {
	if !hasMatrix(n) {
		return operand{scalar: entry{n, treeSize(n)}}, true
	}
	switch n.op {
	case "matrix":
		return literal(n.lit, depth)
	case "neg":
		x, ok := evalMatrix(n.args[0], depth)
		if !ok {
			return operand{}, false
		}
		return x.each(func(e entry) entry { return build("neg", e) })
	case "+", "*", "/":
		x, okX := evalMatrix(n.args[0], depth)
		y, okY := evalMatrix(n.args[1], depth)
		if !okX || !okY {
			return operand{}, false
		}
		return combine(n.op, x, y)
	}
	return operand{}, false
}

// combine applies +, * or / to two operands, one of them a matrix at
// least.
func combine(op string, x, y operand) (operand, bool) {
	switch {
	case op == "+" && x.rows != nil && y.rows != nil:
		return sum(x, y)
	case op == "*" && x.rows != nil && y.rows != nil:
		return product(x, y)
	case op == "*" && x.rows == nil:
		return y.each(func(e entry) entry { return build("*", x.scalar, e) })
	case op != "+" && y.rows == nil: // M·2, M/2
		return x.each(func(e entry) entry { return build(op, e, y.scalar) })
	}
	return operand{}, false // a matrix plus a scalar, a scalar over a matrix
}

// sum adds two matrices of the same shape entry by entry.
func sum(x, y operand) (operand, bool) {
	if len(x.rows) != len(y.rows) || len(x.rows[0]) != len(y.rows[0]) {
		return operand{}, false
	}
	out := make([][]entry, len(x.rows))
	for i, row := range x.rows {
		for j, e := range row {
			out[i] = append(out[i], build("+", e, y.rows[i][j]))
		}
	}
	return operand{rows: out}.bounded()
}

// product is the matrix product xy, when x has as many columns as y has
// rows.
func product(x, y operand) (operand, bool) {
	rows, inner, cols := len(x.rows), len(y.rows), len(y.rows[0])
	if len(x.rows[0]) != inner || rows*cols > maxElems {
		return operand{}, false
	}
	if cols*x.total()+rows*y.total()+rows*cols*(2*inner-1) > maxMatrixWork {
		return operand{}, false // the size of the result's entries, known before they are built
	}
	out := make([][]entry, rows)
	for i := range rows {
		out[i] = make([]entry, cols)
		for j := range cols {
			e := build("*", x.rows[i][0], y.rows[0][j])
			for k := 1; k < inner; k++ {
				e = build("+", e, build("*", x.rows[i][k], y.rows[k][j]))
			}
			out[i][j] = e
		}
	}
	return operand{rows: out}.bounded()
}

// literal reads a matrix environment as an operand: a rectangular matrix
// whose entries are expressions (not a vmatrix, a determinant; no entry a
// percentage, a named value, a list or a text).
func literal(env string, depth int) (operand, bool) {
	v, ok := readMatrix(env, depth+1)
	if !ok {
		return operand{}, false
	}
	rows := make([][]entry, len(v.rows))
	for i, row := range v.rows {
		if len(row) != len(v.rows[0]) {
			return operand{}, false
		}
		for _, c := range row {
			if c.kind != scalarKind || c.expr == nil || c.percent || c.name != "" {
				return operand{}, false
			}
			rows[i] = append(rows[i], entry{c.expr, treeSize(c.expr)})
		}
	}
	return operand{rows: rows}.bounded()
}

// build is the expression op applied to args.
func build(op string, args ...entry) entry {
	e := entry{n: &node{op: op, args: make([]*node, len(args))}, size: 1}
	for i, a := range args {
		e.n.args[i] = a.n
		e.size = min(e.size+a.size, maxMatrixWork+1)
	}
	return e
}

// each applies f to every entry of a matrix.
func (o operand) each(f func(entry) entry) (operand, bool) {
	out := make([][]entry, len(o.rows))
	for i, row := range o.rows {
		for _, e := range row {
			out[i] = append(out[i], f(e))
		}
	}
	return operand{rows: out}.bounded()
}

// bounded refuses a matrix whose entries have more than maxMatrixWork
// nodes in all.
func (o operand) bounded() (operand, bool) {
	if o.total() > maxMatrixWork {
		return operand{}, false
	}
	return o, true
}

// total is the number of nodes of the entries of a matrix (each at most
// maxMatrixWork+1).
func (o operand) total() int {
	total := 0
	for _, row := range o.rows {
		for _, e := range row {
			total += e.size
		}
	}
	return total
}

// value is a matrix operand as a matrix value: its entries are scalars
// whose text, compared when they cannot be computed, is their expression
// in prefix form, and whose variables may cancel.
func (o operand) value() value {
	v := value{kind: matrixKind, rows: make([][]value, len(o.rows))}
	for i, row := range o.rows {
		for _, e := range row {
			var b strings.Builder
			render(&b, e.n)
			v.rows[i] = append(v.rows[i], value{kind: scalarKind, text: b.String(), expr: e.n, built: true})
		}
	}
	return v
}

// render writes n in prefix form: (op arg …), numbers as exact rationals.
// Two expressions with the same form are the same expression.
func render(b *strings.Builder, n *node) {
	switch n.op {
	case "num":
		b.WriteString(n.num.RatString())
	case "var":
		b.WriteString(n.name)
	case "i", "pi":
		b.WriteString(n.op)
	default:
		b.WriteString("(" + n.op)
		for _, a := range n.args {
			b.WriteByte(' ')
			render(b, a)
		}
		b.WriteByte(')')
	}
}

// hasMatrix reports whether n has a matrix operand.
func hasMatrix(n *node) bool {
	if n.op == "matrix" {
		return true
	}
	for _, a := range n.args {
		if hasMatrix(a) {
			return true
		}
	}
	return false
}

// treeSize is the number of nodes of n.
func treeSize(n *node) int {
	size := 1
	for _, a := range n.args {
		size += treeSize(a)
	}
	return size
}
