#!/usr/bin/env bash
# A few GRPO steps with the code_interpreter tool on one H200, for a Qwen3-0.6B-shaped
# random model (28 layers, d=1024, 16 q / 8 kv heads, head 128, ffn 3072, vocab 151,936,
# tied, bf16): the retool recipe (configs/retool-grpo-qwen3-4b.yaml) with the model
# swapped and the sizes cut to fit a few minutes. Prints, per optimizer step, the time
# split (rollout / tools / scoring / train) and the MFU of the train step and of
# sampling; writes the run folder under $OUT (default ./train-out). Evaluation runs
# at the rollout batch (--sampling-batch-size = prompts x group), so it reuses the
# rollouts' sampler shapes. That transformers loads what mathrl writes is checked
# apart, on the newest checkpoint (export_h200.sh).
#
# The GPU machine needs no Go: build the binary and gather the real Qwen3
# tokenizer.json beforehand (scripts/device/prepare.sh) and bring them along. It
# needs a python3 with JAX's CUDA plugin wheel (jax-cuda13-pjrt or jax-cuda12-pjrt)
# and the nvidia-* wheels; mathrl finds them (see `mathrl doctor`). Nothing is
# downloaded. The prompts are generated arithmetic (prompt_data arith), so no dataset is
# needed; a random model rarely calls the tool, so the warm start (3 steps on traces
# that call it) is what exercises the sandbox here. Usually run through check_h200.sh.
#
# Knobs: ROLLOUTS (3), PROMPTS (8), GROUP (8), RESPONSE (256 tokens), MICRO (16), SFT_BATCH (8),
# PEAK_TFLOPS (989, H200 dense bf16), MATHRL_BIN, TOKENIZER, BACKEND (cuda), MODEL
# (qwen3-0.6b), DTYPE (bfloat16), RUN_LIMIT (150 s: time limit of `mathrl train`; what it
# wrote by then stays), PYTHON (python3). A dry run, e.g. on a CPU: MODEL=tiny TOKENIZER=bytes.
set -uo pipefail
cd "$(dirname "$0")/../.."
bin=${MATHRL_BIN:-.cache/device/mathrl}
tok=${TOKENIZER:-.cache/device/tokenizer.json}
out=${OUT:-train-out}
rollouts=${ROLLOUTS:-3} prompts=${PROMPTS:-8} group=${GROUP:-8} response=${RESPONSE:-256} micro=${MICRO:-16}
sft_batch=${SFT_BATCH:-8}
py=${PYTHON:-python3} run_limit=${RUN_LIMIT:-150}
peak=${PEAK_TFLOPS:-989} backend=${BACKEND:-cuda} model=${MODEL:-qwen3-0.6b} dtype=${DTYPE:-bfloat16}
mkdir -p "$out"
rm -rf "$out/run"
rc=0

echo "== mathrl train: retool recipe, $model shapes, $rollouts rollouts of $prompts x $group, $response-token responses"
start=$(date +%s)
timeout -k 10 "$run_limit" "$bin" train --config retool-grpo-qwen3-4b --backend "$backend" --tiny-model "$model" --dtype "$dtype" \
  --tokenizer "$tok" --prompt-data arith --eval-prompt-data arith --eval-max-prompts 8 --n-samples-per-eval-prompt 1 \
  --eval-max-response-len "$response" --eval-interval 0 \
  --num-rollout "$rollouts" --rollout-batch-size "$prompts" --n-samples-per-prompt "$group" \
  --global-batch-size $((prompts * group / 2)) --micro-batch-size "$micro" \
  --rollout-max-response-len "$response" --sft-steps 3 --sft-batch-size "$sft_batch" --sft-lr 1e-5 \
  --sampling-batch-size $((prompts * group)) \
  --tool-concurrency 8 --get-mismatch-metrics \
  --save "$out/run" --save-interval 0 --keep-ckpts 1 2>&1 | tee "$out/train.log" || rc=$?
[ "$rc" -eq 0 ] || echo "FAILED: mathrl train exit $rc (124: over RUN_LIMIT $run_limit s)"
echo "wall time: $(( $(date +%s) - start )) s (first calls of each shape include XLA compilation)"

echo "== time split and MFU per optimizer step"
timeout -k 5 20 "$py" - "$out/run/train.jsonl" "$peak" <<'PY' | tee "$out/split.txt" || rc=1
import json, sys
path, peak = sys.argv[1], float(sys.argv[2]) * 1e12
rows = [json.loads(l) for l in open(path)]
if not rows:
    sys.exit("no optimizer step finished: train.jsonl is empty")
print(f"{'step':>4} {'rollout s':>9} {'tools s':>8} {'score s':>8} {'train s':>8} {'train tok/s':>11} {'train MFU':>9} {'gen tok/s':>9} {'gen MFU':>8}")
for r in rows:
    x = r.get("extra", {})
    tr, ro = r["train_seconds"], r["rollout_seconds"]
    print(f"{r['step']:>4} {ro:9.2f} {r['tool_seconds']:8.2f} {r['score_seconds']:8.3f} {tr:8.2f} "
          f"{x.get('train_tokens', 0) / max(tr, 1e-9):11.0f} {x.get('train_flops', 0) / max(tr, 1e-9) / peak:9.1%} "
          f"{r['tokens_per_second']:9.0f} {x.get('rollout_flops', 0) / max(ro, 1e-9) / peak:8.2%}")
late = rows[1:] or rows  # the first step carries the compilation
tot = {k: sum(r[k] for r in late) for k in ("rollout_seconds", "tool_seconds", "score_seconds", "train_seconds")}
all_s = sum(tot.values())
print("split after the first step: " + ", ".join(f"{k.split('_')[0]} {v / all_s:.0%}" for k, v in tot.items()))
diffs = [(r["extra"].get("train_rollout_logprob_abs_diff"), r["extra"].get("train_rollout_logprob_abs_diff_max")) for r in rows]
print("rollout/trainer |log-prob difference| per step (mean, max): " + ", ".join(f"{m:.2e}/{x:.2e}" for m, x in diffs if m is not None))
PY
exit $rc
