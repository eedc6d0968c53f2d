#!/usr/bin/env bash
# The bench table of docs/backends.md: every row of `mathrl bench --baseline torch
# --roofline` on qwen3-0.6b-4l (train 8 x 256 and 2 x 128, prefill and decode at
# batch 16 and 64), each repeated REPEATS times (default 3), one after another in
# one run. Each `mathrl bench` call measures its own roofline (copy bandwidth, f32
# and bf16 matmul peaks on xla-cpu and torch) before its row. Writes every raw
# result to OUT/raw.jsonl and the table (median ratio, its spread, the roofline
# fraction of each side) to OUT/table.md; OUT defaults to results/bench/DATE.
# Each repeat also times the model's matrix products alone (`--what products`,
# at the shapes of each train row and of each decode row), written to
# OUT/products.jsonl, and table.md adds their share of each step.
#
#   bash scripts/bench-table.sh               # about 50 minutes on 2 cores
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
products="$out/products.jsonl"
: > "$raw.tmp"
: > "$products.tmp"

common=(--config "$config" --backend xla-cpu --baseline torch --roofline --dtype "$dtype" --json)
# name|flags
rows=(
  "train 8 x 256|--what train --batch 8 --len 256 --steps 2"
  "train 2 x 128|--what train --batch 2 --len 128 --steps 3"
  "decode batch 16 (64-token prompts + 32 new)|--what decode --decode-batch 16 --prompt-len 64 --new-tokens 32 --whole-cache=false"
  "decode batch 64 (64-token prompts + 32 new)|--what decode --decode-batch 64 --prompt-len 64 --new-tokens 32 --whole-cache=false"
)
# train row|decode row|flags: the products at the shapes of those two rows
product_rows=(
  "${rows[0]%%|*}|${rows[2]%%|*}|--batch 8 --len 256 --decode-batch 16 --prompt-len 64"
  "${rows[0]%%|*}|${rows[3]%%|*}|--batch 8 --len 256 --decode-batch 64 --prompt-len 64"
  "${rows[1]%%|*}|${rows[2]%%|*}|--batch 2 --len 128 --decode-batch 16 --prompt-len 64"
)
for ((r = 1; r <= repeats; r++)); do
  for row in "${product_rows[@]}"; do
    IFS='|' read -r train_row decode_row flags <<< "$row"
    read -r -a flags <<< "$flags"
    echo "bench-table: run $r/$repeats: products of $train_row and $decode_row" >&2
    line=$("$bin" bench "${common[@]}" --what products "${flags[@]}" 2> >(tail -3 >&2))
    python3 -c 'import json,sys; d=json.loads(sys.argv[1]); d.update(train_row=sys.argv[2], decode_row=sys.argv[3], run=int(sys.argv[4])); print(json.dumps(d))' \
      "$line" "$train_row" "$decode_row" "$r" >> "$products.tmp"
  done
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
mv "$products.tmp" "$products"
python3 scripts/bench/table.py "$raw" "$products" > "$out/table.md.tmp"
mv "$out/table.md.tmp" "$out/table.md"
cat "$out/table.md"
