#!/usr/bin/python3
"""Score (response, label) cases with slime's own `math` scorer and time it,
for BenchmarkVersusSlime.

usage: /usr/bin/python3 slime_speed.py RM_HUB < cases.jsonl > result.json

RM_HUB is a folder holding slime's scorer files as they are in
slime/rollout/rm_hub/ (math_utils.py at least); math_utils is imported from
there, never copied into this project. Run with Debian's python3 (sympy
1.11.1, pylatexenc 2.10), as testdata/make_verdicts.py in package scorer.

Each input line is {"response": str, "label": str}. All lines are read
before the clock starts; only the loop that calls grade_answer_verl on each
case is timed, by the clock (time.perf_counter) and in CPU time
(time.process_time). The output is one JSON object:
  {"cases": int, "score_seconds": float, "score_cpu_seconds": float, "verdicts": [0|1, ...]}
with the verdicts in input order (1 where grade_answer_verl is true).
"""
import importlib
import json
import os
import sys
import time


def load(rm_hub):
    parent, name = os.path.split(os.path.abspath(rm_hub))
    sys.path.insert(0, parent)
    return importlib.import_module(name + ".math_utils")


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    mu = load(sys.argv[1])
    cases = [json.loads(line) for line in sys.stdin if line.strip()]
    pairs = [(c["response"], c["label"]) for c in cases]
    grade = mu.grade_answer_verl
    start, cpu_start = time.perf_counter(), time.process_time()
    verdicts = [1 if grade(response, label) else 0 for response, label in pairs]
    seconds, cpu_seconds = time.perf_counter() - start, time.process_time() - cpu_start
    json.dump({"cases": len(pairs), "score_seconds": seconds, "score_cpu_seconds": cpu_seconds, "verdicts": verdicts},
              sys.stdout)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
