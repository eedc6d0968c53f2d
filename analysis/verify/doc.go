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
//  1. A response ends at its first turn-ending token (<|im_end|>,
//     <|im_start|>, <|endoftext|>): a model that goes on to write the next
//     turn has not answered there. A response with "</think>" is read after
//     the last one; a response that opens "<think>" and never closes it has
//     no answer (it was cut off).
//  2. The last \boxed{…} or \fbox{…} that closes (braces nested, \{ and \}
//     skipped; of the last 64 box commands), or \boxed followed by a space
//     and one token: a number, a letter or a command (\boxed 5). When the
//     line of that box holds several boxes, their contents joined by commas
//     are a response's second candidate (\boxed{2} and \boxed{3} for the
//     label 2, 3), and a label's only answer when at most two words stand
//     between each two of them (\boxed{1}\boxed{2}, \boxed{1} and
//     \boxed{-2}, \boxed{1} papers and \boxed{2} bins: the list 1, 2; with
//     more words, the last box). A box wins over any Answer: line, but
//     in a response (not in a label, whose box is its answer) not over a
//     final-answer statement after the last box ("Final
//     Answer: …", "the final answer is …", as in 3) that states a value, a
//     digit or a command: \boxed{255} … The final answer is $10,455$ gives
//     10,455; "\boxed{7}, and the final answer is correct" gives 7.
//  3. Else the last line that starts with "Answer:" (any case, optionally
//     bold, "Final answer:" too), the text after the last "Final Answer:"
//     within a line, or after the last "the final answer is" or "the answer
//     is", whichever starts later (so "Final Answer: The final answer is $X$.
//     I hope it is correct." gives X); what follows, to the end of the line
//     (further while a brace or a $ is left open, up to 20 lines), without
//     ". I hope it is correct". When that is a sentence with " is " outside
//     math, what follows its last " is " ("Final Answer: The largest $n$
//     is 34." gives 34, not n). Then, when it is only $…$ spans joined by
//     commas, semicolons, "and" or "or", their contents as one list
//     (The final answer is $12$ and $13$: 12, 13); else the last math span
//     in it if any.
//  4. Else an amount written plainly at the end of the last line, in prose
//     after its last math span (within the text's last 256 bytes): a number after a dollar sign or before a
//     percent sign (so it increases by 100%.; Dr. Zaius has $10,455.).
//     Else the last math span: $…$, $$…$$, \(…\) or \[…\] (\$ is a dollar
//     sign, not a delimiter, and so is every $ of a line in which each $ is
//     followed by a digit: $10,200 + $255 = $10,455, where a $5$ would
//     close).
//  5. Else, for a response, the last non-empty line, after its last " is "
//     if it has one; for a label, its whole text (a raw label may span
//     lines), or, when it is only $…$ spans joined as in 3, their contents
//     as one list ($1$ and $2$ and $3$ is 1, 2, 3).
//
// A raw label (\frac{1}{2}), a math-delimited one ($\frac12$) and a whole
// solution with a box all reduce to their answer this way. Trailing periods
// and an enclosing $…$ are removed from every candidate.
//
// # Normal form
//
// Before comparing, a command written after two backslashes, as text
// escaped for Python or JSON shows it, is the command (\\frac, \\left,
// \\le, \\pi: the commands verify reads, functions and Greek letters),
// unless a third backslash precedes it (\\\frac is a row break, then
// \frac); \\ before anything else stays a row break. \mathbb{R} (and ℝ) is
// the interval (-∞, ∞). Then an answer loses: spacing macros (\, \; \: \! \ \quad,
// ~), \left and \right and the \big family, \displaystyle; currency signs
// ($, \$, €, £, ¥, \euro, \pounds); \dfrac, \tfrac and \cfrac become
// \frac; degrees (^\circ, ^{\circ}, °, \degree) are dropped; a \text{…} (or
// \mathrm, \mbox, \textbf, \textnormal…) of two letters or more after a
// number or an expression is a unit and is dropped with its exponent
// (5\text{ cm}, 440\text{ cm}^2, 30 \mbox{degrees}, 125\textnormal{ miles}),
// and so is a bare word after a number that is a unit word
// (12 inches, 3 hrs, 5 cm; a word of two or three letters only when it is a
// unit's abbreviation: 2 xy is the product 2xy, not 2) and a length unit with ²
// or ³ (12 m², 5 cm³); elsewhere ² and ³ are the powers 2 and 3 (x²). \text{
// or } and \text{ and } separate list elements, and so do ", and" and ", or"
// (19, 46, and 82). Relations have one spelling each: \ge for \geq, >=, ≥
// and \geqslant; \le for \leq, <=, ≤ and \leqslant; < for \lt; > for \gt;
// \ne for \neq, != and ≠. "x = …", "f(x) = …", "(x, y) = …" and
// "g(3) = … = …" keep their last right-hand side when the left is a single
// name, a call or a tuple of names, and so do "AB = …", "|AB| = …",
// "A:B = …", "V_1:V_2 = …" and "\frac{NO}{BO} = …", whose left names a
// quantity of a figure (2 to 4 capitals, in bars, a ratio of names, a
// quotient of capitals). A chain whose left is none of these is a
// computation shown with its result, and is its last side, when that side
// has no variables and either every side has none (5+3 = 8; 10,200 + 255 =
// 10,455) or there are three sides or more (1 = z = x = 0 is 0); a
// two-sided one with variables stays an equation (2x+4y-3 = 0). A line with \approx keeps what follows
// it after a single name (x \approx 11 gives 11) and else what precedes it
// (x = 1/3 \approx 0.33 gives 1/3). A group in plain braces, which LaTeX does
// not print, is its content ({1, 2, 3} is the list 1, 2, 3). Thousands
// separators are joined: 1 000, 1\,000, 14{,}916, 14{, }916, 32,\! 349, and
// 7,425,000 when the whole answer is such a number (no spaces after the
// commas), a number after a dollar sign ($10,455) or a side of a computation
// (10,200 + 255 = 10,455, below). "or" and "and" between two values, after a
// bracket or a digit and before one, a sign or a command, separate list
// elements ((11,7) or (7,11); 1 and 2); so do the semicolons of an answer
// with no comma outside brackets (-12;-11;-10; (-4, 27);(2, 15)), and those
// inside brackets that hold no comma ((0;-2;6) is (0, -2, 6), [1;2] is
// [1, 2]). Groups of named values separated by semicolons, with the same
// names in the same order in each, are the tuples of their values:
// p=5,q=2;p=7,q=2 is (5, 2), (7, 2) (and p=5,q=2;q=7,p=2 is not read so). A response's 81,256 is also read as the list 81, 256 (not $81,256), and a
// response's comma that cannot separate thousands, before a group of other
// than three digits or after a lone 0 (1,22; 1000,99; 0,111), as a decimal
// comma (1.22). A label's commas are never decimal: MATH writes the list
// 1, 2 as 1,2.
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
//   - a matrix (pmatrix, bmatrix, Bmatrix, matrix, or an array, alone or in
//     brackets or parentheses: \left[\begin{array}{cc}…\end{array}\right]):
//     same shape, equal entries (a vmatrix is a determinant, not a matrix);
//   - matrix arithmetic: a sum, difference or product of explicit matrices, or
//     a multiple of one by a scalar, is the matrix it equals: M + N, M - N; MN,
//     M \cdot N and M \times N, in that order (AB is not BA); 2M, \frac{1}{2}M,
//     M \cdot 2, M/2, -M; parentheses group (2(M + N)). Each entry is the
//     expression built from the operands' entries, compared like any scalar
//     (below: exactly, or at random points when it has variables, here at
//     points of both sides' variables, which may cancel in it: a·(-1) + 1·a is
//     0), so the matrices of 1, 2, 3, 4 and 5, 6, 7, 8 add to that of 6, 8, 10,
//     12, and a label may be written so too. The shapes must agree: a sum of
//     matrices of one shape, a product MN of an M with as many columns as N has
//     rows, which is a matrix even when it is 1×1 (so two columns crossed or
//     dotted, u \times v or u \cdot v, are refused, not read as products).
//     Refused too: a matrix plus a scalar, a division by a matrix, a power,
//     root or function of a matrix (M^2, M^{-1}, M^T), a vmatrix, an operand
//     with a ragged row or an entry that is no expression (a percentage, a
//     named value); what is refused is compared as text;
//   - an interval or a union of intervals ("x \in S", x a single letter, is
//     S: x \in (2, 5] is (2, 5]), or an inequality in one variable (x < 3,
//     -1 \le x < 2, x \ge 0, and one linear in its variable with a rational
//     coefficient, built from it by + − × ÷ and constant powers, solved for
//     it: -x > -1 is x < 1, 2x \ge 12 is x \ge 6, but |x| + 1 < 3 is not
//     read), or x \ne c, the reals but c;
//   - an inequality or a chain in |x|, the absolute value of a variable,
//     with constant bounds whose sign is decided (exactly, or in floating
//     point when clear of 0 by 1e-9: \sqrt3), as the set of x: |x| < a is
//     (-a, a), |x| \ge a is (-∞, -a] ∪ [a, ∞), a \le |x| < b is
//     (-b, -a] ∪ [a, b). A lower bound below 0, or 0 not strict, bounds
//     nothing (|x| \ge 0 is (-∞, ∞), -1 < |x| \le 2 is [-2, 2]; but
//     |x| > 0 is (-∞, 0) ∪ (0, ∞)); an empty set or one of one or two points
//     is refused (|x| < 0, |x| \le 0, 2 < |x| < 1, 1 \le |x| \le 1), and so
//     is anything else between the bars (|x - 1| < 2, |x^2| \le 4);
//   - alternatives joined by "or" (or, \text{or}, \lor, \vee, with
//     \quad around it or not), each a set of reals above in one and the
//     same variable: the union of their sets (x < 2 \text{ or } x > 3 is
//     (-∞, 2) ∪ (3, ∞)). "and" and a comma between inequalities are not
//     read as or, and alternatives in two variables are refused;
//   - a range: a chain a < f(x) < b (< or \le on each side, or > or \ge
//     on both: 1 > f(x) \ge 0) whose middle is a call of a name on one
//     variable (f(x), g_1(t); not f(2): f(2) < f(1) < f(4) is no range) and
//     whose two ends are constants, as the interval of f's values between
//     them (0 < f(x) \le 1 is (0, 1]; a single relation, f(x) \ge 6, is not
//     read so). These four are sets of reals, equal when they are the
//     same intervals, with the same endpoints and the same closedness; a
//     union is compared interval by interval, so (-2, 0] ∪ [0, 2] is not
//     [-2, 2];
//   - an equation L = R whose left is not a single name (2x+4y-3=0): equal
//     to another equation, or to a "name = …" answer, when L − R of one is a
//     non-zero constant times L − R of the other (the same variables, the
//     same ratio at every comparison point): rearranged, with every sign
//     flipped or scaled (y = -\frac{1}{2}x + \frac{3}{4}; -4x-8y+6=0), but
//     not squared (y^2 = (x+3)^2 is two lines, not y = x+3);
//   - a tuple (a, b, …) in parentheses: equal entries in the same order;
//   - named values: a list whose elements all are "name = value" with no
//     name twice (AB = 4, CD = 5; x = 1, y = 2): equal to another such list
//     when both have the same names with equal values, in any order (CD = 5,
//     AB = 4, but not CD = 4, AB = 5), and to a list or a tuple of values
//     without names when the values are equal in order (4, 5 or (4, 5), not
//     5, 4): the names order them. With a name repeated the values are
//     solutions, a set (x = 1, x = 2 is 1, 2). A single value named for a
//     figure's quantity equals a bare value (|AB| = 1 is 1) but not one
//     named for another (AB = 4 is not CD = 4); a single variable's name is
//     dropped (x = 3 is t = 3: a response may name the unknown its way);
//   - a set \{a, b\} or a list a, b without brackets (also a ± b, which is
//     the set {a+b, a−b}, alone or as an element of a set): equal when each
//     element of one equals an element of the other and both have the same
//     number of distinct elements (1, -3, 1 equals 1, -3); a set of one
//     distinct element equals that element. So order matters in a tuple
//     and in named values against bare ones, and nowhere else: a list of
//     solutions, however joined (commas, "or", "and", semicolons, several
//     boxes), is a set ((11,7) or (7,11) equals (7,11), (11,7);
//     \boxed{1} and \boxed{-2} equals -2, 1);
//   - a scalar: an expression.
//
// Two scalars are equal when their values are equal, decided exactly when
// possible: numbers are exact rationals (decimals too: 0.5 = 1/2), with
// thousands separators (7,425,000; 1 000; 14{,}916), leading points (.4),
// scientific notation (1.5\times10^{3}, 1.5e3), percent (p\% equals p, and
// p/100 when that is not an integer: 28\% equals 28 and 0.28, 25\% equals
// 1/4, but 100\% is not 1, since an integer answer may be a count; MATH's
// own grader drops the sign), mixed numbers (2\frac{1}{2} = 5/2), \frac
// with braced or single-token arguments (\frac13, \sqrt3), i the imaginary
// unit. Sums, products, quotients, integer powers, roots with an exact
// result, factorials and binomials are computed exactly over the Gaussian
// rationals. Two expressions with variables must have the same variables;
// they are evaluated at three random rational points (the same for both
// sides; a fixed seed, so verdicts are deterministic), exactly where they
// can be; a point where a side divides by zero is replaced by another, and
// expressions defined at too few of nine points tried differ. Where a value
// is not exact (π, a root of a non-square, a
// logarithm), both sides are compared in complex floating point within a
// relative tolerance of 1e-9 (absolute 1e-12 near zero): a decimal that
// agrees with an irrational value to ten digits (3.14159265358979 for π) is
// accepted; one that agrees to fewer only by the next rule (3.14 is not π).
//
// A sum or a product with bounds, \sum_{k=a}^{b} or \prod_{k=a}^{b} (^b for
// one number or letter, the bounds in either order, \limits allowed), is
// computed term by term: its index k, a single letter (i too), is bound in
// its summand, which is a product (\sum_{k=1}^{n} k^2 + 1 is the sum of k^2,
// plus 1), so \sum_{k=0}^{n} k equals \sum_{j=0}^{n} j. A letter with a
// subscript that holds an index (F_k, F_{n-k-1}) is a term of an unknown
// sequence, and so is that letter with any other subscript in the same
// expression (F_n in F_n + \sum_{k=0}^{n-1} F_k): its terms are fixed
// pseudo-random integers of the integer index, the same on both sides, so
// what is equal is what holds for every sequence. \sum_{k=0}^{n-1} F_{n-k-1}
// F_k equals \sum_{k=0}^{n-1} F_k F_{n-k-1} but not \sum_{k=0}^{n-1} F_k
// F_{n-k}, and an identity of the Fibonacci numbers alone (\sum_{k=1}^{n}
// F_k = F_{n+2} - 1) is not one; F_n = \sum… is a named value (its name
// dropped, as for x = 3). Expressions with a sum, a product or a sequence
// are compared at six points, where the variables of bounds and subscripts
// are integers from 2 to 10, distinct from point to point: a closed form is
// accepted when it agrees with the sum at all six (\sum_{k=1}^{n} k equals
// \frac{n(n+1)}{2}, not n^2 or \frac{n(n-1)}{2}; \prod_{k=1}^{n} k equals
// n!, not \sum_{k=1}^{n} k, which agrees at n = 1 and n = 3 only), and a
// polynomial in n of degree 5 or less that agrees at six integers is the
// same polynomial. Bounds 0 and 1 give the same sum when the term at 0 is 0.
// A sum is refused, and compared as text, when its index is not a letter, a
// bound is not an integer at a point (\sum_{k=1}^{n/2}) or is infinite, it
// has more than 100 terms (\sum_{k=1}^{1000} k is not 500500), its upper
// bound is below its lower bound minus one (the empty sum at one below is 0,
// the empty product 1; further below, conventions differ), or sums nest more
// than two deep.
//
// A decimal approximates: a decimal of at least 6 significant digits (not
// counting leading zeros) equals a number with no variables that it is
// rounded from, up or down, at its last digit, that is within one unit of
// that digit (0.0833333 and 0.0833334 for 1/12, 0.6666666666666666 for
// 2/3, 1.71428 for 12/7, 3.14159 for π). Shorter decimals are exact
// rationals only: 0.333 and 0.33333 are not 1/3, 0.08 and 0.083333 are
// not 1/12, and neither is 0.0833335 (1.7 units away). Why 6: two fractions
// with denominators up to 700 differ by more than 2·10⁻⁶ (1/(q·q')), the
// width of the window a 6-digit decimal of a number between 0.1 and 1
// allows, so such a decimal stands for at most one of them; with fewer
// digits, answers MATH asks for as fractions (1/3 against 33/100) would
// collide. Percentages and scientific notation are not read this way.
//
// # Refusals and bounds
//
// What cannot be computed within bounds is compared as normalised text only:
// an answer of over 2,000 bytes (so no 1000×1000 matrix is read), integer
// powers with results over 100,000 bits (so power towers are never
// computed), factorials over 1000! (so 1/2004! and 1/2006! differ), binomial
// coefficients of n over 10,000, factorials and binomial coefficients of
// over 30,000 bits in all in one call (three binomials of 9000 over 4000 are
// computed, a hundred are not), values within a sum over 4096 bits
// (refused before computing a factorial, a binomial or a power that would
// pass it), more than 3,000 steps of one call spent computing sums, matrix
// arithmetic whose result has over 256 entries or entries of over 500
// expression nodes in all, a part counted each time it is used (a product of
// two 5×5 matrices, of three 3×3 or of five 2×2 is computed; of two 6×6, of
// three 4×4 or of six 2×2 is not),
// values that overflow a float64, and whatever is left of a comparison after
// 200,000 steps of evaluation and matching (so a verdict never depends on
// the machine's speed). Every call also has a deadline (DefaultDeadline;
// CheckWithin sets another); past it the call returns ErrDeadline and a
// false verdict. No call starts a goroutine, and nothing it is given makes
// it panic.
package verify
