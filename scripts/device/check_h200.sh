#!/usr/bin/env bash
# Every GPU check in one command, for a machine lent for minutes (one command of at
# most 600 s). Run scripts/device/prepare.sh first, where Go is, and bring
# .cache/device along. Stages, each under a time limit, each command inside a stage
# under a shorter one (so an overrun cannot cost another stage its results):
#
#   preflight  the binary exists, is executable and runs (--help); python and CUDA toolchain
#   probe      PROBE_LIMIT 75 s: `mathrl doctor`, then the first compile on the backend,
#              `mathrl forward` of tiny-qwen3-hf (.cache/device/tiny-qwen3-hf, else a
#              `model init --config tiny`) in float32, checked against transformers'
#              logits computed on the machine's CPU (1e-4) when the folder is there, and in
#              bf16 (reported apart, 5e-2).
#              If the backend cannot open or that compile fails, the check stops here and
#              writes the error and the environment into summary.txt.
#   gotests    GOTESTS_LIMIT 50 s: the Go tests device_tests.txt names, from the test
#              binaries prepare.sh built (.cache/device/tests, else DEVICE_TESTS), with
#              MATHRL_TEST_BACKEND=$BACKEND: bfloat16 masters at lr 1e-6 against float32,
#              and a shared prefill bit for bit against one prefill a row
#   bench      BENCH_LIMIT 240 s: bench_h200.sh, GoMLX vs PyTorch + transformers speed, and
#              GoMLX's training step with fused and with decomposed attention
#   train      TRAIN_LIMIT 175 s: train_h200.sh, a few GRPO steps with real tool calls
#   export     EXPORT_STAGE_LIMIT 40 s: export_h200.sh, transformers loads the newest checkpoint
#
# STAGES (default "gotests bench train export") picks the stages after the probe, for a
# rerun that needs fewer.
#
# 580 s in all (each command inside a stage has a shorter limit than its stage: an inner
# `timeout` runs in its own process group, which the stage's limit would not reach).
# What comes back, under $OUT (default ./device-out), at most 8 files, copied after
# each stage so a later overrun keeps them: summary.txt, logs.tar.gz
# (every log and text report), gomlx.json, torch.json, train.jsonl, eval.jsonl,
# provenance.json and the training figure (training_run.png).
#
# prepare.sh xz-compresses the binaries and the tokenizer; the preflight unpacks every
# .cache/device/**.xz next to itself (with python's lzma: the machine may have no xz).
#
# Python: /opt/torch/.venv/bin/python3 when it exists (put first on PATH, so mathrl
# finds the PJRT plugin in its site-packages), else python3. When that python's
# site-packages has no ptxas or libdevice, /usr/local/cuda's are used. Knobs of the
# stages pass through (see their headers); BACKEND=cpu MODEL=tiny DTYPE=float32
# TOKENIZER=bytes SKIP_TORCH=1 with small sizes is the dry run the test suite does on a CPU.
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${OUT:-device-out}
work=$(mktemp -d)
mkdir -p "$out" "$work/logs"
export MATHRL_BIN=${MATHRL_BIN:-.cache/device/mathrl}
export TOKENIZER=${TOKENIZER:-.cache/device/tokenizer.json}
if [ -z "${TINY_MODEL+x}" ] && [ -f .cache/device/tiny-qwen3-hf/reference.json ]; then
  export TINY_MODEL=.cache/device/tiny-qwen3-hf
fi
backend=${BACKEND:-cuda}
export PYTHONUNBUFFERED=1
summary=$out/summary.txt
: > "$summary"
status=0
note() { echo "$*" | tee -a "$summary"; }

