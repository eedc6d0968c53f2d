#!/usr/bin/python3
"""Build slime_verdicts.jsonl.gz (slime's own verdicts on constructed and
perturbed (response, label) cases) and slime_labels.jsonl.gz (slime's
normalised forms of every distinct label) for the Go scorers' tests.

usage: /usr/bin/python3 make_verdicts.py RM_HUB DATA_DIR OUT_DIR

RM_HUB is a folder holding slime's scorer files as they are in
slime/rollout/rm_hub/ (math_utils.py, deepscaler.py, math_dapo_utils.py);
they are imported from there, never copied into this project. DATA_DIR holds
the pulled datasets (math_train.jsonl, math_test.jsonl, aime24.jsonl,
aime25.jsonl). Run with Debian's python3 (sympy 1.11.1, pylatexenc 2.10).

Each line of slime_labels.jsonl.gz is one distinct label of the four files:
  {"label": str, "mathd": mathd_normalize_answer(label), "normalize": _normalize(label),
   "minerva": normalize_final_answer(label), "dapo_gt": str(int(float(minerva))) or null}

Each line of slime_verdicts.jsonl.gz is one case scored by all three scorers:
  {"family": "tp"|"fp"|"perturb"|"number"|"fragment", "response": str, "label": str|int|float,
   "math": 0|1, "deepscaler": 0|1, "dapo": 1|-1|null, "pred": str|null, "dapo_error": str|null}
Families: tp/fp are the correct-by-construction and wrong-by-construction
responses of the validation method (one of its five templates per label, in
turn); perturb restates a sampled label in another form (or a wrong one);
number gives numeric labels as JSON numbers; fragment answers with a
math fragment ($...$) taken from the problem's own reference solution (often
an intermediate result, sometimes the answer in another form). dapo is scored as compute_score
does: verify() on the last 300 characters. A case that runs longer than 30 s
in slime's code is left out (reported on stderr).
"""
import gzip
import importlib
import json
import os
import random
import re
import signal
import sys

THINK = "<think>\nLet me think about this problem carefully.\n</think>\n\n"
INTRO = "Let me work through the problem step by step.\n\n"


def boxed(a):
    return INTRO + "Therefore, the final answer is $\\boxed{" + a + "}$."


TEMPLATES = {
    "boxed": boxed,
    "answer_line": lambda a: INTRO + "Answer: " + a,
    "boxed+answer_line": lambda a: boxed(a) + "\nAnswer: " + a,
    "think+boxed": lambda a: THINK + boxed(a),
    "think+boxed+answer_line": lambda a: THINK + boxed(a) + "\nAnswer: " + a,
}
VARIANTS = list(TEMPLATES)


def load(rm_hub):
    parent, name = os.path.split(os.path.abspath(rm_hub))
    sys.path.insert(0, parent)
    mu = importlib.import_module(name + ".math_utils")
    ds = importlib.import_module(name + ".deepscaler")
    dp = importlib.import_module(name + ".math_dapo_utils")
    return mu, ds, dp


def labels_of(path):
    out = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.strip():
                a = json.loads(line).get("answer")
                if a is not None:
                    out.append(a)
    return out


def fragments_of(path):
    """(label, [inline math fragments of the solution]) for every labelled row with a solution."""
    out = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            if not line.strip():
                continue
            row = json.loads(line)
            if row.get("answer") is None or not row.get("solution"):
                continue
            frags = [m for m in re.findall(r"\$([^$]{1,60})\$", row["solution"]) if m.strip()]
            if frags:
                out.append((row["answer"], frags))
    return out


def as_float(s):
    try:
        return float(s)
    except (ValueError, TypeError):
        return None


def equivalent(mu, a, b):
    """The validation method's partner rule: labels that must not serve as each other's wrong answer."""
    if a.strip() == b.strip():
        return True
    if mu.mathd_normalize_answer(a) == mu.mathd_normalize_answer(b):
        return True
    if mu._normalize(a) == mu._normalize(b):
        return True
    fa, fb = as_float(a), as_float(b)
    return fa is not None and fb is not None and fa == fb


