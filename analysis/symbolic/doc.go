// Package symbolic decides whether two normalised answer strings are equal as
// expressions the way slime's math and deepscaler scorers decide it with
// sympy_diff_is_zero under sympy 1.11.1: the string "(a)-(b)" is refused by
// the same guards (Allowed), parsed as sympy's parse_expr parses it with the
// standard and implicit-multiplication transformations (2x, xy = x*y,
// sqrt2 = s*q*r*t*2, x(2) = 2*x, 3! = 6, i and e plain symbols, pi = π), and
// the two are equal when the difference is zero.
//
// There is no computer algebra system behind it. The difference is first
// built the way sympy builds it: numbers are combined at once (exact
// rationals; Floats rounded to their precision, so 0.5 - 1/2 is 0 and
// 0.1 + 0.2 - 0.3 is not), sums collect equal terms, products keep one
// numeric coefficient, square roots of rationals take sympy's form
// (sqrt(18) = 3*sqrt(2)). What is left is evaluated at random complex points
// for its symbols, with error bounds; sympy's simplify proves the identities
// this finds on the inputs the guards let through (polynomials and rational
// functions in two letters, radicals), and a zero that rests on a Float is
// accepted only where sympy's Float arithmetic is exact. The test file
// compares every verdict with sympy's on several thousand pairs built from
// MATH answers (testdata/make_reference.py).
//
// Known differences, all answered false here where sympy can answer true:
// repeated-decimal notation (0.[3]), comparisons (x==x), a function applied
// without parentheses (sqrt.5), and the sympy functions other than sqrt, re,
// im and ln that fit in two letters (ff, rf, li, csc, frac...). Float
// rounding is followed through sympy's automatic evaluation and a coarse
// model of simplify's expansion, not through every rewrite simplify tries.
//
// Every call has a deadline (DefaultTimeout, or DiffIsZeroWithin); past it
// the answer is false. Nothing the functions are given makes them panic.
//
// The package knows nothing of answer extraction or normalisation; those
// belong to the scorer package, which calls DiffIsZero.
package symbolic
