#!/usr/bin/env bash
# Every GPU check in one command, for a machine lent for minutes: the speed
# comparison with PyTorch + transformers (bench_h200.sh, with parity on the device
# when .cache/device/tiny-qwen3-hf is there), then a few GRPO steps with real tool
# calls and the transformers export check (train_h200.sh). Run
# scripts/device/prepare.sh first, where Go is, and bring .cache/device along.
#
# Each stage runs under a time limit (BENCH_LIMIT 270 s, TRAIN_LIMIT 210 s) and a
# failure is reported without stopping the next stage. What comes back is a few
# files under $OUT (default ./device-out): summary.txt, bench.log, train.log,
# gomlx.json, torch.json, train.jsonl. Knobs of the stages pass through (see their
# headers); BACKEND=cpu MODEL=tiny DTYPE=float32 TOKENIZER=bytes SKIP_TORCH=1 with
# small sizes is the dry run that the test suite does on a CPU.
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${OUT:-device-out}
work=$(mktemp -d)
mkdir -p "$out"
export MATHRL_BIN=${MATHRL_BIN:-.cache/device/mathrl}
export TOKENIZER=${TOKENIZER:-.cache/device/tokenizer.json}
if [ -z "${TINY_MODEL+x}" ] && [ -f .cache/device/tiny-qwen3-hf/reference.json ]; then
  export TINY_MODEL=.cache/device/tiny-qwen3-hf
fi
export PYTHONUNBUFFERED=1
: > "$out/summary.txt"
status=0

stage() { # name limit command...
  local name=$1 limit=$2 t0 rc
  shift 2
  echo "=== $name (limit ${limit} s)"
  t0=$(date +%s)
  timeout --kill-after=15 "$limit" "$@" > "$out/$name.log" 2>&1
  rc=$?
  cat "$out/$name.log"
  echo "$name: exit $rc after $(( $(date +%s) - t0 )) s" | tee -a "$out/summary.txt"
  [ "$rc" -eq 0 ] || status=1
}

{ nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null || echo "no nvidia-smi"; } |
  tee -a "$out/summary.txt"
stage bench "${BENCH_LIMIT:-270}" env OUT="$work/bench" bash scripts/device/bench_h200.sh
stage train "${TRAIN_LIMIT:-210}" env OUT="$work/train" bash scripts/device/train_h200.sh
for f in bench/gomlx.json bench/torch.json train/run/train.jsonl; do
  [ -f "$work/$f" ] && cp "$work/$f" "$out/"
done
rm -rf "$work"
cat "$out/summary.txt"
exit $status
