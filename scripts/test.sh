#!/usr/bin/env bash
# The whole test suite, from a fresh clone: installs the references the tests
# compare against (scripts/setup.sh), pulls the datasets (checksummed), then runs
# gofmt, go vet and every Go test on the CPU backend.
#
# Without internet, point MATHRL_DATA_MIRROR at a folder holding the dataset files
# and MATHRL_TEST_MODELS at a folder holding tiny-qwen3-hf/.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

bash scripts/setup.sh
bash scripts/setup-notebooks.sh
export PATH="$root/.cache/bin:$PATH"
export MATHRL_TEST_CACHE=${MATHRL_TEST_CACHE:-$root/.cache/testdeps}
export MATHRL_DATA_DIR=${MATHRL_DATA_DIR:-$root/.cache/data}
export GOMLX_BACKEND=${GOMLX_BACKEND:-go:ops_sequential}
export GOMLX_NO_AUTO_INSTALL=1

echo "== build"
go build -o "$root/.cache/bin/mathrl" ./cmd/mathrl
echo "== data pull"
"$root/.cache/bin/mathrl" data pull --dir "$MATHRL_DATA_DIR"

echo "== gofmt, go vet"
bad=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go' -not -path './.cache/*'))
if [ -n "$bad" ]; then echo "gofmt would change:"; echo "$bad"; exit 1; fi
go vet ./...

echo "== go test"
go test -count=1 -timeout 80m ./...
echo "== notebooks"
"$root/.cache/bin/mathrl" notebooks run
