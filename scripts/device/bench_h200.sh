#!/usr/bin/env bash
# Side-by-side speed of mathrl (GoMLX + XLA through JAX's PJRT CUDA plugin) and
# PyTorch + transformers on the same Qwen3-0.6B shapes (28 layers, d=1024, 16 q /
# 8 kv heads, head 128, ffn 3072, vocab 151,936, tied, bf16): a training step on
# 64 sequences x 320 tokens and sampling 256 new tokens for 64 prompts of 320.
# Prints both results and the ratios; writes them under $OUT (default ./bench-out).
#
# The GPU machine needs no Go: build the binary beforehand on an x86-64 Linux
# machine (cgo on, glibc >= 2.34) and bring it along:
#   go build -o .cache/bin/mathrl ./cmd/mathrl
# It needs a python3 with torch, transformers (>= 4.51, for Qwen3) and JAX's
# CUDA plugin wheel (jax-cuda13-pjrt or jax-cuda12-pjrt) with the nvidia-* wheels;
# mathrl finds the plugin and the CUDA libraries in that python's site-packages
# (see `mathrl doctor`). Nothing is downloaded.
#
# Optional: TINY_MODEL=/path/to/tiny-qwen3-hf also checks `mathrl forward` on the
# GPU against the checkpoint's reference.json (transformers' logits).
set -euo pipefail
cd "$(dirname "$0")/../.."
bin=${MATHRL_BIN:-.cache/bin/mathrl}
out=${OUT:-bench-out}
mkdir -p "$out"
batch=${BATCH:-64} len=${LEN:-320} new=${NEW_TOKENS:-256} steps=${STEPS:-5}

echo "== mathrl doctor"
"$bin" doctor | tee "$out/doctor.txt"

if [ -n "${TINY_MODEL:-}" ]; then
  echo "== parity on the GPU: tiny-qwen3-hf, float32"
  python3 scripts/device/bench_torch.py --parity-prompt "$TINY_MODEL/reference.json" > "$out/parity_in.jsonl"
  "$bin" forward --backend cuda --model "$TINY_MODEL" --in "$out/parity_in.jsonl" --out "$out/parity_out.jsonl"
  python3 scripts/device/bench_torch.py --parity-check "$TINY_MODEL/reference.json" "$out/parity_out.jsonl"
fi

echo "== mathrl bench (GoMLX + XLA, bf16)"
"$bin" bench --backend cuda --config qwen3-0.6b --dtype bf16 \
  --batch "$batch" --len "$len" --new-tokens "$new" --steps "$steps" --json | tee "$out/gomlx.json"

echo "== PyTorch + transformers (eager, SDPA, bf16)"
python3 scripts/device/bench_torch.py --batch "$batch" --len "$len" --new-tokens "$new" --steps "$steps" | tee "$out/torch.json"

echo "== ratios"
python3 scripts/device/bench_torch.py --compare "$out/gomlx.json" "$out/torch.json" | tee "$out/ratios.txt"