def partner(mu, labels, i):
    n = len(labels)
    for k in range(1, n):
        w = labels[(i + k) % n]
        if not equivalent(mu, labels[i], w):
            return w
    return None


class Timeout(Exception):
    pass


def on_alarm(signum, frame):
    raise Timeout()


def score(mu, ds, dp, family, response, label):
    row = {"family": family, "response": response, "label": label}
    row["math"] = 1 if mu.grade_answer_verl(response, label) else 0
    row["deepscaler"] = ds.get_deepscaler_rule_based_reward(response, label)
    try:
        ok, pred = dp.verify(response[-300:], label)
        row.update(dapo=1 if ok else -1, pred=pred, dapo_error=None)
    except (ValueError, OverflowError) as e:
        row.update(dapo=None, pred=None, dapo_error=type(e).__name__)
    return row


def perturbations(label, wrong, rng):
    """(answer text, response template) pairs restating label in other forms, plus a few wrong ones."""
    L, W = label, wrong
    forms = [
        L.replace(" ", ""),
        re.sub(r",\s*", ", ", L),
        L.replace("\\frac", "\\dfrac"),
        L.replace("\\dfrac", "\\frac").replace("\\tfrac", "\\frac"),
        L.replace("\\left", "").replace("\\right", ""),
        L.replace("(", "\\left(").replace(")", "\\right)"),
        "x = " + L,
        "$" + L + "$",
        "\\text{" + L + "}",
        L + "\\text{ cm}",
        L + " cm",
        L + "^\\circ",
        L + "\\%",
        L.upper(),
        "\\mbox{" + L + "}",
        "(" + L + ")",
        "-" + L,
        L + ".",
        "\\boxed{" + L + "}",
        W,
        L + "0",
    ]
    f = as_float(L)
    if f is not None:
        if f == int(f) and abs(f) < 1e15:
            i = int(f)
            forms += [str(i) + ".0", f"{i:,}", str(i + 1), str(i) + ".00", "0" + str(i)]
        else:
            forms += [repr(round(f, 2)), repr(f), str(int(f))]
    m = re.fullmatch(r"\\d?frac\{(-?\d+)\}\{(\d+)\}", L)
    if m:
        a, b = int(m.group(1)), int(m.group(2))
        forms += [f"{a}/{b}", repr(a / b), f"{a * 2}/{b * 2}", f"\\frac{a}{b}" if a < 10 and b < 10 else f"{a}/{b}"]
    m = re.fullmatch(r"\\sqrt\{(\d)\}", L)
    if m:
        forms.append("\\sqrt" + m.group(1))
    m = re.fullmatch(r"\(([^(),]+),\s*([^(),]+)\)", L)
    if m:
        forms += [f"({m.group(2)}, {m.group(1)})", f"[{m.group(1)}, {m.group(2)})", f"{m.group(1)}, {m.group(2)}"]
    if re.fullmatch(r"[A-Za-z ]+", L):
        forms += [L.lower(), L.title(), "\\textbf{" + L + "}"]
    out = []
    for a in dict.fromkeys(forms):  # unique, in order
        variant = VARIANTS[rng.randrange(len(VARIANTS))]
        out.append(TEMPLATES[variant](a))
    # response shapes around the label itself
    out += [
        "\\boxed{" + W + "} no wait \\boxed{" + L + "}",
        "\\boxed{" + L + "} no wait \\boxed{" + W + "}",
        "<think>\n\\boxed{" + L + "}\n</think>\n\nSo the answer is " + L + ".",
        "<think>\n\\boxed{" + W + "}",
        "<think>\n\\boxed{" + L + "}",
        "scratch \\boxed{" + W + "}###Response\\boxed{" + L + "}",
        INTRO + "Answer: " + L + ".",
        INTRO + "**Answer:** " + L,
        INTRO + "answer: " + L,
        INTRO + "Answer: \\boxed{" + L + "}",
        INTRO + "Answer: $" + L + "$",
        INTRO + "Answer: " + L + "\n" + "x" * 300,
        "<think>Answer: " + L + "</think>\nAnswer: " + W,
        THINK + "\\boxed{" + L + "} (the \\boxed command)",
        THINK + "\\fbox{" + L + "}",
        THINK + "\\boxed " + L,
    ]
    return out


