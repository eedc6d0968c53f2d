#!/usr/bin/python3
"""Writes the verdicts of sympy_diff_is_zero, as slime's math and deepscaler
scorers compute it, with sympy 1.11.1 (Debian python3-sympy), one JSON line
per pair: {"kind", "a", "b", "equal"} (or "timeout": true instead of "equal"
when sympy takes more than 5 s).

Usage: /usr/bin/python3 make_reference.py DATA_DIR [SEED,SEED...] | gzip -9 > reference.jsonl.gz

DATA_DIR holds math_train.jsonl, math_test.jsonl and math500.jsonl (rows with
an "answer" field). For each seed, pairs are built from the answers after a
rough LaTeX-to-text normalisation: each answer against itself, rewrites that
are equal (commuted, expanded, rationalised, decimal against fraction, mixed
numbers), near misses (off by one, sign flips, truncated decimals, values of
pi), the answer against sympy's own expand/factor/together/radsimp/evalf of
it, random expressions in the same style against their sympy rewrites, and
random pairs of answers. The ten rows of the scorer spec that sympy decides
and a list of hand-written corner cases come first.
"""
import json
import random
import re
import signal
import sys
from fractions import Fraction

import sympy
from sympy.parsing import sympy_parser

assert sympy.__version__ == "1.11.1", sympy.__version__

# --- sympy_diff_is_zero, as described in the spec (section 3.2)


def allowed(expr):
    letters = {c for c in expr.replace("sqrt", "").replace("frac", "") if c.isalpha()}
    if len(letters) > 2:
        return False
    if "^{" in expr or "^(" in expr:
        return False
    return not (re.search(r"\^[0-9]+\^", expr) or re.search(r"\^[0-9][0-9]+", expr))


TRANSFORMATIONS = sympy_parser.standard_transformations + (sympy_parser.implicit_multiplication_application,)


def diff_is_zero(a, b):
    try:
        expr = f"({a})-({b})"
        if not allowed(expr):
            return False
        parsed = sympy_parser.parse_expr(expr.replace("^", "**"), transformations=TRANSFORMATIONS)
        return sympy.simplify(parsed) == 0
    except Exception:
        return False


# --- a rough normalisation of MATH answers (not slime's; only to get realistic strings)


def strip_group(s, i):
    """Returns (content, end) of the {...} group starting at s[i] == '{'."""
    depth = 0
    for j in range(i, len(s)):
        if s[j] == "{":
            depth += 1
        elif s[j] == "}":
            depth -= 1
            if depth == 0:
                return s[i + 1 : j], j + 1
    raise ValueError("unbalanced")


def latex_to_text(s):
    s = s.replace("\\dfrac", "\\frac").replace("\\tfrac", "\\frac")
    s = s.replace("\\left", "").replace("\\right", "").replace("\\!", "").replace("\\,", "")
    out = []
    i = 0
    while i < len(s):
        if s.startswith("\\frac", i) and i + 5 < len(s) and s[i + 5] == "{":
            num, j = strip_group(s, i + 5)
            if j < len(s) and s[j] == "{":
                den, j = strip_group(s, j)
            else:
                den, j = s[j : j + 1], j + 1
            out.append(latex_to_text(num) + "/" + latex_to_text(den))
            i = j
        elif s.startswith("\\sqrt", i) and i + 5 < len(s) and s[i + 5] == "{":
            arg, j = strip_group(s, i + 5)
            out.append("sqrt(" + latex_to_text(arg) + ")")
            i = j
        elif s.startswith("\\sqrt", i) and i + 5 < len(s):
            out.append("sqrt(" + s[i + 5] + ")")
            i += 6
        else:
            out.append(s[i])
            i += 1
    s = "".join(out)
    for k, v in [("\\pi", "pi"), ("\\cdot", "*"), ("\\times", "*"), ("\\infty", "inf"), ("^\\circ", ""),
                 ("^{\\circ}", ""), ("\\%", ""), ("\\$", ""), ("$", ""), ("\\text", ""), ("\\mbox", ""),
                 ("\\mathrm", ""), ("\\", "")]:
        s = s.replace(k, v)
    return s


def normalise(label):
    try:
        s = latex_to_text(label)
    except ValueError:
        s = label
    s = s.replace("{", "").replace("}", "").replace(" ", "").lower()
    return s


# --- pairs