pack() { # the logs, as one file (the device tool returns few files)
  tar -czf "$out/logs.tar.gz.tmp" -C "$work" logs 2>/dev/null && mv "$out/logs.tar.gz.tmp" "$out/logs.tar.gz"
}
keep() { # copies what the stages made so far into $out
  local f png
  for f in bench/gomlx.json bench/torch.json train/run/train.jsonl train/run/eval.jsonl train/run/provenance.json; do
    [ -s "$work/$f" ] && cp "$work/$f" "$out/"
  done
  png=$(ls "$work"/train/run/figures/*.png 2>/dev/null | head -1)
  [ -n "$png" ] && cp "$png" "$out/"
  for f in bench/doctor.txt bench/ratios.txt bench/gomlx_decomposed.json bench/parity_out.jsonl train/split.txt; do
    [ -f "$work/$f" ] && cp "$work/$f" "$work/logs/${f//\//_}"
  done
  pack
}
environment() { # what a fixed rerun needs to know
  local sp
  echo "--- environment"
  nvidia-smi 2>&1 || echo "no nvidia-smi"
  echo "python: $py ($("$py" --version 2>&1))"
  echo "MATHRL_PJRT_PLUGIN=${MATHRL_PJRT_PLUGIN:-}"
  echo "LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-}"
  echo "XLA_FLAGS=${XLA_FLAGS:-}"
  echo "PATH=$PATH"
  echo "ptxas: $(command -v ptxas || echo none)"
  for sp in $sites; do
    echo "plugin found: $(ls "$sp"/jax_plugins/xla_cuda*/xla_cuda_plugin.so 2>/dev/null || echo "none under $sp")"
    ls -l "$sp"/jax_plugins/xla_cuda* 2>&1
    ls -d "$sp"/nvidia/*/lib "$sp"/nvidia/*/bin "$sp"/nvidia/*/nvvm/libdevice 2>&1
  done
  echo "--- mathrl doctor"
  cat "$work/logs/doctor.txt" 2>/dev/null
}
stage() { # name limit command...: runs a stage, logs it, notes the outcome
  local name=$1 limit=$2 t0 rc
  shift 2
  echo "=== $name (limit ${limit} s)"
  t0=$(date +%s)
  local watch=""
  if command -v nvidia-smi > /dev/null; then # the device's memory in use, twice a second, while the stage runs
    nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits -lms 500 > "$work/logs/$name.memory" 2>/dev/null &
    watch=$!
  fi
  timeout --kill-after=10 "$limit" "$@" > "$work/logs/$name.log" 2>&1
  rc=$?
  [ -n "$watch" ] && kill "$watch" 2>/dev/null
  cat "$work/logs/$name.log"
  note "$name: exit $rc after $(( $(date +%s) - t0 )) s$([ "$rc" -eq 124 ] && echo " (over its limit)")"
  if [ -s "$work/logs/$name.memory" ]; then
    note "  device memory peak (nvidia-smi, 0.5 s samples): $(sort -n "$work/logs/$name.memory" | tail -1) MiB"
  fi
  grep -E "^== parity|FAILED|PASS|FAIL|moved|against float32|max error|split after|rollout/trainer|mathrl decode|train MFU|prefill MFU|decode MBU|newest checkpoint|loaded it|^(train|decode|prefill) " \
    "$work/logs/$name.log" | sed 's/^/  /' >> "$summary"
  if [ "$rc" -ne 0 ]; then
    status=1
    echo "  --- last lines of $name.log" >> "$summary"
    tail -n 20 "$work/logs/$name.log" | sed 's/^/  /' >> "$summary"
  fi
  keep
  return $rc
}
stop() { # fail fast: the rest of the window goes to a fixed rerun
  note "STOPPED: $*"
  environment >> "$summary" 2>&1
  keep
  rm -rf "$work"
  cat "$summary"
  exit 1
}

# --- preflight: interpreter, CUDA toolchain, the carried binary
if [ -x /opt/torch/.venv/bin/python3 ]; then
  export PATH=/opt/torch/.venv/bin:$PATH
fi
py=$(command -v python3 || echo python3)
export PYTHON=$py
sites=$("$py" -c 'import site; print(" ".join(site.getsitepackages()))' 2>/dev/null)
if [ "$backend" = cuda ]; then
  have_ptxas= have_libdevice=
  for sp in $sites; do
    ls "$sp"/nvidia/cu13/bin/ptxas "$sp"/nvidia/cuda_nvcc/bin/ptxas > /dev/null 2>&1 && have_ptxas=1
    ls "$sp"/nvidia/*/nvvm/libdevice/libdevice.10.bc > /dev/null 2>&1 && have_libdevice=1
  done
  if [ -z "$have_ptxas" ] && [ -x /usr/local/cuda/bin/ptxas ]; then
    export PATH=$PATH:/usr/local/cuda/bin
    note "toolchain: no ptxas in $py's site-packages; using /usr/local/cuda/bin/ptxas"
  fi
  if [ -z "$have_libdevice" ] && [ -d /usr/local/cuda/nvvm/libdevice ]; then
    export XLA_FLAGS="${XLA_FLAGS:+$XLA_FLAGS }--xla_gpu_cuda_data_dir=/usr/local/cuda"
    note "toolchain: no libdevice in $py's site-packages; using /usr/local/cuda"
  fi
fi
{ nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null || echo "no nvidia-smi"; } |
  tee -a "$summary"
note "python: $py ($("$py" --version 2>&1)); binary: $MATHRL_BIN; backend: $backend"
unpack() { # the files prepare.sh compressed, each next to itself
  local f
  for f in .cache/device/*.xz .cache/device/tests/*.xz; do
    [ -f "$f" ] || continue
    "$py" -c 'import lzma, os, shutil, sys
src = sys.argv[1]; dst = src[:-3]; tmp = dst + ".tmp"
with lzma.open(src) as r, open(tmp, "wb") as w: shutil.copyfileobj(r, w)
os.chmod(tmp, 0o755); os.replace(tmp, dst)' "$f" || return 1
  done
}
unpack || stop "preflight: could not unpack .cache/device's .xz files"
[ -f "$MATHRL_BIN" ] || stop "preflight: no binary at $MATHRL_BIN (run scripts/device/prepare.sh and bring .cache/device)"
[ -x "$MATHRL_BIN" ] || stop "preflight: $MATHRL_BIN is not executable"
timeout -k 2 5 "$MATHRL_BIN" --help > "$work/logs/help.log" 2>&1 ||
  stop "preflight: $MATHRL_BIN --help failed: $(tail -n 5 "$work/logs/help.log")"

# --- probe: the backend opens and the first compile succeeds, or stop here
probe() {
  local model=${TINY_MODEL:-} ok=0
  timeout -k 5 15 "$MATHRL_BIN" doctor 2>&1 | tee "$work/logs/doctor.txt"
  if [ -z "$model" ]; then
    model=$work/probe-tiny
    timeout -k 5 10 "$MATHRL_BIN" model init --config tiny --dtype f32 --seed 1 --out "$model" || return 2
    echo '{"input_ids": [1, 2, 3, 4, 5]}' > "$work/probe_in.jsonl"
  else
    "$py" scripts/device/bench_torch.py --parity-prompt "$model/reference.json" > "$work/probe_in.jsonl" || return 2
  fi
  # float32 parity: cuBLAS in full float32 (no TF32), and no Triton GEMMs (which may
  # pick TF32 or other reduced-precision tilings for f32 dots).
  echo "== first compile on $backend: mathrl forward, float32 (XLA_FLAGS += --xla_gpu_enable_triton_gemm=false, NVIDIA_TF32_OVERRIDE=0)"
  local f32flags=${XLA_FLAGS:-}
  [ "$backend" = cuda ] && f32flags="${f32flags:+$f32flags }--xla_gpu_enable_triton_gemm=false"
  XLA_FLAGS=$f32flags NVIDIA_TF32_OVERRIDE=0 timeout -k 5 45 "$MATHRL_BIN" forward --backend "$backend" --model "$model" \
    --in "$work/probe_in.jsonl" --out "$work/logs/parity_f32.jsonl" || return 3
  if [ -n "${TINY_MODEL:-}" ]; then
    echo "== parity float32, tolerance 1e-4"
    "$py" scripts/device/bench_torch.py --parity-check "$model" "$work/logs/parity_f32.jsonl" || ok=1
    echo "== parity bf16 (reported apart; bf16 has an 8-bit mantissa), tolerance 5e-2"
    if timeout -k 5 20 "$MATHRL_BIN" forward --backend "$backend" --model "$model" --dtype bf16 \
      --in "$work/probe_in.jsonl" --out "$work/logs/parity_bf16.jsonl"; then
      "$py" scripts/device/bench_torch.py --parity-check "$model" "$work/logs/parity_bf16.jsonl" --tol 5e-2 ||
        echo "bf16 parity: outside 5e-2 (not counted as a failure)"
    else
      echo "bf16 parity: mathrl forward --dtype bf16 FAILED (not counted as a failure)"
    fi
  fi
  return $ok
}
export -f probe
export work backend py
stage probe "${PROBE_LIMIT:-75}" bash -c probe
case $? in
  0) ;;
  1) note "probe: the backend compiles and runs, but float32 parity failed; going on" ;;
  *) stop "probe: the backend did not open or the first compile failed (see the lines above)" ;;
esac

# --- the rest: a failure is noted and the next stage still runs
wants() { [[ " ${STAGES:-gotests bench train export} " == *" $1 "* ]]; }
gotests() { # the Go tests device_tests.txt names, each in its package's folder
  local dir models= pkg pattern bin rc=0
  dir=$(realpath -m "${DEVICE_TESTS:-.cache/device/tests}")
  [ -n "${TINY_MODEL:-}" ] && models=$(realpath "$TINY_MODEL/..") # the folder MATHRL_TEST_MODELS names
  while read -r pkg pattern; do
    case $pkg in '' | '#'*) continue ;; esac
    bin=$dir/$(basename "$pkg").test
    if [ ! -x "$bin" ]; then
      echo "FAILED: no test binary $bin (scripts/device/prepare.sh builds it)"
      rc=1
      continue
    fi
    echo "== go test ./$pkg -run '$pattern' on $backend"
    (cd "$pkg" && MATHRL_TEST_BACKEND=$backend MATHRL_TEST_MODELS=$models \
      timeout -k 5 "${GOTEST_LIMIT:-40}" "$bin" -test.v -test.count=1 -test.run "$pattern") || { echo "FAILED: ./$pkg"; rc=1; }
  done < scripts/device/device_tests.txt
  return $rc
}
export -f gotests
wants gotests && stage gotests "${GOTESTS_LIMIT:-50}" bash -c gotests
wants bench && stage bench "${BENCH_LIMIT:-240}" env OUT="$work/bench" TINY_MODEL= bash scripts/device/bench_h200.sh
wants train && stage train "${TRAIN_LIMIT:-175}" env OUT="$work/train" bash scripts/device/train_h200.sh
wants export && stage export "${EXPORT_STAGE_LIMIT:-40}" env OUT="$work/export" CKPT_ROOT="$work/train/run/ckpt" bash scripts/device/export_h200.sh
note "files in $out: $(cd "$out" && ls | tr '\n' ' ')"
rm -rf "$work"
cat "$summary"
exit $status
