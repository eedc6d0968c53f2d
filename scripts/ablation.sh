#!/usr/bin/env bash
# The policy-gradient ablation on the CPU demo (configs/demo.yaml): four arms,
# GRPO, Dr.GRPO, GSPO and GRPO with dynamic sampling that fills the batch,
# seeds SEEDS (default 1 2 3), run with `mathrl train` into results/runs/ablation/ARM-seedN.
# Each run folder keeps config.json, provenance.json, train.jsonl, eval.jsonl and
# the final evaluation's samples; checkpoints and figures are removed.
# notebooks/ablations.ipynb reads the folders.
#
#   bash scripts/ablation.sh [OUT]     (JOBS=2 runs at a time; all 12 took 17 minutes on 2 cores;
#                                       SEEDS="3" runs only seed 3)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/toolchain.sh"
# The committed Go-backend runs multiply with GoMLX's AVX2 kernels, which a CPU
# with AVX-512 has too, so they repeat bit for bit on both (docs/demo.md).
export GOMLX_GO_SIMD_AVX512=${GOMLX_GO_SIMD_AVX512-false}
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root" # run folders are named relative to the repository, as config.json records them
out=${1:-results/runs/ablation}
jobs=${JOBS:-2}
bin=.cache/bin/mathrl
mkdir -p "$out" "$(dirname "$bin")"
bash scripts/build.sh "$bin"

declare -A flags=(
  [grpo]=""
  [drgrpo]="--disable-grpo-std-normalization"
  [gspo]="--advantage-estimator gspo"
  [dynamic]="--dynamic-sampling --dynamic-sampling-max-draws 4"
)

run() {
  local arm=$1 seed=$2 dir="$out/$1-seed$2"
  rm -rf "$dir"
  # shellcheck disable=SC2086 # the flags are words
  "$bin" train --seed "$seed" --save "$dir" ${flags[$arm]} > "$dir.log" 2>&1
  local final
  final=$(ls "$dir/samples" | sort | tail -1)
  mv "$dir/samples/$final" "$dir/final_samples.jsonl"
  rm -rf "$dir/ckpt" "$dir/figures" "$dir/samples" "$dir.log"
  echo "ablation: $arm seed $seed done"
}

for seed in ${SEEDS:-1 2 3}; do
  for arm in grpo drgrpo gspo dynamic; do
    while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n; done
    run "$arm" "$seed" &
  done
done
wait
