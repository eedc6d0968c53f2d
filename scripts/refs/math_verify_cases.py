#!/usr/bin/env python3
"""Score answers with Hugging Face's Math-Verify, one verdict per case.

Reads JSON lines on stdin, each {"id": ..., "gold": ..., "answer": ...} ("response" is
accepted for "answer"), and prints one JSON object on stdout:

    {"math_verify": "0.9.0", "case_timeout": s, "seconds": total,
     "cases": [{"id", "correct", "status", "error", "seconds", "inner_timeouts",
                "gold", "answer"}, ...]}

How each case is scored, following Math-Verify's README:

* the gold is a label: a bare LaTeX answer is put in a math environment ($...$),
  as the README requires for LaTeX, and parsed with LatexExtractionConfig() only
  (its advice when the gold holds LaTeX); a label that already holds a \\boxed{}
  (a whole solution) is parsed as it is;
* the answer is a model response: parsed with parse()'s defaults
  (LatexExtractionConfig() and ExprExtractionConfig(), \\boxed{} included);
* verify(gold, answer), gold first (the function is not symmetric).

Timeouts: Math-Verify bounds every parse and every comparison with its own
signal.alarm (5 s each by default); this script adds a budget for the whole case
(--case-timeout seconds of CPU time, on ITIMER_PROF, a timer Math-Verify does
not touch). Math-Verify scores a step that trips its own alarm as false and
goes on; "inner_timeouts" counts those steps, and the verdict stays Math-Verify's.
A case past the whole budget is scored false with status "timeout"; an
exception escaping Math-Verify is scored false with status "error". "seconds"
(per case and in total) counts parse + verify only: not the interpreter's start,
the imports, JSON, or printing the parsed values.
"""

import argparse
import json
import logging
import signal
import sys
import time
from importlib import metadata

from math_verify import LatexExtractionConfig, parse, verify


class CaseTimeout(BaseException):
    """Raised by the case budget's signal; a BaseException so that Math-Verify's
    `except Exception` handlers let it through."""


class TimeoutLog(logging.Handler):
    """Counts Math-Verify's own "Timeout during ..." warnings."""

    def __init__(self):
        super().__init__(logging.WARNING)
        self.count = 0

    def emit(self, record):
        if "Timeout" in record.getMessage():
            self.count += 1


def gold_text(label):
    """The label as Math-Verify wants a LaTeX gold: inside a math environment."""
    if "\\boxed" in label:
        return label
    return "$" + label + "$"


def on_budget(signum, frame):
    raise CaseTimeout()


def shown(parsed, budget, limit=200):
    """Short strings of parsed values, for reading disagreements (sympy's str
    can be slow or fail, so it runs under the case budget too)."""
    out = []
    for p in parsed:
        signal.setitimer(signal.ITIMER_PROF, budget)
        try:
            out.append(str(p)[:limit])
        except CaseTimeout:
            out.append("<str timed out>")
        except Exception as e:
            out.append("<%s>" % type(e).__name__)
        finally:
            signal.setitimer(signal.ITIMER_PROF, 0)
    return out


def score(case, budget, log):
    """Scores one case within budget seconds of CPU time; returns its record."""
    label = case["gold"]
    answer = case.get("answer", case.get("response", ""))
    rec = {"id": case.get("id", ""), "correct": False, "status": "ok", "error": ""}
    before = log.count
    gold, pred = [], []
    start = time.perf_counter()
    signal.setitimer(signal.ITIMER_PROF, budget)
    try:
        gold = parse(gold_text(label), extraction_config=[LatexExtractionConfig()])
        pred = parse(answer)
        rec["correct"] = bool(verify(gold, pred))
    except CaseTimeout:
        rec["status"], rec["error"] = "timeout", "case budget of %gs" % budget
    except Exception as e:
        rec["status"], rec["error"] = "error", "%s: %s" % (type(e).__name__, e)
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
    rec["seconds"] = time.perf_counter() - start
    rec["inner_timeouts"] = log.count - before
    rec["gold"], rec["answer"] = shown(gold, budget), shown(pred, budget)
    return rec


def read_cases(stream):
    """The JSON lines of stream, skipping blank ones."""
    return [json.loads(line) for line in stream if line.strip()]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--case-timeout", type=float, default=20.0,
                    help="CPU seconds one case may take in all (default 20)")
    args = ap.parse_args()
    log = TimeoutLog()
    logging.getLogger("math_verify").addHandler(log)
    logging.getLogger("math_verify").propagate = False
    signal.signal(signal.SIGPROF, on_budget)
    cases = read_cases(sys.stdin)
    records = [score(c, args.case_timeout, log) for c in cases]
    json.dump({
        "math_verify": metadata.version("math-verify"),
        "case_timeout": args.case_timeout,
        "seconds": sum(r["seconds"] for r in records),
        "cases": records,
    }, sys.stdout)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
