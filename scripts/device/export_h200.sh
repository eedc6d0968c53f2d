#!/usr/bin/env bash
# Checks that transformers loads what mathrl writes (check_export.py): a tiny float32
# checkpoint from `mathrl model init` (its logits against `mathrl forward --backend cpu`)
# and the newest checkpoint of a training run, CKPT_ROOT/step-* (default
# train-out/run/ckpt, as train_h200.sh writes it). Usually run through check_h200.sh,
# as its own stage after the training run. Writes under $OUT (default ./export-out).
#
# Knobs: MATHRL_BIN, CKPT_ROOT, PYTHON (python3), SKIP_TORCH=1 (no transformers: only
# the tiny checkpoint is written and the newest checkpoint named; a dry run).
set -uo pipefail
cd "$(dirname "$0")/../.."
bin=${MATHRL_BIN:-.cache/device/mathrl}
out=${OUT:-export-out}
py=${PYTHON:-python3}
root=${CKPT_ROOT:-train-out/run/ckpt}
mkdir -p "$out"
rm -rf "$out/export-tiny"
timeout -k 5 10 "$bin" model init --config tiny --dtype f32 --seed 5 --out "$out/export-tiny" || {
  echo "FAILED: mathrl model init"
  exit 1
}
ckpt=$(ls -d "$root"/step-* 2>/dev/null | sort | tail -1)
if [ -z "$ckpt" ]; then
  echo "no checkpoint under $root: checking the tiny export only (and failing)"
fi
echo "== newest checkpoint: ${ckpt:-none}"
if [ -n "${SKIP_TORCH:-}" ]; then
  echo "SKIP_TORCH: transformers not run"
  [ -n "$ckpt" ]
  exit
fi
echo "== transformers loads what mathrl writes"
timeout -k 5 "${EXPORT_LIMIT:-35}" "$py" scripts/device/check_export.py "$bin" "$out/export-tiny" $ckpt || exit 1
[ -n "$ckpt" ]
