package symbolic

import (
	"errors"
	"fmt"
	"hash/fnv"
	"math/big"
)

// fold builds the parsed expression the way sympy's automatic evaluation
// does, as far as it decides a zero test:
//   - operations on two Numbers are carried out at once (exact rationals,
//     Floats rounded to their precision, 1/0 = zoo);
//   - a product keeps one numeric coefficient, the product of its factors'
//     coefficients (2.5x*0.3 is 0.75*x with Float rounding), and a Rational
//     coefficient times a sum is distributed (2(x+1) is 2x+2);
//   - a sum collects its terms: equal terms add their coefficients (0.1x+0.2x
//     is 0.30000000000000004*x), terms whose coefficient is zero vanish
//     (x-x is 0, so 1/(x-x) is zoo);
//   - powers of the same base in a product add their exponents (x*x is x**2);
//   - powers follow sympy's Pow rules (see power), square roots of rationals
//     take sympy's form (sqrt(18) is 3*sqrt(2)) and multiply together
//     (sqrt(2)*sqrt(6) is 2*sqrt(3)).
//
// Folded numbers are nNum nodes with num set; sums are nSum nodes. Every
// folded node carries a structural hash, equal for terms sympy would merge.
func fold(n *node, b *budget) (*node, error) {
	if err := b.check(); err != nil {
		return nil, err
	}
	switch n.kind {
	case nNum:
		if n.num != nil {
			return n, nil
		}
		x, err := parseNumber(n.text)
		if err != nil {
			return nil, err
		}
		return numNode(x), nil
	case nSym:
		return leaf(nSym, n.text), nil
	case nConst:
		switch n.text {
		case "oo":
			return numNode(&number{kind: posInf}), nil
		case "zoo":
			return numNode(&number{kind: cInf}), nil
		case "nan":
			return numNode(nanNum), nil
		}
		return leaf(nConst, n.text), nil
	}
	args := make([]*node, len(n.args))
	for i, a := range n.args {
		f, err := fold(a, b)
		if err != nil {
			return nil, err
		}
		args[i] = f
	}
	switch n.kind {
	case nAdd:
		return sum(b, args[0], args[1])
	case nSub:
		return sum(b, args[0], mul(b, numNode(intNum(-1)), args[1]))
	case nNeg:
		return mul(b, numNode(intNum(-1)), args[0]), nil
	case nMul:
		return mul(b, args[0], args[1]), nil
	case nDiv:
		if args[0].kind == nNum && args[1].kind == nNum {
			return numNode(divNum(args[0].num, args[1].num)), nil
		}
		inv, err := power(b, args[1], numNode(intNum(-1)))
		if err != nil {
			return nil, err
		}
		return mul(b, args[0], inv), nil
	case nPow:
		return power(b, args[0], args[1])
	}
	if n.kind == nCall && n.text == "sqrt" && args[0].kind != nNum {
		return power(b, args[0], numNode(ratNum(big.NewRat(1, 2))))
	}
	out := compound(n.kind, n.text, args...)
	nums := make([]*number, len(args))
	for i, a := range args {
		if a.kind != nNum {
			return undefinedIfInfinite(out), nil
		}
		nums[i] = a.num
	}
	switch n.kind {
	case nFloorDiv, nMod:
		return floorDivMod(n.kind, nums[0], nums[1])
	case nFact, nFact2:
		return factorial(nums[0], n.kind == nFact2, b)
	case nCall:
		return callNum(n.text, nums[0], out)
	}
	return nil, errUnsupported
}

// numNode is a folded number.
func numNode(x *number) *node {
	n := &node{kind: nNum, num: x}
	h := fnv.New64a()
	switch {
	case x.kind != finite:
		fmt.Fprintf(h, "inf%d", x.kind)
	case x.flt != nil:
		h.Write([]byte("f" + x.flt.Text('p', 0))) // exact binary value
	default:
		h.Write([]byte(x.rat.RatString()))
	}
	n.hash = h.Sum64()
	n.fsum = n.hash
	return n
}

// leaf is a folded symbol or constant.
func leaf(kind nodeKind, text string) *node {
	n := &node{kind: kind, text: text}
	n.hash = mix(uint64(kind), hashString(text))
	n.fsum = n.hash
	return n
}

