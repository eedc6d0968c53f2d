#!/usr/bin/python3
"""Writes reference.jsonl: pylatexenc 2.10's LatexNodes2Text().latex_to_text(s)
for every input s, made fresh for each input with default settings, as
{"set": ..., "input": s, "output": text} or {"set": ..., "input": s, "error": "ExceptionType"}.

Sets:
  label      every distinct dataset answer (label) containing a backslash
  label_pre  the same labels as slime's math scorer feeds them to latex2text
             (its $, %, ^\\circ clean-up and \\frac -> " \\frac")
  spec       the examples of the scorer spec's LaTeX-to-text table
  tricky     hand-written inputs: spacing, braces, math, comments, environments, errors
  perturbed  labels changed in seeded random ways (spacing, \\dfrac, \\left, stray
             braces, unknown macros, math delimiters, comments, accents, truncation)

Usage (Debian's python3, package python3-pylatexenc):
    /usr/bin/python3 make_reference.py DATA_DIR > reference.jsonl
DATA_DIR holds the dataset JSONL files (`mathrl data pull`).
"""
import glob
import json
import logging
import os
import random
import re
import sys

from pylatexenc.latex2text import LatexNodes2Text
from pylatexenc.version import version_str

assert version_str == "2.10", version_str
logging.disable(logging.CRITICAL)  # pylatexenc logs every tolerated parse error


def convert(s):
    try:
        return {"output": LatexNodes2Text().latex_to_text(s)}
    except Exception as e:  # the Go port must fail exactly here too
        return {"error": type(e).__name__}


def labels(data_dir):
    seen = set()
    for path in sorted(glob.glob(os.path.join(data_dir, "*.jsonl"))):
        with open(path, encoding="utf-8") as f:
            for line in f:
                answer = json.loads(line).get("answer")
                if answer and "\\" in answer:
                    seen.add(answer)
    return sorted(seen)


def slime_pre(s):
    """The parts of slime's normalize() that run before latex2text and change LaTeX."""
    m = re.search(r"^\\text\{(?P<text>.+?)\}$", s)
    if m is not None:
        s = m.group("text")
    s = s.replace("\\%", "%").replace("\\$", "$").replace("$", "").replace("%", "")
    s = re.sub(r"\^ *\\circ", "", s)
    if len(s) > 0 and s[0] == "{" and s[-1] == "}":
        s = s[1:-1]
    s = re.sub(r",\\! *", "", s)
    s = s.replace("\\tfrac", "\\frac").replace("\\dfrac", "\\frac").replace("\\frac", " \\frac")
    return s


SPEC = [
    r"\frac{a}{b}", r"\frac{x+1}{2}", r"\frac{\sqrt{3}}{2}", r"\frac12", r"\sqrt{x}", r"\sqrt2", r"\sqrt[3]{2}",
    r"\pi", r"\infty", r"\cup", r"\cdot", r"\times", r"\theta", r"\alpha", r"\pm", r"\le", r"\leq", r"\ge",
    r"\neq", r"\approx", r"\in", r"\emptyset", r"\varnothing", r"\circ",
    r"\text{x}", r"\textbf{x}", r"\textnormal{x}", r"\overline{x}", r"{x}", r"\mbox{x}", r"\mathbf{v}",
    r"\sin x", r"\cos x", r"\tan x", r"\log x", r"\sec x", r"\csc x", r"\cot x", r"\triangle x", r"\phantom x",
    r"\cfrac x", r"\binom{5}{2}", r"\dbinom{5}{2}", r"\left(", r"\right)", r"a\\b", r"a\,b", r"a\;b", r"a\ b",
    r"\{", r"\}", r"\$", r"\%", r"\begin{pmatrix} 1 \\ 2 \end{pmatrix}",
    r"\begin{pmatrix} 1 & 2 \\ 3 & 4 \end{pmatrix}", r"x^{10}", r"x_{1}",
]