def top_level_split(s, seps):
    """Splits s at top-level characters in seps (not inside parentheses, not a leading sign)."""
    parts, depth, cur = [], 0, ""
    for i, c in enumerate(s):
        if c in "([":
            depth += 1
        elif c in ")]":
            depth -= 1
        if depth == 0 and c in seps and i > 0 and s[i - 1] not in "*/^(":
            parts.append(cur)
            cur = c if c == "-" else ""
            continue
        cur += c
    parts.append(cur)
    return parts


def as_fraction(s):
    try:
        if re.fullmatch(r"-?\d+(\.\d+)?", s):
            return Fraction(s)
        if re.fullmatch(r"-?\d+/\d+", s):
            return Fraction(s)
    except (ValueError, ZeroDivisionError):
        pass
    return None


def decimal_string(f, digits=None):
    """The exact decimal of f if it terminates (or digits>0 truncated digits), else None."""
    if digits is None:
        d = f.denominator
        for p in (2, 5):
            while d % p == 0:
                d //= p
        if d != 1:
            return None
        digits = 0
        while (f * 10**digits).denominator != 1:
            digits += 1
    sign = "-" if f < 0 else ""
    f = abs(f)
    whole = int(f)
    frac = int((f - whole) * 10**digits)
    return f"{sign}{whole}.{frac:0{digits}d}" if digits else f"{sign}{whole}"


def rewrites(s, rng):
    """Yields (kind, b) variants of s: some equal to s, some near misses."""
    terms = top_level_split(s, "+-")
    if len(terms) > 1:
        t = terms[:]
        rng.shuffle(t)
        yield "commuted_sum", "+".join(x if x.startswith("-") else x for x in t).replace("+-", "-")
    factors = top_level_split(s, "*")
    if len(factors) > 1:
        yield "commuted_product", "*".join(reversed(factors))
    yield "plus_zero", f"{s}+0"
    yield "times_one", f"1*({s})"
    yield "doubled", f"({s})+({s})-({s})"
    yield "square_vs_product", f"({s})*({s})/({s})"
    yield "off_by_one", f"{s}+1"
    yield "sign_flip", f"-({s})"
    yield "scaled", f"2({s})"
    f = as_fraction(s)
    if f is not None:
        dec = decimal_string(f)
        if dec is not None and dec != s:
            yield "decimal_of_fraction", dec
        if f.denominator != 1:
            yield "fraction", f"{f.numerator}/{f.denominator}"
            yield "truncated_decimal", decimal_string(f, 3)
            yield "long_decimal", decimal_string(f, 16)
            if f > 1:
                w = f.numerator // f.denominator
                r = f - w
                yield "mixed_number", f"{w}+{r.numerator}/{r.denominator}"
        yield "next_integer", str(int(f) + 1)
    m = re.fullmatch(r"(\d*)sqrt\((\d+)\)", s)
    if m:
        c = int(m.group(1) or 1)
        n = int(m.group(2))
        yield "sqrt_folded", f"sqrt({c * c * n})"
        yield "sqrt_near", f"sqrt({c * c * n + 1})"
        yield "rationalised", f"{c * n}/sqrt({n})"
    m = re.fullmatch(r"(\d*)sqrt\((\d+)\)/(\d+)", s)
    if m:
        c, n, d = int(m.group(1) or 1), int(m.group(2)), int(m.group(3))
        yield "unrationalised", f"{c * n}/({d}sqrt({n}))"
    if "pi" in s:
        yield "pi_approx", s.replace("pi", "3.14")
        yield "pi_long", s.replace("pi", "3.141592653589793")
        yield "pi_times", s.replace("pi", "(pi)*1")
    if re.search(r"[a-z]", s.replace("sqrt", "").replace("pi", "")):
        yield "squared", f"({s})^2"
        yield "squared_product", f"({s})({s})"
        yield "sqrt_of_square", f"sqrt(({s})^2)"


def to_answer_style(e):
    """sympy's printed form of e, in the style of a normalised answer."""
    return str(e).replace("**", "^").replace(" ", "")


