// Package verify is mathrl's own answer verifier, the `verify` scorer: it
// accepts every correct restatement of a label it can decide and no wrong
// answer, in bounded time, from any number of goroutines. slime's three
// scorers (package scorer) stay exact ports; this one is written from the
// rules below, and each verdict follows from them.
//
// # Extraction
//
// The same code reads responses (Extract) and labels (ExtractLabel):
//
//  1. A response with "</think>" is read after the last one; a response that
//     opens "<think>" and never closes it has no answer (it was cut off).
//  2. The last \boxed{…} or \fbox{…} that closes (braces nested, \{ and \}
//     skipped; of the last 64 box commands), or \boxed followed by a space
//     and one token: a number, a letter or a command (\boxed 5). When the
//     line of that box holds several boxes, their contents joined by commas
//     are a second candidate (\boxed{2} and \boxed{3} for the label 2, 3).
//     A box wins over any Answer: line.
//  3. Else the last line that starts with "Answer:" (any case, optionally
//     bold, "Final answer:" too) or the text after the last "the final
//     answer is", whichever starts later (so "Final Answer: The final answer
//     is $X$. I hope it is correct." gives X); what follows, to the end of
//     the line (further while a brace or a $ is left open, up to 20 lines),
//     without ". I hope it is correct", and the last math span in it if any.
//  4. Else the last math span: $…$, $$…$$, \(…\) or \[…\] (\$ is a dollar
//     sign, not a delimiter).
//  5. Else, for a response, the last non-empty line, after its last " is "
//     if it has one; for a label, its whole text (a raw label may span
//     lines).
//
// A raw label (\frac{1}{2}), a math-delimited one ($\frac12$) and a whole
// solution with a box all reduce to their answer this way. Trailing periods
// and an enclosing $…$ are removed from every candidate.
//
// # Normal form
//
// Before comparing, an answer loses: spacing macros (\, \; \: \! \ \quad,
// ~), \left and \right and the \big family, \displaystyle, $ and \$ signs;
// \dfrac, \tfrac and \cfrac become \frac; degrees (^\circ, ^{\circ}, °,
// \degree) are dropped; a \text{…} (or \mathrm, \mbox, \textbf…) of two
// letters or more after a number or an expression is a unit and is dropped
// with its exponent (5\text{ cm}, 440\text{ cm}^2, 30 \mbox{degrees}), and
// so is a bare word after a number (12 inches); \text{ or } and \text{ and }
// separate list elements; "x = …", "f(x) = …" and "g(3) = … = …" keep their
// last right-hand side when the left is a single name or call. Thousands
// separators are joined: 1 000, 1\,000, 14{,}916, and 7,425,000 when the
// whole answer is such a number (no spaces after the commas). A response's
// 81,256 is also read as the list 81, 256 (a label's only as a number).
//
// # Values
//
// An answer is then one of:
//
//   - a choice letter: A to E (or a to e in parentheses), alone, in
//     parentheses, in \text or \textbf: equal to the same letter;
//   - a text answer: words with no math in them (two words or more, or one
//     of three letters or more: xy is a product), alone or in \text{…};
//     equal when the words are equal ignoring case, spaces and a leading
//     "the";
//   - a matrix (pmatrix, bmatrix, matrix): same shape, equal entries;
//   - an interval or a union of intervals, or an inequality in one variable
//     (x < 3, -1 \le x < 2, x \ge 0): equal when the same set of reals, with
//     the same endpoints and the same closedness;
//   - a tuple (a, b, …) in parentheses: equal entries in the same order;
//   - a set \{a, b\} or a list a, b without brackets (also a ± b, which is
//     the set {a+b, a−b}, alone or as an element of a set): equal when each
//     element of one equals an element of the other and both have the same
//     number of distinct elements (1, -3, 1 equals 1, -3); a set of one
//     distinct element equals that element;
//   - a scalar: an expression.
//
// Two scalars are equal when their values are equal, decided exactly when
// possible: numbers are exact rationals (decimals too: 0.5 = 1/2, but 0.333
// is not 1/3), with thousands separators (7,425,000; 1 000; 14{,}916),
// leading points (.4), scientific notation (1.5\times10^{3}, 1.5e3), percent
// (28\% equals 28 and 0.28), mixed numbers (2\frac{1}{2} = 5/2), \frac
// with braced or single-token arguments (\frac13, \sqrt3), i the imaginary
// unit. Sums, products, quotients, integer powers, roots with an exact
// result, factorials and binomials are computed exactly over the Gaussian
// rationals. Two expressions with variables must have the same variables;
// they are evaluated at three random rational points (the same for both
// sides; a fixed seed, so verdicts are deterministic), exactly where they
// can be. Where a value is not exact (π, a root of a non-square, a
// logarithm), both sides are compared in complex floating point within a
// relative tolerance of 1e-9 (absolute 1e-12 near zero): a decimal that
// agrees with an irrational value to ten digits (3.14159265358979 for π) is
// accepted, one that agrees to fewer (3.14) is not.
//
// # Refusals and bounds
//
// What cannot be computed within bounds is compared as normalised text
// only: integer powers with results over 100,000 bits (so power towers are
// never computed), factorials over 1000! (so 1/2004! and 1/2006! differ),
// binomial coefficients of n over 10,000,
// values that overflow a float64, and whatever is left of a comparison after
// 200,000 steps of evaluation and matching (so a verdict never depends on
// the machine's speed). Every call also has a deadline (DefaultDeadline;
// CheckWithin sets another); past it the call returns ErrDeadline and a
// false verdict. No call starts a goroutine, and nothing it is given makes
// it panic.
package verify