TRICKY = [
    "", " ", "  a   b  ", "a\n\nb", "a\n \nb", "\n\n\n", "a \\", "\\", "\\\\", "a\\", "x^2", "x^{2}_{3}",
    r"\sin x", r"$\sin x$", r"$\sin  x$", r"\sin{x}", r"\sin(x)", r"$\sin{x}$", r"\alpha\beta", r"\alpha \beta",
    r"$\alpha \beta$", r"$\alpha\,\beta$", r"$a \quad b$", r"$a \qquad b$", r"a~b", r"a--b", r"a---b", "``a''",
    r"\frac{1}", r"\frac", r"\frac{}{}", r"{\frac}", r"\frac\sqrt{2}{3}", r"\frac\alpha\beta", r"\frac 1 2",
    r"\frac{1}{2}{3}", r"\dfrac{1}{2}", r"\tfrac{1}{2}", r"\sqrt", r"\sqrt{}", r"\sqrt[]{x}", r"\sqrt[n]x",
    r"\sqrt {2}", r"\sqrt [3] {2}", r"\sqrt\frac12", r"\frac{1}{\sqrt{2}}", r"2\sqrt{3}", r"\sqrt{\sqrt{2}}",
    "}", "{", "a}b", "a{b", "{{a}", "{a}}", "}}{{", r"\}", r"\{1,2\}", r"\left\{1,2\right\}",
    r"\left[0,1\right)", r"\left.\frac{1}{2}\right|", r"\left|x\right|", r"\lvert x\rvert", r"\|x\|",
    "$", "$$", "$x", "x$", "$x$$y$", "$$x$$", r"\(x\)", r"\[x\]", r"\(x", r"x\)", r"\]", r"$\(x\)$",
    r"$x \text{ and } y$", r"\text{$x$}", r"$\text{$x$}$", r"$$\text{$$x$$}$$",
    "%", "a%b", "a % comment\nb", "a%c\n\nb", "a%c\n  b", "a%\rb", "% only", "a\\%b", r"50\%",
    r"\$5", r"5\$", r"\#", r"\&", r"\_", "a&b", r"\begin{cases} 1 & x>0 \\ 0 & x\le 0\end{cases}",
    r"\begin{array}{cc} 1 & 2 \\ 3 & 4 \end{array}", r"\begin{bmatrix}1&2\\3&4\end{bmatrix}",
    r"\begin{pmatrix}\end{pmatrix}", r"\begin{pmatrix} \end{pmatrix}", r"\begin{pmatrix}1\\\end{pmatrix}",
    r"\begin{pmatrix}&\end{pmatrix}", r"\begin{pmatrix} 10 \\ -2 \\ 333 \end{pmatrix}",
    r"\begin{smallmatrix} a & b \end{smallmatrix}", r"\begin{align*} x &= 1 \\ y &= 2 \end{align*}",
    r"\begin{equation} E = mc^2 \end{equation}", r"\begin{itemize}\item a \item[b] c\end{itemize}",
    r"\begin{center}x\end{center}", r"\begin{foo}x\end{foo}", r"\begin{foo}x", r"x\end{foo}",
    r"\begin{foo}x\end{bar}y", r"\begin", r"\begin{", r"\begin x", r"\end", r"\begin{ pmatrix }1\end{ pmatrix }",
    r"\begin{verbatim}\frac12\end{verbatim}", r"\verb|\frac12|", r"\verb", r"\verb ", r"\verb|x",
    r"\'e", r"\"o", r"\~n", r"\^a", r"\`a", r"\c c", r"\c{c}", r"\v s", r"\hat{x}", r"\vec{v}", r"\bar{z}",
    r"\dot{x}", r"\ddot{x}", r"\tilde{n}", r"\hat x", r"\hat{xy}", r"\hat{}", r"\hat", r"\not=", r"\not\in",
    r"\i", r"\'\i", r"\ss", r"\ae", r"\o", r"\l", r"\AA",
    r"\mathbb{R}", r"\mathbb{Z}^+", r"\mathcal{A}", r"\mathfrak{g}", r"\mathrm{d}x", r"\mathit{h}",
    r"\mathsf{X}", r"\mathtt{t}", r"\mathscr{L}", r"\mathbf{1}", r"\mathbf", r"\mathbf{}",
    r"\boxed{5}", r"\boxed{\frac{1}{2}}", r"\fbox{5}", r"\foo", r"\foo{bar}", r"\foo bar", r"$\foo bar$",
    r"\foo[1]{2}", r"\unknown{a}{b}", r"\operatorname{lcm}(a,b)", r"\lim_{x\to 0}", r"\sum_{i=1}^n i",
    r"\int_0^1 x\,dx", r"\prod", r"\ldots", r"\cdots", r"1,2,\dots,n", r"\to", r"\rightarrow", r"\Rightarrow",
    r"\implies", r"\iff", r"\equiv", r"\pmod{5}", r"\bmod", r"\mod 5", r"\gcd(a,b)", r"\deg", r"\angle ABC",
    r"\triangle ABC", r"\overline{AB}", r"\overarc{AB}", r"\widehat{AB}", r"\perp", r"\parallel", r"\sim",
    r"\cong", r"\degree", r"90^\circ", r"90^{\circ}", r"\$1.50", r"1{,}000", r"1,\!000",
    r"\hspace{1cm}x", r"\hspace*{1cm}x", r"\vspace{1cm}x", r"\quad", r"\!", r"a\!b", r"\,", r"\ ",
    r"\text{if }x", r"\text{ or }", r"\textbf{bold} \textit{it}", r"\emph{e}", r"\textrm{r}", r"\texttt{t}",
    r"\mbox{ cm}", r"\label{eq}x", r"\ref{eq}", r"\eqref{eq}", r"\cite{x}", r"\url{http://a.b}",
    r"\href{a}{b}", r"\footnote{f}", r"\section{Intro}", r"\section*{Intro}", r"\subsection{s}", r"\paragraph{p}",
    r"\part{p}", r"\chapter{c}", r"\title{T}", r"\title{T}\author{A}\date{D}\maketitle", r"\item x",
    r"\item", r"\input{file}", r"\input", r"\include{f}", r"\includegraphics{g}", r"\texorpdfstring{a}{b}",
    r"\texorpdfstring", r"\color{red}x", r"\textcolor{red}{x}", r"\colorbox{red}{x}", r"\newcommand{\a}{b}",
    r"\ket{0}", r"\bra{1}", r"\braket{0}{1}", r"\xrightarrow{f}", r"\xrightarrow[a]{b}", r"\ensuremath{x}",
    r"\hphantom{x}", r"\vphantom{x}y", r"\exercise{e}", r"\uebung{u}[o]", r"\hint{h}", r"\id", r"\nicefrac{1}{2}",
    r"\textfrac{1}{2}", r"\underbrace{x}", r"\overbrace{x}", r"\underline{x}", r"\widetilde{x}",
    "\\\\*", "a\\\\[2mm]b", "a\\\\ [C,D]", "a\\\\*[1pt]b", "a \\\\ \n b", r"\\ x \\",
    "\u00e9", "\u03c0", "x\u00a0y", "x\u2003y", "a\u2028b", "a\tb", "a\r\nb", "\u00a0", r"\alpha\u00e9",
    r"\caf\'e", r"\na\"ive", r"\sqrt{\u03c0}",
    "{" * 50 + "x" + "}" * 50, "{" * 400 + "x" + "}" * 400, r"\frac{" * 30 + "x" + "}{2}" * 30,
    r"\frac{-b \pm \sqrt{b^2-4ac}}{2a}", r"x = \frac{\pi}{4} + k\pi, k \in \mathbb{Z}",
    r"(-\infty, 2] \cup [3, \infty)", r"\left( 3, \frac{\pi}{2} \right)", r"y = -\frac{1}{2}x + 3",
    r"\dfrac{1}{2}\text{ cm}^2", r"10\sqrt{2}\text{ units}", r"\text{(A)}", r"\textbf{(B) }7", r"3 \times 10^{5}",
    r"\{1, 2, 3\}", r"\varnothing", r"\emptyset", r"\mathbf{(E)}", r"i\sqrt{2}", r"2^{10}", r"10^{-3}",
]

