#!/usr/bin/env bash
# The objectives study on the CPU demo (configs/demo.yaml), on XLA's CPU
# compiler: four arms from the same start (configs/demo-base), data, seed and
# budget, GRPO (the demo as it is), FlowRL with VarGrad's log Z, FlowRL with
# its learned log Z head, and GRPO's loss with implicit process rewards
# (PRIME), seeds SEEDS (default 1 2 3), run with `mathrl train` into
# results/runs/objectives/ARM-seedN. Each run folder keeps config.json,
# provenance.json, train.jsonl, eval.jsonl, the final evaluation's samples and
# diversity_samples.jsonl (the final policy's 16 answers to each evaluation
# problem, `mathrl eval`); checkpoints and figures are removed. notebooks/objectives.ipynb reads the
# folders. Run scripts/setup.sh first (XLA's CPU plugin).
#
#   bash scripts/objectives.sh [OUT]   (JOBS=1 run at a time, each on both cores: about 4 minutes a run
#                                       on a quiet 2-core machine; SEEDS="3" runs only seed 3,
#                                       ARMS="prime" only that arm)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/toolchain.sh"
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root" # run folders are named relative to the repository, as config.json records them
out=${1:-results/runs/objectives}
jobs=${JOBS:-1}
bin=.cache/bin/mathrl
mkdir -p "$out" "$(dirname "$bin")"
bash scripts/build.sh "$bin"
export GOMLX_NO_AUTO_INSTALL=1

declare -A flags=(
  [grpo]=""
  [flowrl]="--advantage-estimator flowrl"
  [flowrl-head]="--advantage-estimator flowrl --flowrl-log-z head"
  [prime]="--process-reward implicit"
)

run() {
  local arm=$1 seed=$2 dir="$out/$1-seed$2"
  rm -rf "$dir"
  # shellcheck disable=SC2086 # the flags are words
  if ! "$bin" train --backend xla-cpu --seed "$seed" --save "$dir" ${flags[$arm]} > "$dir.log" 2>&1; then
    tail -20 "$dir.log"
    echo "objectives: $arm seed $seed failed (log: $dir.log)"
    return 1
  fi
  # the final policy again, 16 answers per evaluation problem: the diversity of its solutions
  local ckpt
  ckpt=$(ls -d "$dir"/ckpt/step-* | sort | tail -1)
  if ! "$bin" eval --backend xla-cpu --model "$ckpt" --data arith --max-prompts 64 --samples 16 --max-tokens 160 --max-turns 2 \
    --scorer math --tools --out "$dir/diversity_samples.jsonl" >> "$dir.log" 2>&1; then
    tail -20 "$dir.log"
    echo "objectives: $arm seed $seed: the diversity evaluation failed (log: $dir.log)"
    return 1
  fi
  local final
  final=$(ls "$dir/samples" | sort | tail -1)
  mv "$dir/samples/$final" "$dir/final_samples.jsonl"
  rm -rf "$dir/ckpt" "$dir/figures" "$dir/samples" "$dir/rollouts" "$dir.log"
  echo "objectives: $arm seed $seed done"
}

for seed in ${SEEDS:-1 2 3}; do
  for arm in ${ARMS:-grpo flowrl flowrl-head prime}; do
    while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n; done
    run "$arm" "$seed" &
  done
done
wait
