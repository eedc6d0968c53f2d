#!/usr/bin/env bash
# The whole test suite, from a fresh clone: installs the references the tests
# compare against and XLA's CPU plugin (scripts/setup.sh), pulls the datasets
# (checksummed), then runs gofmt, go vet and every Go test on GoMLX's pure Go
# backend (built with GOEXPERIMENT=simd, scripts/toolchain.sh; the matrix
# products, model and memory plan again on the portable kernels, and on AVX2
# where the CPU has AVX-512), every graph test again on XLA's CPU compiler (MATHRL_TEST_BACKEND=
# xla-cpu), the GPU check scripts on the CPU with tiny sizes (a dry run on each
# backend), and the notebooks. With MATHRL_VLLM=1, setup.sh also installs vLLM for the CPU (5.6 GB, opt-in) and
# the two tests that sample through it run (and fail, not skip, without it; docs/vllm.md).
#
# Without internet, point MATHRL_DATA_MIRROR at a folder holding the dataset files
# and MATHRL_TEST_MODELS at a folder holding tiny-qwen3-hf/.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/toolchain.sh"
cd "$(dirname "$0")/.."
root=$PWD

bash scripts/setup.sh
bash scripts/setup-notebooks.sh
vllm=${MATHRL_VLLM:-} # the vLLM tests run in a step of their own, below, not beside the others
unset MATHRL_VLLM
export PATH="$root/.cache/bin:$PATH"
export MATHRL_TEST_CACHE=${MATHRL_TEST_CACHE:-$root/.cache/testdeps}
export MATHRL_DATA_DIR=${MATHRL_DATA_DIR:-$root/.cache/data}
export GOMLX_BACKEND=${GOMLX_BACKEND:-go:ops_sequential,creation_order}
export GOMLX_NO_AUTO_INSTALL=1

echo "== build"
bash scripts/build.sh "$root/.cache/bin/mathrl" # stamped with the commit (internal/vcs)
echo "== data pull"
"$root/.cache/bin/mathrl" data pull --dir "$MATHRL_DATA_DIR"

echo "== gofmt, go vet"
bad=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go' -not -path './.cache/*'))
if [ -n "$bad" ]; then echo "gofmt would change:"; echo "$bad"; exit 1; fi
go vet ./...

echo "== go test"
go test -count=1 -timeout 80m ./...
simd=(./gomlx_trainer/gomlxfix ./gomlx_trainer/qwen3 ./gomlx_trainer/sampler ./gomlx_trainer/memplan)
echo "== go test, built with GOEXPERIMENT=nosimd: the matrix products, the model and the memory plan on GoMLX's portable kernels"
GOEXPERIMENT=nosimd go test -count=1 "${simd[@]}"
if [ "$GOEXPERIMENT" = simd ] && grep -qw avx512f /proc/cpuinfo 2>/dev/null; then
  echo "== go test on GoMLX's AVX2 kernels (GOMLX_GO_SIMD_AVX512=false), which the committed Go-backend runs used"
  GOMLX_GO_SIMD_AVX512=false go test -count=1 "${simd[@]}"
fi
echo "== go test on XLA's CPU compiler: every graph test again (MATHRL_TEST_BACKEND=xla-cpu)"
MATHRL_TEST_BACKEND=xla-cpu go test -count=1 -timeout 80m ./gomlx_trainer/gomlxfix ./gomlx_trainer/qwen3 \
  ./gomlx_trainer/sampler ./gomlx_trainer/engine/inprocess ./gomlx_trainer/grpo ./gomlx_trainer/memplan ./gomlx_trainer/bench ./cmd/mathrl
tiny=${MATHRL_TEST_MODELS:+$MATHRL_TEST_MODELS/tiny-qwen3-hf}
bash scripts/device/build_tests.sh "$root/.cache/device-dry-tests"
for backend in cpu xla-cpu; do
  echo "== GPU check scripts (scripts/device), dry run with tiny sizes, BACKEND=$backend"
  dry="$root/.cache/device-dry-$backend"
  rm -rf "$dry"
  # The references' venv first on PATH: the parity stage computes transformers' logits.
  if ! PATH="$MATHRL_TEST_CACHE/venv/bin:$PATH" OUT="$dry" MATHRL_BIN="$root/.cache/bin/mathrl" TINY_MODEL="$tiny" \
    DEVICE_TESTS="$root/.cache/device-dry-tests" GOTESTS_LIMIT=300 GOTEST_LIMIT=140 BACKEND=$backend MODEL=tiny DTYPE=float32 TOKENIZER=bytes SKIP_TORCH=1 BATCH=4 LEN=32 NEW_TOKENS=8 STEPS=1 \
    ROLLOUTS=1 PROMPTS=2 GROUP=2 RESPONSE=24 MICRO=2 SFT_BATCH=2 bash scripts/device/check_h200.sh > "$dry.log" 2>&1; then
    cat "$dry.log"
    exit 1
  fi
  cat "$dry/summary.txt"
done
if [ "$vllm" = 1 ]; then
  echo "== go test through vLLM for the CPU (MATHRL_VLLM=1), alone: a vLLM server starts in under a minute on a quiet machine"
  MATHRL_VLLM=1 go test -count=1 -p 1 -timeout 40m -run VLLM ./gomlx_trainer/engine ./gomlx_trainer/grpo
fi
echo "== notebooks"
"$root/.cache/bin/mathrl" notebooks run