PERTURBATIONS = [
    ("nospace", lambda s, r: s.replace(" ", "")),
    ("space_after_macros", lambda s, r: re.sub(r"(\\[A-Za-z]+)", r"\1 ", s)),
    ("double_spaces", lambda s, r: s.replace(" ", "  ")),
    ("newline_spaces", lambda s, r: s.replace(" ", "\n")),
    ("dfrac", lambda s, r: s.replace("\\frac", "\\dfrac")),
    ("tfrac", lambda s, r: s.replace("\\frac", "\\tfrac")),
    ("left_right", lambda s, r: s.replace("(", "\\left(").replace(")", "\\right)")),
    ("left_right_brackets", lambda s, r: s.replace("[", "\\left[").replace("]", "\\right]")),
    ("left_dot", lambda s, r: "\\left. " + s + " \\right|"),
    ("inline_math", lambda s, r: "$" + s + "$"),
    ("paren_math", lambda s, r: "\\(" + s + "\\)"),
    ("display_math", lambda s, r: "\\[" + s + "\\]"),
    ("dollar_display", lambda s, r: "$$" + s + "$$"),
    ("boxed", lambda s, r: "\\boxed{" + s + "}"),
    ("boxed_math", lambda s, r: "The answer is $\\boxed{" + s + "}$."),
    ("unknown_macro", lambda s, r: insert(s, r, r.choice(["\\foo ", "\\bar", "\\qux{1}", "\\mathop{x}", "\\displaystyle "]))),
    ("drop_close", lambda s, r: drop(s, r, "}")),
    ("drop_open", lambda s, r: drop(s, r, "{")),
    ("extra_close", lambda s, r: insert(s, r, "}")),
    ("extra_open", lambda s, r: insert(s, r, "{")),
    ("dollar", lambda s, r: insert(s, r, "$")),
    ("percent", lambda s, r: insert(s, r, "%")),
    ("comment", lambda s, r: insert(s, r, "% note\n")),
    ("newline_row", lambda s, r: insert(s, r, "\\\\ ")),
    ("accent", lambda s, r: insert(s, r, r.choice(["\\hat{x}", "\\vec v", "\\'e", "\\bar{z}", "\\~n", "\\c c"]))),
    ("environment", lambda s, r: "\\begin{" + r.choice(["cases", "array}{c", "pmatrix", "bmatrix", "align*", "equation", "center", "foo"]) + "}" + s + "\\end{" + r.choice(["cases", "pmatrix", "bmatrix", "align*", "equation", "center", "foo"]) + "}"),
    ("spacing_macros", lambda s, r: insert(s, r, r.choice(["\\,", "\\;", "\\!", "\\quad ", "~", "\\ ", "\\:"]))),
    ("text_unit", lambda s, r: s + r.choice(["\\text{ cm}", "\\mbox{ units}", "\\text{ degrees}", "^\\circ", "\\%"])),
    ("truncate", lambda s, r: s[: r.randrange(1, len(s) + 1)]),
    ("star", lambda s, r: insert(s, r, "*")),
    ("brackets", lambda s, r: insert(s, r, "[")),
]


