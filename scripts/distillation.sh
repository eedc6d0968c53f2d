#!/usr/bin/env bash
# The distillation study on the CPU demo (configs/demo.yaml), on XLA's CPU
# compiler. A larger tiny teacher is made and trained by GRPO; a smaller
# student is then trained from the demo's start three ways at equal rollouts
# and optimizer steps, seeds SEEDS (default 1 2 3):
#
#   1. the teacher's start: demo-base's warm start (configs/demo-base.yaml,
#      2000 supervised steps) on the 4-layer shape tiny-4l instead of tiny,
#      into runs/distillation-teacher-base (git ignores runs/);
#   2. the teacher: the demo from that start (30 rollouts of GRPO, seed 1),
#      run folder results/runs/distillation/teacher-seed1, its final policy
#      copied to runs/distillation-teacher;
#   3. the students, from configs/demo-base (the demo's own start), into
#      results/runs/distillation/ARM-seedN: grpo (the demo as it is), opd
#      (on-policy distillation from the teacher, --teacher, the rewards only
#      logged) and sft (--distill-mode sft: the teacher samples, the student
#      imitates its correct answers).
#
# Each run folder keeps config.json, provenance.json, train.jsonl, eval.jsonl
# and the final evaluation's samples; checkpoints, figures and recorded
# rollouts are removed. notebooks/distillation.ipynb reads the folders. Run
# scripts/setup.sh first (XLA's CPU plugin).
#
#   bash scripts/distillation.sh [OUT]   (about 40 minutes on a quiet 2-core machine; SEEDS="1" for one seed,
#                                         ARMS="opd" for one student arm, TEACHER=keep to reuse runs/distillation-teacher)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/toolchain.sh"
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root" # run folders are named relative to the repository, as config.json records them
out=${1:-results/runs/distillation}
bin=.cache/bin/mathrl-distillation # its own binary: another study may be running with .cache/bin/mathrl
teacher=runs/distillation-teacher
mkdir -p "$out" "$(dirname "$bin")" runs
bash scripts/build.sh "$bin"
export GOMLX_NO_AUTO_INSTALL=1

# finish DIR keeps a run folder's records and final samples, nothing else.
finish() {
  local dir=$1 final
  final=$(ls "$dir/samples" | sort | tail -1)
  mv "$dir/samples/$final" "$dir/final_samples.jsonl"
  rm -rf "$dir/ckpt" "$dir/figures" "$dir/samples" "$dir/rollouts"
}

# copyModel CKPT DIR copies a checkpoint's Hugging Face files into a fresh DIR.
copyModel() {
  rm -rf "$2"
  mkdir -p "$2"
  cp "$1/config.json" "$1/model.safetensors" "$1/tokenizer.json" "$2/"
}

if [ "${TEACHER:-}" != keep ]; then
  rm -rf runs/distillation-teacher-base
  "$bin" train --config demo-base --tiny-model tiny-4l --save runs/distillation-teacher-base > runs/distillation-teacher-base.log 2>&1
  copyModel runs/distillation-teacher-base/ckpt/step-000000 runs/distillation-teacher-start
  rm -rf "$out/teacher-seed1"
  "$bin" train --backend xla-cpu --hf-checkpoint runs/distillation-teacher-start --save "$out/teacher-seed1" > "$out/teacher-seed1.log" 2>&1
  copyModel "$(ls -d "$out"/teacher-seed1/ckpt/step-* | sort | tail -1)" "$teacher"
  finish "$out/teacher-seed1"
  rm -f "$out/teacher-seed1.log"
  echo "distillation: teacher done"
fi

declare -A flags=(
  [grpo]=""
  [opd]="--teacher $teacher"
  [sft]="--teacher $teacher --distill-mode sft"
)
for seed in ${SEEDS:-1 2 3}; do
  for arm in ${ARMS:-grpo opd sft}; do
    dir="$out/$arm-seed$seed"
    rm -rf "$dir"
    # shellcheck disable=SC2086 # the flags are words
    if ! "$bin" train --backend xla-cpu --seed "$seed" --save "$dir" ${flags[$arm]} > "$dir.log" 2>&1; then
      tail -20 "$dir.log"
      echo "distillation: $arm seed $seed failed (log: $dir.log)"
      exit 1
    fi
    finish "$dir"
    rm -f "$dir.log"
    echo "distillation: $arm seed $seed done"
  done
done