def sympy_rewrites(s):
    """Yields (kind, b): s rewritten by sympy (expanded, factored, evaluated to
    15-20 digits...), which are equal or nearly equal to s."""
    try:
        e = sympy_parser.parse_expr(s.replace("^", "**"), transformations=TRANSFORMATIONS)
    except Exception:
        return
    if not isinstance(e, sympy.Expr):
        return
    for kind, fn in [("sympy_expand", sympy.expand), ("sympy_factor", sympy.factor),
                     ("sympy_together", sympy.together), ("sympy_radsimp", sympy.radsimp),
                     ("sympy_evalf15", lambda e: e.evalf(15)), ("sympy_evalf17", lambda e: e.evalf(17)),
                     ("sympy_evalf6", lambda e: e.evalf(6))]:
        try:
            b = to_answer_style(fn(e))
        except Exception:
            continue
        if b != s and len(b) < 200:
            yield kind, b


def random_expression(rng, depth=0):
    """A random expression in the style of normalised answers: implicit
    products, sqrt(...), pi, decimals, at most two letters."""
    letters = rng.choice(["x", "xy", "ab", "n", "pi", "e", "i", ""])
    atoms = ["1", "2", "3", "4", "5", "7", "12", "0.5", "0.25", "1.5", "2.0", "0.1", "0.3"]
    atoms += [c for c in letters if letters != "pi"] * 3
    if letters == "pi":
        atoms += ["pi"] * 3
    if depth > 2 or rng.random() < 0.3:
        a = rng.choice(atoms)
        r = rng.random()
        if r < 0.15:
            a = f"sqrt({rng.choice(['2', '3', '5', '8', '12', '18', a])})"
        elif r < 0.3:
            a = f"{rng.choice(['2', '3', '1/2'])}{a}" if not a[0].isdigit() else a
        elif r < 0.4:
            a = f"{a}^{rng.choice(['2', '3', '-1', '0.5'])}"
        return a
    x = random_expression(rng, depth + 1)
    y = random_expression(rng, depth + 1)
    op = rng.choice(["+", "-", "*", "/", "", "()"])
    if op == "()":
        return f"({x}){y}" if rng.random() < 0.5 else f"{x}({y})"
    if op == "" and (x[-1].isdigit() and y[0].isdigit()):
        op = "*"
    return f"{x}{op}{y}"


# the ten rows of spec section 8 that sympy decides, as the (label, answer)
# elements slime's sympy_equal passes on
SPEC_ROWS = [
    ("decimal_0.50_vs_frac", "1/2", "0.50"),
    ("commutative", "1+x", "x+1"),
    ("expanded_square", "(x+1)^2", "x^2+2x+1"),
    ("sqrt_unsimplified", "3sqrt(13)", "sqrt(117)"),
    ("mc_letter", "c", "c"),
    ("mixed_number", "4+2/3", "14/3"),
    ("sqrt_rationalized", "sqrt(2)/2", "1/sqrt(2)"),
    ("two_letters_commute", "ab", "ba"),
    ("sympy_pi_commute", "pi*2", "2pi"),
    ("tuple_elementwise_frac", "1/2", "0.5"),
]

