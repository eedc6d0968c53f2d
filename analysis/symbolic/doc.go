// Package symbolic decides whether two normalised answer strings are equal as
// expressions, the way slime's math and deepscaler scorers do it with
// sympy_diff_is_zero (sympy 1.11.1): the string "(a)-(b)" is refused by the
// same guards, parsed like sympy's parse_expr with the standard and
// implicit-multiplication transformations, and judged equal when the
// difference is zero.
//
// Instead of a computer algebra system the package evaluates the difference:
// exactly (big rationals and sympy's Float rounding) when it is a plain number,
// and at several random complex points when it holds symbols, radicals or pi.
// Every call has a deadline; nothing it is given can make it panic or hang.
//
// The package knows nothing about answer extraction or normalisation; those
// belong to the scorer package, which calls DiffIsZero.
package symbolic
