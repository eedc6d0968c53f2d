#!/usr/bin/python3
"""Reads JSON strings, one per line, on stdin; writes for each a JSON object
{"output": text} or {"error": "ExceptionType"} with pylatexenc 2.10's
LatexNodes2Text().latex_to_text (a fresh converter per input, default settings)."""
import json
import logging
import sys

from pylatexenc.latex2text import LatexNodes2Text

logging.disable(logging.CRITICAL)
for line in sys.stdin:
    s = json.loads(line)
    try:
        rec = {"output": LatexNodes2Text().latex_to_text(s)}
    except Exception as e:
        rec = {"error": type(e).__name__}
    sys.stdout.write(json.dumps(rec) + "\n")
