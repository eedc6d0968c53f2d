#!/usr/bin/env bash
# The bench table of docs/backends.md: every row of `mathrl bench --baseline torch
# --roofline` on qwen3-0.6b-4l (train 8 x 256 and 2 x 128, prefill and decode at
# batch 16 and 64), each repeated REPEATS times (default 3), one after another in
# one run. Each `mathrl bench` call measures its own roofline (copy bandwidth, f32
# and bf16 matmul peaks on xla-cpu and torch) before its row. Writes every raw
# result to OUT/raw.jsonl and the table (median ratio, its spread, the roofline
# fraction of each side) to OUT/table.md; OUT defaults to results/bench/DATE.
#
#   bash scripts/bench-table.sh               # about 25 minutes on 2 cores
#   REPEATS=1 DTYPE=bf16 bash scripts/bench-table.sh
#   CONFIG=tiny REPEATS=1 OUT=/tmp/t bash scripts/bench-table.sh   # a quick check of the script
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/toolchain.sh"
cd "$(dirname "$0")/.."
repeats=${REPEATS:-3}
dtype=${DTYPE:-f32}
config=${CONFIG:-qwen3-0.6b-4l}
out=${OUT:-results/bench/$(date -u +%Y-%m-%d)}
bin=${MATHRL_BIN:-.cache/bin/mathrl}
export GOMLX_NO_AUTO_INSTALL=1
[ -x "$bin" ] || bash scripts/build.sh "$bin"
mkdir -p "$out"
raw="$out/raw.jsonl"
: > "$raw.tmp"

common=(--config "$config" --backend xla-cpu --baseline torch --roofline --dtype "$dtype" --json)
# name|flags
rows=(
  "train 8 x 256|--what train --batch 8 --len 256 --steps 2"
  "train 2 x 128|--what train --batch 2 --len 128 --steps 3"
  "decode batch 16 (64-token prompts + 32 new)|--what decode --decode-batch 16 --prompt-len 64 --new-tokens 32 --whole-cache=false"
  "decode batch 64 (64-token prompts + 32 new)|--what decode --decode-batch 64 --prompt-len 64 --new-tokens 32 --whole-cache=false"
)
for ((r = 1; r <= repeats; r++)); do
  for row in "${rows[@]}"; do
    name=${row%%|*}
    read -r -a flags <<< "${row#*|}"
    echo "bench-table: run $r/$repeats: $name" >&2
    line=$("$bin" bench "${common[@]}" "${flags[@]}" 2> >(tail -3 >&2))
    python3 -c 'import json,sys; d=json.loads(sys.argv[1]); d["row"]=sys.argv[2]; d["run"]=int(sys.argv[3]); print(json.dumps(d))' \
      "$line" "$name" "$r" >> "$raw.tmp"
  done
done
mv "$raw.tmp" "$raw"
python3 scripts/bench/table.py "$raw" > "$out/table.md.tmp"
mv "$out/table.md.tmp" "$out/table.md"
cat "$out/table.md"
