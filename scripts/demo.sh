#!/usr/bin/env bash
# Regenerates a committed demo run from scratch: removes DIR (default
# results/runs/demo), then runs the CPU demo (configs/demo.yaml) into it with any
# further `mathrl train` flags. `mathrl train` alone writes into runs/demo, which
# git ignores, so a newcomer's run never changes the committed one.
#
#   bash scripts/demo.sh                                          # results/runs/demo
#   bash scripts/demo.sh results/runs/demo-xla --backend xla-cpu  # the demo on XLA
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root" # the run folder is named relative to the repository, as config.json records it
dir=${1:-results/runs/demo}
shift $(($# > 0 ? 1 : 0))
bin=.cache/bin/mathrl
bash scripts/build.sh "$bin"
rm -rf "$dir"
"$bin" train --save "$dir" "$@"