def insert(s, r, what):
    i = r.randrange(0, len(s) + 1)
    return s[:i] + what + s[i:]


def drop(s, r, ch):
    idx = [i for i, c in enumerate(s) if c == ch]
    if not idx:
        return s + ch
    i = r.choice(idx)
    return s[:i] + s[i + 1:]


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    labs = labels(sys.argv[1])
    rows = []
    for s in labs:
        rows.append(("label", s))
    pre = []
    for s in labs:
        p = slime_pre(s)
        if p != s and "\\" in p:
            pre.append(p)
    for s in sorted(set(pre)):
        rows.append(("label_pre", s))
    for s in SPEC:
        rows.append(("spec", s))
    for s in TRICKY:
        rows.append(("tricky", s))
    r = random.Random(20251129)
    sample = r.sample(labs, min(400, len(labs)))
    seen = set()
    for s in sample:
        for name, fn in PERTURBATIONS:
            p = fn(s, r)
            if p not in seen:
                seen.add(p)
                rows.append(("perturbed", p))
    # two perturbations on top of each other
    for s in sample:
        (_, f), (_, g) = r.sample(PERTURBATIONS, 2)
        p = g(f(s, r), r)
        if p not in seen:
            seen.add(p)
            rows.append(("perturbed", p))
    for set_name, s in rows:
        rec = {"set": set_name, "input": s}
        rec.update(convert(s))
        sys.stdout.write(json.dumps(rec, ensure_ascii=False) + "\n")


main()