# hand-written cases for the parser's corners
EXTRA = [
    ("2x", "x2"), ("xy", "yx"), ("x(x+1)", "x^2+x"), ("sqrt2", "sqrt(2)"), ("0.1+0.2", "0.3"),
    ("0.333", "1/3"), ("1/0", "1/0"), ("0^0", "1"), ("x=5", "5"), ("x<5", "5"), ("1,2", "1,2"),
    ("e^2", "e*e"), ("i^2", "-1"), ("2j", "2i"), ("1e3", "1000"), ("-x^2", "-(x^2)"), ("2^-1", "1/2"),
    ("sqrt(x^2)", "x"), ("xx", "x^2"), ("x(2)", "2x"), ("sqrt(3+2sqrt(2))", "1+sqrt(2)"), ("xi", "ix"),
    ("0.2x", "x/5"), ("3!", "6"), ("5!", "120"), ("025", "25"), ("0x10", "16"), ("2^2x", "4x"),
    ("x^-2x", "1/x"), ("(2)(3)", "6"), ("sqrt(4)(2)", "4"), ("1_000", "1000"), ("2.5.3", "0.75"),
    ("7%3", "1"), ("7//2", "3"), ("pi(2)", "2pi"), ("mu", "um"), ("x_1", "x_1"), ("ln(4)", "2ln(2)"),
    ("re(2)", "2"), ("im(2+3j)", "3"), ("(x^2-1)/(x-1)", "x+1"), ("x/x", "1"), ("0/0", "0"),
    ("sqrt(-4)", "2j"), ("(-8)^(1/3)", "2"), ("8**(1/3)", "2"), ("2**(1/2)", "sqrt(2)"),
    ("sqrt(2)+sqrt(3)", "sqrt(5+2sqrt(6))"), ("0.5x", "x/2"), ("1.4142135623730951", "sqrt(2)"),
    ("0.3333333333333333", "1/3"), ("x^2.5", "x^2sqrt(x)"), ("2^x2^x", "4^x"), ("(x+y)^2", "x^2+2xy+y^2"),
    ("1/(x-x)", "1/(x-x)"), ("oo", "oo"), ("x+oo", "oo"), ("1/oo", "0"), ("", ""), ("()", "()"),
    ("x;", "x"), ("[1]", "[1]"), ("x!", "x!"), ("(x+1)!/(x!)", "x+1"), ("3!!", "3"), ("sqrt(x)^2", "x"),
    ("sqrt(x)sqrt(x)", "x"), ("sqrt(x)sqrt(y)", "sqrt(xy)"), ("x^0.5", "sqrt(x)"), ("4^0.5", "2"),
    ("2^0.5", "sqrt(2)"), ("0.1x+0.2x", "0.3x"), ("1e1000", "10^1000"), ("1/3+1/3+1/3", "1"),
    ("xy!", "(xy)!"), ("2^xy", "y2^x"), ("x2^3", "8x"), ("x^2!", "x^2"), ("2^3!", "64"), ("x!!", "x!!"),
    ("0.5sqrt(2)", "sqrt(2)/2"), ("3/pi", "3/3.14"), ("0.5(x+1)", "0.5x+0.5"), ("2.5x^2", "5x^2/2"),
    ("1.5sqrt(3)", "3sqrt(3)/2"), ("0.25pi", "pi/4"), ("x^2.0", "x^2"), ("4^x", "2^(2x)"), ("(x+1)^0.5", "sqrt(x+1)"),
    ("2^xsqrt(2)", "2^(x+1/2)"), ("(1+sqrt(2))^2", "3+2sqrt(2)"), ("(1+sqrt(5))/2", "2/(sqrt(5)-1)"),
    ("sqrt(2)+sqrt(8)", "sqrt(18)"), ("sqrt(12)-sqrt(3)", "sqrt(3)"), ("sqrt(5+2sqrt(6))", "sqrt(2)+sqrt(3)"),
    ("8**(1/3)+1", "3"), ("(2+sqrt(5))**(1/3)", "(1+sqrt(5))/2"), ("1/(1+sqrt(2))", "sqrt(2)-1"),
    ("x^3-1", "(x-1)(x^2+x+1)"), ("1/x+1/y", "(x+y)/(xy)"), ("(x^2-y^2)/(x-y)", "x+y"),
    ("x^4-y^4", "(x-y)(x+y)(x^2+y^2)"),
    ("sqrt(x)/x", "1/sqrt(x)"), ("sqrt(x^3)", "xsqrt(x)"), ("sqrt(4x)", "2sqrt(x)"), ("sqrt(x/4)", "sqrt(x)/2"),
    ("sqrt(-x)", "isqrt(x)"), ("(xy)^2", "x^2y^2"), ("(x^2)^3", "x^6"), ("(x^3)^(1/3)", "x"), ("(-1)^x", "1"),
    ("1/0", "2/0"), ("x/0", "x/0"), ("0*x", "0"), ("0/x", "0"), ("x^0", "1"), ("0^x", "0"),
    # identities sympy's simplify might not prove, and Float corners
    ("sqrt(2+sqrt(3))", "(sqrt(6)+sqrt(2))/2"), ("1/(sqrt(x)+1)", "(sqrt(x)-1)/(x-1)"),
    ("sqrt(8+2sqrt(15))", "sqrt(3)+sqrt(5)"), ("2^x*3^x", "6^x"), ("e^xe^y", "e^(x+y)"), ("x^ax^b", "x^(a+b)"),
    ("sqrt(x)/sqrt(y)", "sqrt(x/y)"), ("x^0.5*x^0.5", "x"), ("(sqrt(x)+1)(sqrt(x)-1)", "x-1"),
    ("(x^3+1)/(x+1)", "x^2-x+1"), ("1/(1/x+1/y)", "xy/(x+y)"), ("(x^2+2x+1)/(x+1)^2", "1"),
    ("sqrt(12x^2)", "2sqrt(3)x"), ("(1+sqrt(3))^3", "10+6sqrt(3)"), ("(2-sqrt(3))^-1", "2+sqrt(3)"),
    ("1/(sqrt(2)+sqrt(3))", "sqrt(3)-sqrt(2)"), ("1/(1+sqrt(2)+sqrt(3))", "(2+sqrt(2)-sqrt(6))/4"),
    ("sqrt(3-2sqrt(2))", "sqrt(2)-1"), ("(1+sqrt(5))^2/4", "(3+sqrt(5))/2"),
    ("x^6-1", "(x-1)(x+1)(x^2+x+1)(x^2-x+1)"), ("(x+y)^5", "x^5+5x^4y+10x^3y^2+10x^2y^3+5xy^4+y^5"),
    ("(x-y)/(sqrt(x)-sqrt(y))", "sqrt(x)+sqrt(y)"), ("sqrt(x^2+2x+1)", "x+1"), ("x/sqrt(x)", "sqrt(x)"),
    ("(x^2)^0.5", "x"), ("4^0.5x", "2x"), ("2^(1/2)", "sqrt(2)"), ("8^(1/3)x", "2x"), ("(1/2)^-2", "4"),
    ("27^(2/3)", "9"), ("(-8)^(1/3)", "1+sqrt(3)i"), ("sqrt(-1)", "i"), ("1e-3", "0.001"), ("1/1000", "0.001"),
    ("0.2", "1/5"), ("1+x^10", "x^10+1"), ("abc", "cba"), ("0.1^3", "0.001"), ("2.50", "5/2"), ("3.0", "3"),
    ("1.0x", "x"), ("100%", "1"), ("1.5e2", "150"),
    ("(1,2)", "(1,2)"), ("2x+3=0", "2x+3"),
]


