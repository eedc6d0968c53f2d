package verify

import (
	"errors"
	"fmt"
	"hash/fnv"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
)

// Sums and products with bounds (see the package doc, Values).
const (
	// maxTerms bounds the terms of one sum or product.
	maxTerms = 100
	// maxNesting bounds how deeply sums and products nest: a double sum
	// is read, a triple sum is not.
	maxNesting = 2
	// maxSumSteps bounds the steps one call takes computing sums, at every
	// point and on both sides.
	maxSumSteps = 3000
	// maxSumBits bounds the numerator and denominator of each exact value
	// computed within a sum.
	maxSumBits = 4096
	// sumTrials is the number of points at which expressions with a sum,
	// a product or a sequence are compared.
	sumTrials = 6
	// countFrom and countTo are the integer values a counted variable (one
	// in a sum's bounds or a sequence's index) takes at those points.
	countFrom, countTo = 2, 10
)

// errBounds refuses a sum whose bounds are not integers, or whose upper
// bound is below its lower bound minus one, where conventions differ.
var errBounds = errors.New("sum bounds that cannot be counted")

// binds reports whether the letter t is the index of a sum being read.
func (p *parser) binds(t token) bool {
	return t.kind == 'l' && slices.Contains(p.bound, t.text)
}

// bigOperator reads \sum or \prod (op "sum" or "prod") after its macro: an
// optional \limits, the bounds _{k=a} and ^{b} in either order (^b a single
// number or letter), and the summand, a product: \sum_{k=1}^{n} k^2 + 1 is
// the sum of k^2, plus 1.
func (p *parser) bigOperator(op string) (*node, error) {
	if len(p.bound) >= maxNesting {
		return nil, errTooLarge
	}
	p.accept(`\limits`, `\nolimits`)
	var index string
	var lo, hi *node
	for range 2 {
		var err error
		switch {
		case lo == nil && p.accept("_"):
			index, lo, err = p.lowerBound()
		case hi == nil && p.accept("^"):
			hi, err = p.upperBound()
		}
		if err != nil {
			return nil, err
		}
	}
	if lo == nil || hi == nil {
		return nil, fmt.Errorf("%w: \\%s without bounds", errSyntax, op)
	}
	p.bound = append(p.bound, index)
	body, err := p.product()
	p.bound = p.bound[:len(p.bound)-1]
	if err != nil {
		return nil, err
	}
	return &node{op: op, name: index, args: []*node{lo, hi, body}}, nil
}

// lowerBound reads {k=a}: the index, a single letter, and its first value.
func (p *parser) lowerBound() (string, *node, error) {
	if err := p.expect("{"); err != nil {
		return "", nil, err
	}
	t := p.peek()
	if t.kind != 'l' {
		return "", nil, fmt.Errorf("%w: index %q", errSyntax, t.text)
	}
	p.pos++
	if err := p.expect("="); err != nil {
		return "", nil, err
	}
	lo, err := p.sum()
	if err != nil {
		return "", nil, err
	}
	return t.text, lo, p.expect("}")
}

// upperBound reads b of ^{b}, or ^b for one number or letter.
func (p *parser) upperBound() (*node, error) {
	switch t := p.peek(); t.kind {
	case 'n':
		p.pos++
		r, err := parseNumber(t.text)
		return &node{op: "num", num: r, lit: t.text}, err
	case 'l':
		p.pos++
		return &node{op: "var", name: t.text}, nil
	}
	return p.argument()
}

// sequence reads the subscript sub of name, which holds a sum's index, as
// the index of a term of the sequence name (F_{n-k-1}).
func (p *parser) sequence(name string, sub []token) (*node, error) {
	q := &parser{toks: sub, depth: p.depth, bound: p.bound}
	index, err := q.sum()
	if err != nil {
		return nil, err
	}
	if q.pos != len(sub) {
		return nil, fmt.Errorf("%w: subscript of %s", errSyntax, name)
	}
	return &node{op: "seq", name: name, args: []*node{index}}, nil
}

// linkSequences reads every variable F_s of n whose F names a sequence
// elsewhere in n as that sequence's term at s: in F_n + \sum_{k=0}^{n-1}
// F_k, F_n is the sequence's n-th term, not a name of its own.
func linkSequences(n *node) *node {
	seqs := map[string]bool{}
	sequenceNames(n, seqs)
	if len(seqs) > 0 {
		linkTerms(n, seqs)
	}
	return n
}

// sequenceNames adds the names of the sequences n holds to into.
func sequenceNames(n *node, into map[string]bool) {
	if n.op == "seq" {
		into[n.name] = true
	}
	for _, a := range n.args {
		sequenceNames(a, into)
	}
}

// linkTerms rewrites the variables of n that are terms of seqs in place.
func linkTerms(n *node, seqs map[string]bool) {
	if base, sub, ok := strings.Cut(n.name, "_"); ok && n.op == "var" && seqs[base] {
		if index, err := parseExpr(sub); err == nil {
			n.op, n.name, n.args = "seq", base, []*node{index}
		}
	}
	for _, a := range n.args {
		linkTerms(a, seqs)
	}
}