def write_labels(mu, dp, data_dir, path):
    seen = {}
    for name in ["math_train.jsonl", "math_test.jsonl", "aime24.jsonl", "aime25.jsonl"]:
        for L in labels_of(os.path.join(data_dir, name)):
            seen.setdefault(L, None)
    with gzip.open(path + ".tmp", "wt", encoding="utf-8", compresslevel=9) as f:
        for L in seen:
            minerva = dp.normalize_final_answer(L)
            try:
                gt = str(int(float(minerva)))
            except (ValueError, OverflowError):
                gt = None
            row = {"label": L, "mathd": mu.mathd_normalize_answer(L), "normalize": mu._normalize(L),
                   "minerva": minerva, "dapo_gt": gt}
            f.write(json.dumps(row, ensure_ascii=False) + "\n")
    os.replace(path + ".tmp", path)
    print(f"{len(seen)} labels written", file=sys.stderr)


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    rm_hub, data_dir, out_dir = sys.argv[1:]
    out_path = os.path.join(out_dir, "slime_verdicts.jsonl.gz")
    mu, ds, dp = load(rm_hub)
    write_labels(mu, dp, data_dir, os.path.join(out_dir, "slime_labels.jsonl.gz"))
    rng = random.Random(20250607)
    signal.signal(signal.SIGALRM, on_alarm)
    cases = []
    pool = []
    for name in ["math_train.jsonl", "math_test.jsonl", "aime24.jsonl", "aime25.jsonl"]:
        labels = labels_of(os.path.join(data_dir, name))
        for i, L in enumerate(labels):
            variant = VARIANTS[i % len(VARIANTS)]
            cases.append(("tp", TEMPLATES[variant](L), L))
            W = partner(mu, labels, i)
            if W is not None:
                cases.append(("fp", TEMPLATES[variant](W), L))
                pool.append((L, W))
    for L, W in rng.sample(pool, 1200):
        for resp in perturbations(L, W, rng):
            cases.append(("perturb", resp, L))
        if rng.random() < 0.2:
            cases.append(("perturb", THINK + boxed(L), "\\boxed{" + L + "}"))
    numeric = [(L, W) for L, W in pool if as_float(L) is not None and re.fullmatch(r"-?\d+(\.\d+)?", L.strip())]
    for L, W in rng.sample(numeric, 400):
        f = float(L)
        for lab in ([int(f)] if f == int(f) else []) + [f]:
            for resp in [THINK + boxed(L), THINK + boxed(W), boxed(L) + "\nAnswer: " + L, INTRO + "Answer: " + W]:
                cases.append(("number", resp, lab))
    for lab in [0, 0.0, 1, -1, 2.5, 1e16, 1e-05, 10**20]:
        for resp in [THINK + boxed("0"), THINK + boxed(str(lab)), INTRO + "Answer: " + str(lab), INTRO + "Answer: 0"]:
            cases.append(("number", resp, lab))
    frag_rows = []
    for name in ["math_train.jsonl", "math_test.jsonl"]:
        frag_rows += fragments_of(os.path.join(data_dir, name))
    for L, frags in rng.sample(frag_rows, 4000):
        a = frags[rng.randrange(len(frags))]
        variant = VARIANTS[rng.randrange(len(VARIANTS))]
        cases.append(("fragment", TEMPLATES[variant](a), L))
    dropped = 0
    with gzip.open(out_path + ".tmp", "wt", encoding="utf-8", compresslevel=9) as f:
        for n, (family, resp, lab) in enumerate(cases):
            signal.alarm(30)
            try:
                row = score(mu, ds, dp, family, resp, lab)
            except Timeout:
                dropped += 1
                print(f"dropped (timeout): {family} {resp!r} {lab!r}", file=sys.stderr)
                continue
            finally:
                signal.alarm(0)
            f.write(json.dumps(row, ensure_ascii=False) + "\n")
            if n % 5000 == 0:
                print(f"{n}/{len(cases)}", file=sys.stderr)
    os.replace(out_path + ".tmp", out_path)
    print(f"{len(cases) - dropped} cases written, {dropped} dropped", file=sys.stderr)


if __name__ == "__main__":
    main()
