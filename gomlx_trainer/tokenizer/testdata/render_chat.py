"""Reference renderings of the Qwen3-4B-Instruct-2507 chat template.

Renders testdata/qwen3_4b_instruct_2507.jinja with Jinja2 set up as Hugging Face
transformers sets it up in apply_chat_template (trim_blocks, lstrip_blocks, a
sandboxed environment, its tojson filter and raise_exception). Run with Debian's
python3 (package python3-jinja2).

stdin: a JSON array of {"messages": [...], "tools": [...] (optional),
"add_generation_prompt": bool (optional)}; stdout: a JSON array of
{"rendered": text} or {"error": message}.
"""
import json
import os
import sys

import jinja2
from jinja2.sandbox import ImmutableSandboxedEnvironment


def raise_exception(message):
    raise jinja2.exceptions.TemplateError(message)


def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
    return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, "qwen3_4b_instruct_2507.jinja"), encoding="utf-8") as f:
        source = f.read()
    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, extensions=["jinja2.ext.loopcontrols"])
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    template = env.from_string(source)
    out = []
    for case in json.load(sys.stdin):
        try:
            text = template.render(
                messages=case["messages"],
                tools=case.get("tools"),
                add_generation_prompt=case.get("add_generation_prompt", False),
            )
            out.append({"rendered": text})
        except Exception as e:  # the Go renderer must fail on the same cases
            out.append({"error": "%s: %s" % (type(e).__name__, e)})
    json.dump(out, sys.stdout, ensure_ascii=False)


main()