// evalSum computes a sum or a product term by term, its index bound to
// each integer from the lower bound to the upper one (none when the upper
// is one below the lower: 0 and 1).
func evalSum(n *node, env map[string]number, bud *budget) (number, error) {
	lo, err := evalCount(n.args[0], env, bud)
	if err != nil {
		return number{}, err
	}
	hi, err := evalCount(n.args[1], env, bud)
	if err != nil {
		return number{}, err
	}
	switch terms := hi - lo + 1; {
	case terms < 0:
		return number{}, errBounds
	case terms > maxTerms:
		return number{}, errTooLarge
	}
	inner := make(map[string]number, len(env)+1)
	maps.Copy(inner, env)
	acc, combine := integer(0), add
	if n.op == "prod" {
		acc, combine = integer(1), mul
	}
	bud.inSum++
	defer func() { bud.inSum-- }()
	for k := lo; k <= hi; k++ {
		inner[n.name] = integer(k)
		term, err := eval(n.args[2], inner, bud)
		if err == nil {
			acc, err = combine(acc, term)
		}
		if err == nil {
			err = sumSized(acc, bud)
		}
		if err != nil {
			return number{}, err
		}
	}
	return acc, nil
}

// applyInSum is apply within a sum, where values are bounded by
// maxSumBits and cost steps by their size.
func applyInSum(op string, args []number, bud *budget) (number, error) {
	if err := sumAffordable(op, args); err != nil {
		return number{}, err
	}
	v, err := apply(op, args)
	if err == nil {
		err = sumSized(v, bud)
	}
	return v, err
}

// sumAffordable refuses, within a sum, a factorial, a binomial coefficient
// or an integer power whose result would pass maxSumBits, before it is
// computed (a result near the bound is computed and then checked).
func sumAffordable(op string, a []number) error {
	bits := 0.0
	switch op {
	case "!":
		if n, ok := a[0].isInteger(); ok && n.Sign() >= 0 && n.BitLen() <= 32 {
			bits = logFactorial(n.Int64())
		}
	case "binom":
		n, ok1 := a[0].isInteger()
		k, ok2 := a[1].isInteger()
		if ok1 && ok2 && n.BitLen() <= 32 && k.Sign() >= 0 && k.Cmp(n) <= 0 {
			bits = logFactorial(n.Int64()) - logFactorial(k.Int64()) - logFactorial(n.Int64()-k.Int64())
		}
	case "^":
		if e, ok := a[1].isInteger(); ok && e.IsInt64() && a[0].exact { // intPower refuses larger exponents
			bits = float64(bitSize(a[0])-1) * math.Abs(float64(e.Int64()))
		}
	}
	if bits > maxSumBits {
		return errTooLarge
	}
	return nil
}

// logFactorial is log2 n!.
func logFactorial(n int64) float64 {
	lg, _ := math.Lgamma(float64(n) + 1)
	return lg / math.Ln2
}

// sumSized refuses an exact value computed within a sum past maxSumBits,
// and counts a step for each 64 bits of it: big values cost their size.
func sumSized(v number, bud *budget) error {
	if !v.exact {
		return nil
	}
	bits := bitSize(v)
	if bud.sumSteps += bits / 64; bits > maxSumBits || bud.sumSteps > maxSumSteps {
		return errTooLarge
	}
	return nil
}

// evalCount computes a bound or an index: an exact integer, small enough to
// count to.
func evalCount(n *node, env map[string]number, bud *budget) (int64, error) {
	v, err := eval(n, env, bud)
	if err != nil {
		return 0, err
	}
	i, ok := v.isInteger()
	if !ok {
		return 0, errBounds
	}
	if i.BitLen() > 32 {
		return 0, errTooLarge
	}
	return i.Int64(), nil
}

// evalSequence computes a term of an unknown sequence: a pseudo-random
// integer from 1 to 2^24 fixed by the sequence's name and the term's
// index, so that both sides of a comparison see the same sequence.
func evalSequence(n *node, env map[string]number, bud *budget) (number, error) {
	index, err := evalCount(n.args[0], env, bud)
	if err != nil {
		return number{}, err
	}
	h := fnv.New64a()
	h.Write([]byte(n.name))
	mixed := rand.New(rand.NewPCG(h.Sum64(), uint64(index))).Uint64()
	return integer(int64(mixed%(1<<24)) + 1), nil
}

// sampling is how two expressions are compared at points: how many, and
// which variables take integer values.
type sampling struct {
	trials int
	counts []string // the counted variables, sorted
}

// samplingOf is trials rational points for expressions without a sum, a
// product or a sequence; with one, sumTrials points at which the variables
// of bounds and indices are counted: integers from countFrom to countTo.
func samplingOf(exprs ...*node) sampling {
	counted := map[string]bool{}
	found := false
	for _, e := range exprs {
		found = countedVariables(e, counted) || found
	}
	if !found {
		return sampling{trials: trials}
	}
	return sampling{trials: sumTrials, counts: slices.Sorted(maps.Keys(counted))}
}

// countedVariables adds the variables of n's bounds and indices to into and
// reports whether n has a sum, a product or a sequence.
func countedVariables(n *node, into map[string]bool) bool {
	found := false
	switch n.op {
	case "sum", "prod":
		variables(n.args[0], into)
		variables(n.args[1], into)
		found = true
	case "seq":
		variables(n.args[0], into)
		found = true
	}
	for _, a := range n.args {
		found = countedVariables(a, into) || found
	}
	return found
}

// point is the k-th point for vars: point's rationals, with each counted
// variable an integer from countFrom to countTo, each once in
// countTo-countFrom+1 points, in an order of its own.
func (s sampling) point(vars map[string]bool, k int) map[string]number {
	env := point(vars, k)
	for j, name := range s.counts {
		if vars[name] {
			order := rand.New(rand.NewPCG(uint64(j)+1, 0x2545f4914f6cdd1d)).Perm(countTo - countFrom + 1)
			env[name] = integer(int64(countFrom + order[k%len(order)]))
		}
	}
	return env
}

// bitSize is the bit length of the largest of an exact value's numerators
// and denominators.
func bitSize(v number) int {
	return max(v.re.Num().BitLen(), v.re.Denom().BitLen(), v.im.Num().BitLen(), v.im.Denom().BitLen())
}
