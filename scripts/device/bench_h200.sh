#!/usr/bin/env bash
# Side-by-side speed of mathrl (GoMLX + XLA through JAX's PJRT CUDA plugin) and
# PyTorch + transformers on the same Qwen3-0.6B shapes (28 layers, d=1024, 16 q /
# 8 kv heads, head 128, ffn 3072, vocab 151,936, tied, bf16): a training step on
# 64 sequences x 320 tokens and sampling 256 new tokens for 64 prompts of 320
# (mathrl also times decoding that attends over the whole cache, as a baseline).
# Prints both results and the ratios; writes them under $OUT (default ./bench-out).
# Each figure comes with its fraction of the H200's datasheet roofline (4.8 TB/s HBM3e,
# 989 TFLOP/s dense bf16, 67 TFLOP/s fp32; `mathrl bench --roofline-peaks h200`): the
# train step and the prefill of the matmul peak (MFU), decoding of the bandwidth (MBU).
# Usually run through check_h200.sh, which runs every GPU check in one command.
#
# The GPU machine needs no Go: build the binary beforehand (scripts/device/prepare.sh)
# and bring it along. It needs a python3 with torch, transformers (>= 4.51, for
# Qwen3) and JAX's CUDA plugin wheel (jax-cuda13-pjrt or jax-cuda12-pjrt) with the
# nvidia-* wheels; mathrl finds the plugin and the CUDA libraries in that python's
# site-packages (see `mathrl doctor`). Nothing is downloaded.
#
# Knobs: MATHRL_BIN, BATCH (64), LEN (320), NEW_TOKENS (256), STEPS (5), BACKEND (cuda),
# MODEL (qwen3-0.6b), DTYPE (bfloat16), TINY_MODEL (a tiny-qwen3-hf folder: also check
# `mathrl forward` on the device against transformers' logits, computed on the machine's CPU),
# SKIP_TORCH=1 (no PyTorch side: a dry run of the mathrl side, e.g. on a CPU), GOMLX_LIMIT (115 s)
# TORCH_LIMIT (55 s) and DECOMPOSED_LIMIT (65 s: its compilation took 41.5 s on an H200; the training step again with the
# decomposed attention, --decomposed-attention): time limits of the benches, so that an
# overrun of one still leaves the others' JSON; PYTHON (python3); ROOFLINE_PEAKS (h200: the
# datasheet limits the fractions are of; GB/s,TFLOP/s f32,TFLOP/s bf16 for another device).
# A failed step is reported and the next one still runs; the exit status is 1 if any failed.
set -uo pipefail
cd "$(dirname "$0")/../.."
bin=${MATHRL_BIN:-.cache/device/mathrl}
out=${OUT:-bench-out}
mkdir -p "$out"
batch=${BATCH:-64} len=${LEN:-320} new=${NEW_TOKENS:-256} steps=${STEPS:-5}
backend=${BACKEND:-cuda} model=${MODEL:-qwen3-0.6b} dtype=${DTYPE:-bfloat16}
py=${PYTHON:-python3}
peaks=${ROOFLINE_PEAKS:-h200}
gomlx_limit=${GOMLX_LIMIT:-115} torch_limit=${TORCH_LIMIT:-55} decomposed_limit=${DECOMPOSED_LIMIT:-65}
failed=0
fail() { echo "FAILED: $*"; failed=1; }

echo "== mathrl doctor"
timeout -k 5 10 "$bin" doctor | tee "$out/doctor.txt" || fail "mathrl doctor"

if [ -n "${TINY_MODEL:-}" ]; then
  # XLA may run float32 matmuls as TF32 on the GPU (10-bit mantissa), which alone
  # would miss 1e-4; NVIDIA_TF32_OVERRIDE=0 keeps cuBLAS in full float32.
  echo "== parity on the device: tiny-qwen3-hf, float32, against transformers (computed on the machine's CPU)"
  if "$py" scripts/device/bench_torch.py --parity-prompt "$TINY_MODEL/reference.json" > "$out/parity_in.jsonl" &&
    NVIDIA_TF32_OVERRIDE=0 timeout -k 5 90 "$bin" forward --backend "$backend" --model "$TINY_MODEL" --in "$out/parity_in.jsonl" --out "$out/parity_out.jsonl"; then
    "$py" scripts/device/bench_torch.py --parity-check "$TINY_MODEL" "$out/parity_out.jsonl" || fail "parity"
  else
    fail "parity: mathrl forward"
  fi
fi

echo "== mathrl bench (GoMLX + XLA, $dtype, $backend)"
timeout -k 5 "$gomlx_limit" "$bin" bench --backend "$backend" --config "$model" --dtype "$dtype" --roofline-peaks "$peaks" \
  --batch "$batch" --len "$len" --new-tokens "$new" --steps "$steps" --temperature 1 --json > "$out/gomlx.json" || fail "mathrl bench"
cat "$out/gomlx.json"

if [ -z "${SKIP_TORCH:-}" ]; then
  echo "== PyTorch + transformers (eager, SDPA, bf16)"
  timeout -k 5 "$torch_limit" "$py" scripts/device/bench_torch.py --batch "$batch" --len "$len" --new-tokens "$new" --steps "$steps" > "$out/torch.json" ||
    fail "PyTorch bench"
  cat "$out/torch.json"
  echo "== ratios"
  "$py" scripts/device/bench_torch.py --compare "$out/gomlx.json" "$out/torch.json" | tee "$out/ratios.txt" || fail "ratios"
fi

# The first bench's training step uses fused (flash) attention where the backend has it
# (XLA on CUDA, bfloat16); this one builds the decomposed graph, with [B, heads, T, T]
# scores, to compare the two paths on the same shapes.
echo "== mathrl bench, training step with the decomposed attention"
timeout -k 5 "$decomposed_limit" "$bin" bench --backend "$backend" --config "$model" --dtype "$dtype" --what train --roofline-peaks "$peaks" \
  --decomposed-attention --batch "$batch" --len "$len" --steps "$steps" --json > "$out/gomlx_decomposed.json" ||
  fail "mathrl bench --decomposed-attention"
cat "$out/gomlx_decomposed.json"
exit $failed
