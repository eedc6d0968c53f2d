#!/usr/bin/env bash
# Regenerates committed demo runs from scratch. With DIR (default
# results/runs/demo) it removes DIR, then runs the CPU demo (configs/demo.yaml)
# into it with any further `mathrl train` flags. With --all it regenerates the
# six committed runs, seeds 1-3 on the Go backend and on xla-cpu (run
# scripts/setup.sh first), with one binary built before any run folder is
# touched, so that every run's provenance names the clean commit. `mathrl train`
# alone writes into runs/demo, which git ignores, so a newcomer's run never
# changes the committed one.
#
#   bash scripts/demo.sh                                          # results/runs/demo
#   bash scripts/demo.sh results/runs/demo-xla --backend xla-cpu  # the demo on XLA
#   bash scripts/demo.sh --all                                    # all six, about 30 minutes
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/toolchain.sh"
# The committed Go-backend runs multiply with GoMLX's AVX2 kernels, which a CPU
# with AVX-512 has too, so they repeat bit for bit on both (docs/demo.md).
export GOMLX_GO_SIMD_AVX512=${GOMLX_GO_SIMD_AVX512-false}
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root" # the run folder is named relative to the repository, as config.json records it
bin=.cache/bin/mathrl
bash scripts/build.sh "$bin"

# demo DIR [FLAGS...] runs the demo into a fresh DIR.
demo() {
  local dir=$1
  shift
  rm -rf "$dir"
  "$bin" train --save "$dir" "$@"
}

if [ "${1:-}" != --all ]; then
  dir=${1:-results/runs/demo}
  shift $(($# > 0 ? 1 : 0))
  demo "$dir" "$@"
  exit
fi
for backend in go xla; do
  for seed in 1 2 3; do
    dir=results/runs/demo
    flags=()
    if [ "$backend" = xla ]; then dir=$dir-xla flags=(--backend xla-cpu); fi
    if [ "$seed" != 1 ]; then dir=$dir-seed$seed flags+=(--seed "$seed"); fi
    demo "$dir" "${flags[@]}"
  done
done