// compound is a folded node of the given kind over folded args. Products and
// sums hash the (wrapping) sum of their factors' or terms' hashes, so that
// order and grouping do not matter.
func compound(kind nodeKind, text string, args ...*node) *node {
	n := &node{kind: kind, text: text, args: args}
	switch kind {
	case nMul:
		for _, a := range args {
			n.fsum += a.fsum
		}
		n.hash = mix(uint64(kind), n.fsum)
	case nSum:
		for _, a := range args {
			n.fsum += a.hash
		}
		n.hash = mix(uint64(kind), n.fsum)
	default:
		n.hash = mix(uint64(kind), hashString(text))
		for _, a := range args {
			n.hash = mix(n.hash, a.hash)
		}
	}
	if kind != nMul {
		n.fsum = n.hash
	}
	return n
}

func hashString(s string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(s))
	return h.Sum64()
}

// mix combines two hashes (the splitmix64 finaliser of their combination).
func mix(a, b uint64) uint64 {
	z := a*0x9e3779b97f4a7c15 + b + 0x632be59bd9b4e019
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// undefinedIfInfinite turns an expression with zoo, oo or nan in it into nan:
// it can no longer be zero.
func undefinedIfInfinite(n *node) *node {
	for _, a := range n.args {
		if a.kind == nNum && a.num.kind != finite {
			return numNode(nanNum)
		}
	}
	return n
}

// sqrtAtom reports whether n is sqrt(m) for a positive rational m, as
// sqrtPower writes radicals.
func sqrtAtom(n *node) (*big.Rat, bool) {
	if n == nil || n.kind != nPow || n.args[0].kind != nNum || n.args[1].kind != nNum {
		return nil, false
	}
	m, e := n.args[0].num, n.args[1].num
	if m.kind != finite || m.flt != nil || m.sign() <= 0 || e.flt != nil || e.kind != finite ||
		e.rat.Cmp(big.NewRat(1, 2)) != 0 {
		return nil, false
	}
	return m.rat, true
}

// split returns the numeric coefficient of n and the rest (nil for a number).
func split(n *node) (*number, *node) {
	switch {
	case n.kind == nNum:
		return n.num, nil
	case n.kind == nMul && n.args[0].kind == nNum:
		return n.args[0].num, n.args[1]
	}
	return intNum(1), n
}

// withCoeff is c*rest, the way sympy writes it: no coefficient 1, and a
// zero, infinite or nan coefficient decides the whole product.
func withCoeff(c *number, rest *node) *node {
	switch {
	case rest == nil:
		return numNode(c)
	case c.kind != finite:
		return numNode(nanNum)
	case c.isZero():
		return numNode(c)
	case isOne(c):
		return rest
	}
	return compound(nMul, "", numNode(c), rest)
}

// mul is x*y.
func mul(b *budget, x, y *node) *node {
	cx, rx := split(x)
	cy, ry := split(y)
	c := mulNum(cx, cy)
	// sqrt(m)*sqrt(n) = sqrt(m*n): sympy merges the radicals of a product
	// and moves what comes out (sqrt(5)*sqrt(5) = 5) into the coefficient.
	var others []*node
	radicand, radicals := big.NewRat(1, 1), 0
	for _, f := range append(factors(rx), factors(ry)...) {
		if m, ok := sqrtAtom(f); ok {
			radicand.Mul(radicand, m)
			radicals++
		} else {
			others = append(others, f)
		}
	}
	if radicals > 1 {
		if r, err := sqrtPower(radicand, big.NewInt(1)); err == nil {
			cr, atom := split(r)
			c = mulNum(c, cr)
			if atom != nil {
				others = append(others, atom)
			}
		} else {
			others = append(factors(rx), factors(ry)...)
		}
	} else if radicals == 1 {
		others = append(factors(rx), factors(ry)...)
	}
	// Powers of the same base add their exponents: x*x is x**2, a**0.5 *
	// a**(-1/2) is 1, x**0.5 * x**0.5 is x**1.0.
	var bases []*node
	exps := map[uint64]*number{}
	for _, f := range others {
		base, e := f, intNum(1)
		if f.kind == nPow && f.args[1].kind == nNum && f.args[1].num.kind == finite && f.args[0].kind != nNum {
			base, e = f.args[0], f.args[1].num
		}
		if old, ok := exps[base.hash]; ok {
			exps[base.hash] = addNum(old, e)
			continue
		}
		exps[base.hash] = e
		bases = append(bases, base)
	}
	var rest *node
	for _, base := range bases {
		f := powerOf(base, exps[base.hash])
		if f.kind == nNum {
			continue // the exponents cancelled
		}
		if rest == nil {
			rest = f
		} else {
			rest = compound(nMul, "", rest, f)
		}
	}
	// Rational * sum distributes (sympy's two-argument rule).
	if rest != nil && rest.kind == nSum && c.kind == finite && c.flt == nil && !c.isZero() && !isOne(c) {
		terms := make([]*node, len(rest.args))
		for i, t := range rest.args {
			terms[i] = mul(b, numNode(c), t)
		}
		s, err := sum(b, terms...)
		if err == nil {
			return s
		}
	}
	return withCoeff(c, rest)
}

// factors lists the factors of a product without coefficient (nil for none).
func factors(n *node) []*node {
	if n == nil {
		return nil
	}
	if n.kind == nMul && n.args[0].kind != nNum {
		return append(factors(n.args[0]), factors(n.args[1])...)
	}
	return []*node{n}
}

// expandCoefficients multiplies out every product that has a sum among its
// factors and a Float somewhere (0.2e*(1.5-sqrt(3)) becomes
// 0.30000000000000004*e - 0.2*sqrt(3)*e), with sympy's Float rounding, and
// collects the terms again: simplify expands such products before it
// compares terms, and its rounding decides whether they cancel. It gives up
// (returns n) past maxTerms terms.
func expandCoefficients(b *budget, n *node) (*node, error) {
	var terms []*node
	var expand func(t *node) error
	expand = func(t *node) error {
		if err := b.check(); err != nil {
			return err
		}
		if len(terms) > maxTerms {
			return errTooLarge
		}
		if t.kind == nSum {
			for _, u := range t.args {
				if err := expand(u); err != nil {
					return err
				}
			}
			return nil
		}
		c, rest := split(t)
		fs := factors(rest)
		for i, f := range fs {
			if f.kind != nSum {
				continue
			}
			others := numNode(c)
			for j, g := range fs {
				if j != i {
					others = mul(b, others, g)
				}
			}
			for _, u := range f.args {
				if err := expand(mul(b, others, u)); err != nil {
					return err
				}
			}
			return nil
		}
		terms = append(terms, t)
		return nil
	}
	if err := expand(n); err != nil {
		if errors.Is(err, errTooLarge) {
			return n, nil
		}
		return nil, err
	}
	return sum(b, terms...)
}

// maxTerms bounds the terms expandCoefficients writes out.
const maxTerms = 2000

// sum adds the terms, collecting equal ones as sympy's Add does.
func sum(b *budget, terms ...*node) (*node, error) {
	constant := intNum(0)
	var order []uint64
	coeffs := map[uint64]*number{}
	rests := map[uint64]*node{}
	var add func(t *node) error
	add = func(t *node) error {
		if err := b.check(); err != nil {
			return err
		}
		if t.kind == nSum {
			for _, u := range t.args {
				if err := add(u); err != nil {
					return err
				}
			}
			return nil
		}
		c, rest := split(t)
		if rest == nil {
			constant = addNum(constant, c)
			return nil
		}
		if old, ok := coeffs[rest.hash]; ok {
			coeffs[rest.hash] = addNum(old, c)
			return nil
		}
		order = append(order, rest.hash)
		coeffs[rest.hash] = c
		rests[rest.hash] = rest
		return nil
	}
	for _, t := range terms {
		if err := add(t); err != nil {
			return nil, err
		}
	}
	if constant.kind != finite {
		return numNode(nanNum), nil
	}
	var args []*node
	if !constant.isZero() {
		args = append(args, numNode(constant))
	}
	for _, h := range order {
		c := coeffs[h]
		if c.kind != finite {
			return numNode(nanNum), nil
		}
		if !c.isZero() {
			args = append(args, withCoeff(c, rests[h]))
		}
	}
	switch len(args) {
	case 0:
		return numNode(constant), nil
	case 1:
		return args[0], nil
	}
	return compound(nSum, "", args...), nil
}

// power is x**y the way sympy's Pow evaluates:
//   - numbers are evaluated (powNum);
//   - an integer power of a product powers each factor and the coefficient
//     ((2.5x*y)**2 is 6.25*x**2*y**2), of a power multiplies the exponents
//     ((x**0.5)**2 is x**1.0), of c*sqrt(m) gives sympy's radical form;
//   - a rational power of a term with a positive coefficient takes the
//     coefficient out (sqrt(4x) is 2*sqrt(x), sqrt(2x) is sqrt(2)*sqrt(x)).
func power(b *budget, x, y *node) (*node, error) {
	if err := b.check(); err != nil {
		return nil, err
	}
	if x.kind == nNum && y.kind == nNum {
		return powNum(x.num, y.num, compound(nPow, "", x, y))
	}
	if y.kind == nNum && y.num.kind != finite || x.kind == nNum && x.num.kind != finite {
		return numNode(nanNum), nil
	}
	if y.kind != nNum {
		return compound(nPow, "", x, y), nil
	}
	e := y.num
	if e.isZero() {
		return numNode(intNum(1)), nil
	}
	c, rest := split(x)
	if !e.isInt() {
		if e.flt == nil && c.sign() > 0 && !isOne(c) {
			cp, err := powNum(c, e, nil)
			if err != nil || cp == nil {
				return compound(nPow, "", x, y), nil
			}
			return mul(b, cp, compound(nPow, "", rest, y)), nil
		}
		return compound(nPow, "", x, y), nil
	}
	k := e.rat.Num()
	cp, err := powIntNum(c, k)
	if err != nil {
		return nil, err
	}
	if m, ok := sqrtAtom(rest); ok {
		// (c*sqrt(m))**k = c**k * m**(k/2), in sympy's form for radicals
		r, err := powNum(ratNum(m), ratNum(new(big.Rat).Quo(e.rat, big.NewRat(2, 1))), nil)
		if err != nil || r == nil {
			return nil, errUnsupported
		}
		return mul(b, numNode(cp), r), nil
	}
	out := numNode(cp)
	for _, f := range factors(rest) {
		var p *node
		if f.kind == nPow && f.args[1].kind == nNum && f.args[1].num.kind == finite {
			// (u**a)**k = u**(a*k) for an integer k
			p = powerOf(f.args[0], mulNum(f.args[1].num, e))
		} else {
			p = compound(nPow, "", f, y)
		}
		out = mul(b, out, p)
	}
	return out, nil
}

// powerOf is base**e for a non-number base: 1 for a zero exponent, base
// itself for the exponent 1 (not for the Float 1.0).
func powerOf(base *node, e *number) *node {
	switch {
	case e.isZero():
		return numNode(intNum(1))
	case isOne(e):
		return base
	}
	return compound(nPow, "", base, numNode(e))
}

// isOne reports whether x is the Integer 1 (not the Float 1.0).
func isOne(x *number) bool {
	return x.kind == finite && x.flt == nil && x.rat.Cmp(big.NewRat(1, 1)) == 0
}

// powNum is x**y for two Numbers. Results that sympy keeps symbolic (an
// irrational root, a complex power) stay as the tree orig.
func powNum(x, y *number, orig *node) (*node, error) {
	if x.kind != finite || y.kind != finite {
		if y.isZero() {
			return numNode(intNum(1)), nil
		}
		return numNode(nanNum), nil
	}
	if y.isInt() {
		z, err := powIntNum(x, y.rat.Num())
		if err != nil {
			return nil, err
		}
		return numNode(z), nil
	}
	if x.flt == nil && y.flt == nil {
		// Rational ** Rational: exact when the root is, else symbolic.
		if x.isZero() {
			if y.sign() < 0 {
				return numNode(&number{kind: cInf}), nil
			}
			return numNode(intNum(0)), nil
		}
		if x.rat.Cmp(big.NewRat(1, 1)) == 0 {
			return numNode(intNum(1)), nil
		}
		q := y.rat.Denom()
		if q.IsInt64() {
			if root, ok := rootRat(x.rat, q.Int64()); ok {
				z, err := powIntNum(ratNum(root), y.rat.Num())
				if err != nil {
					return nil, err
				}
				return numNode(z), nil
			}
		}
		if q.Cmp(big.NewInt(2)) == 0 {
			return sqrtPower(x.rat, y.rat.Num())
		}
		return orig, nil
	}
	// A Float is involved: a positive base gives a Float, otherwise a complex
	// number that sympy writes with I; leave that to numeric evaluation.
	if x.sign() < 0 {
		return orig, nil
	}
	if x.isZero() {
		if y.sign() < 0 {
			return numNode(&number{kind: cInf}), nil
		}
		return numNode(x), nil
	}
	p := floatPrec(x, y)
	f := powFloat(x.float64(), y.float64())
	z := new(big.Float).SetPrec(p).SetMode(big.ToNearestEven)
	if !finiteF(f) {
		return nil, errTooLarge
	}
	return numNode(&number{flt: z.SetFloat64(f)}), nil
}

// sqrtPower is r**(n/2) for odd n in sympy's form: a rational coefficient
// times sqrt(m) with m free of square factors below 2^15 (sqrt(18) is
// 3*sqrt(2), sqrt(1/3) is sqrt(3)/3), times I for a negative r.
func sqrtPower(r *big.Rat, n *big.Int) (*node, error) {
	// r**(n/2) = r**((n-1)/2) * sqrt(|r|) * (I if r < 0)
	k := new(big.Int).Rsh(new(big.Int).Sub(n, big.NewInt(1)), 1) // floor((n-1)/2), n odd
	whole, err := powIntNum(ratNum(r), k)
	if err != nil {
		return nil, err
	}
	abs := new(big.Rat).Abs(r)
	// sqrt(a/b) = sqrt(a*b)/b
	m := new(big.Int).Mul(abs.Num(), abs.Denom())
	if m.BitLen() > maxBits {
		return nil, errTooLarge
	}
	out, in := squareFactor(m)
	coeff := mulNum(whole, ratNum(new(big.Rat).SetFrac(out, abs.Denom())))
	var rest *node
	if in.Cmp(big.NewInt(1)) != 0 {
		rest = compound(nPow, "", numNode(ratNum(new(big.Rat).SetInt(in))), numNode(ratNum(big.NewRat(1, 2))))
	}
	if r.Sign() < 0 {
		i := leaf(nConst, "I")
		if rest == nil {
			rest = i
		} else {
			rest = compound(nMul, "", i, rest)
		}
	}
	return withCoeff(coeff, rest), nil
}

// squareFactor writes m = out^2 * in, taking out the square factors of the
// primes below 2^15 (as sympy's factorint(limit=2**15) does).
func squareFactor(m *big.Int) (out, in *big.Int) {
	out, in = big.NewInt(1), new(big.Int).Set(m)
	var q, r big.Int
	for p := int64(2); p < 1<<15; p++ {
		bp := big.NewInt(p)
		p2 := big.NewInt(p * p)
		if p2.Cmp(in) > 0 {
			break
		}
		for {
			q.QuoRem(in, p2, &r)
			if r.Sign() != 0 {
				break
			}
			in.Set(&q)
			out.Mul(out, bp)
		}
	}
	return out, in
}

// floorDivMod is Python's // and % on sympy Numbers (rationals only).
func floorDivMod(kind nodeKind, x, y *number) (*node, error) {
	if x.kind != finite || y.kind != finite || x.flt != nil || y.flt != nil {
		return nil, errUnsupported
	}
	if y.isZero() {
		return nil, errSyntax // ZeroDivisionError
	}
	q := new(big.Rat).Quo(x.rat, y.rat)
	fl := new(big.Int).Div(q.Num(), q.Denom()) // Euclidean division = floor for a positive denominator
	if kind == nFloorDiv {
		return numNode(ratNum(new(big.Rat).SetInt(fl))), nil
	}
	r := new(big.Rat).Sub(x.rat, new(big.Rat).Mul(y.rat, new(big.Rat).SetInt(fl)))
	return numNode(ratNum(r)), nil
}

// factorial is n! (or n!! when double) for a non-negative integer Number.
func factorial(x *number, double bool, b *budget) (*node, error) {
	if !x.isInt() {
		return nil, errUnsupported
	}
	n := x.rat.Num()
	if n.Sign() < 0 {
		if !double {
			return numNode(&number{kind: cInf}), nil
		}
		return nil, errUnsupported
	}
	if !n.IsInt64() || n.Int64() > 20000 {
		return nil, errTooLarge
	}
	step := int64(1)
	if double {
		step = 2
	}
	acc := big.NewInt(1)
	for k := n.Int64(); k > 1; k -= step {
		if k%64 == 0 {
			if err := b.checkNow(); err != nil {
				return nil, err
			}
		}
		acc.Mul(acc, big.NewInt(k))
	}
	return numNode(ratNum(new(big.Rat).SetInt(acc))), nil
}

// callNum applies a sympy function to a Number, exactly where sympy does.
func callNum(fn string, x *number, orig *node) (*node, error) {
	switch fn {
	case "sqrt":
		return powNum(x, ratNum(big.NewRat(1, 2)), orig)
	case "re":
		if x.kind == finite {
			return numNode(x), nil
		}
	case "im":
		if x.kind == finite {
			return numNode(intNum(0)), nil
		}
	}
	if x.kind != finite {
		return numNode(nanNum), nil
	}
	return orig, nil
}
