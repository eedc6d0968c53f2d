#!/usr/bin/env bash
# Times two mathrl binaries side by side on the CPU backend: `mathrl bench` at the
# CPU demo's shapes (its warm-start step, its GRPO micro-batch, its rollout decoding)
# and at tiny-4l's, alternating the binaries ROUNDS times, and prints a Markdown table
# of the median of each and the ratio OLD/NEW. Build OLD from another commit first,
# for example:
#
#   git worktree add /tmp/old OLD_COMMIT && (cd /tmp/old && go build -o /tmp/mathrl-old ./cmd/mathrl)
#   bash scripts/build.sh /tmp/mathrl-new
#   bash scripts/bench-compare.sh /tmp/mathrl-old /tmp/mathrl-new 5
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/toolchain.sh"
old=${1:?usage: bench-compare.sh OLD_BIN NEW_BIN [ROUNDS]}
new=${2:?usage: bench-compare.sh OLD_BIN NEW_BIN [ROUNDS]}
rounds=${3:-5}
export GOMLX_NO_AUTO_INSTALL=1

# name|bench flags|JSON field
cases=(
  "demo warm-start step (tiny, 4 x 200 tokens), ms|--config tiny --what train --batch 4 --len 200 --steps 3|train_step_ms"
  "demo GRPO micro-batch (tiny, 32 x 256 tokens), ms|--config tiny --what train --batch 32 --len 256 --steps 2|train_step_ms"
  "demo rollout decode (tiny, 64 prompts of 96 + 160 new), ms/step|--config tiny --what decode --batch 64 --len 96 --new-tokens 160|decode_step_ms"
  "tiny-4l train step (16 x 256 tokens), ms|--config tiny-4l --what train --batch 16 --len 256 --steps 2|train_step_ms"
  "tiny-4l decode (16 prompts of 256 + 700 new), ms/step|--config tiny-4l --what decode --batch 16 --len 256 --new-tokens 700|decode_step_ms"
)

field() { python3 -c 'import json,sys; print(json.loads(sys.stdin.read().strip().splitlines()[-1])[sys.argv[1]])' "$1"; }
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }

echo "| shape | $(basename "$old") | $(basename "$new") | ratio |"
echo "|---|---|---|---|"
for c in "${cases[@]}"; do
  IFS='|' read -r name flags key <<< "$c"
  o=() n=()
  for _ in $(seq "$rounds"); do
    # shellcheck disable=SC2086
    o+=("$("$old" bench --backend cpu $flags --json 2>/dev/null | field "$key")")
    # shellcheck disable=SC2086
    n+=("$("$new" bench --backend cpu $flags --json 2>/dev/null | field "$key")")
  done
  mo=$(median "${o[@]}") mn=$(median "${n[@]}")
  printf '| %s | %.1f | %.1f | %.2fx |\n' "$name" "$mo" "$mn" "$(echo "$mo / $mn" | bc -l)"
done