def make_pairs(labels, seed):
    """The (kind, a, b) pairs drawn with one seed."""
    rng = random.Random(seed)
    # labels sympy would see: at most two letters on their own
    usable = [s for s in labels if s and allowed(f"({s})-({s})")]
    rng.shuffle(usable)
    integers = [s for s in usable if re.fullmatch(r"-?\d+", s)]
    others = [s for s in usable if not re.fullmatch(r"-?\d+", s)]
    chosen = others[:900] + integers[:100]
    pairs = []
    for s in chosen:
        pairs.append(("self", s, s))
        variants = list(rewrites(s, rng))
        rng.shuffle(variants)
        for kind, b in variants[:4]:
            pairs.append((kind, s, b))
    for s in others[900:1300]:
        variants = list(sympy_rewrites(s))
        rng.shuffle(variants)
        for kind, b in variants[:3]:
            pairs.append((kind, s, b))
    for _ in range(2000):
        a = random_expression(rng)
        variants = list(sympy_rewrites(a))
        if variants and rng.random() < 0.7:
            kind, b = rng.choice(variants)
            pairs.append(("generated_" + kind, a, b))
        else:
            pairs.append(("generated_pair", a, random_expression(rng)))
    for _ in range(600):
        a, b = rng.sample(usable, 2)
        pairs.append(("random_pair", a, b))
    for _ in range(100):
        a, b = rng.sample(labels, 2)
        pairs.append(("random_any", a, b))
    return pairs


def main():
    data_dir = sys.argv[1]
    seeds = [int(s) for s in sys.argv[2].split(",")] if len(sys.argv) > 2 else [20261129, 7]
    labels = []
    for name in ("math_train.jsonl", "math_test.jsonl", "math500.jsonl"):
        with open(f"{data_dir}/{name}", encoding="utf-8") as f:
            for line in f:
                row = json.loads(line)
                if row.get("answer"):
                    labels.append(normalise(str(row["answer"])))
    labels = sorted(set(labels))

    pairs = [("spec:" + kind, a, b) for kind, a, b in SPEC_ROWS]
    pairs += [("extra", a, b) for a, b in EXTRA]
    for seed in seeds:
        pairs += make_pairs(labels, seed)

    def on_alarm(signum, frame):
        raise TimeoutError

    signal.signal(signal.SIGALRM, on_alarm)
    seen = set()
    for kind, a, b in pairs:
        if (a, b) in seen:
            continue
        seen.add((a, b))
        row = {"kind": kind, "a": a, "b": b}
        signal.alarm(5)
        try:
            row["equal"] = diff_is_zero(a, b)
        except TimeoutError:
            row["timeout"] = True
        finally:
            signal.alarm(0)
        print(json.dumps(row, ensure_ascii=False), flush=True)


if __name__ == "__main__":
    main()
