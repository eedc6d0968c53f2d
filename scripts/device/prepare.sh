#!/usr/bin/env bash
# Gathers into .cache/device (git-ignored) what the GPU check needs on a machine
# that has no Go and no internet: the mathrl binary (x86-64 Linux, cgo, glibc >= 2.34,
# stripped), the test binaries of the packages whose tests the check runs on the
# device (tests/, see device_tests.txt), the real Qwen3 tokenizer.json and the
# tiny-qwen3-hf reference checkpoint (parity on the device), from
# $MATHRL_TEST_MODELS or, when that is unset, ../shared/models (beside the
# checkout) where it exists. The binaries and the tokenizer are xz-compressed
# (the device tool carries 64 MiB with the repository); check_h200.sh unpacks
# them. Then, on the GPU machine, with .cache/device brought along:
#   bash scripts/device/check_h200.sh
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../toolchain.sh"
cd "$(dirname "$0")/../.."
dst=.cache/device
tok=.cache/testdeps/qwen3/tokenizer.json
[ -f "$tok" ] || bash scripts/setup.sh
rm -rf "$dst.tmp"
mkdir -p "$dst.tmp"
CGO_ENABLED=1 GOOS=linux GOARCH=amd64 LDFLAGS='-s -w' bash scripts/build.sh "$dst.tmp/mathrl"
"$dst.tmp/mathrl" --help > /dev/null
cp "$tok" "$dst.tmp/tokenizer.json"
bash scripts/device/build_tests.sh "$dst.tmp/tests"
tiny=${MATHRL_TEST_MODELS:+$MATHRL_TEST_MODELS/tiny-qwen3-hf}
if [ -z "${MATHRL_TEST_MODELS:-}" ] && [ -d ../shared/models/tiny-qwen3-hf ]; then
  tiny=../shared/models/tiny-qwen3-hf
fi
if [ -n "$tiny" ] && [ -f "$tiny/reference.json" ]; then
  cp -r "$tiny" "$dst.tmp/tiny-qwen3-hf"
  chmod -R u+w "$dst.tmp/tiny-qwen3-hf"
else
  echo "prepare: no tiny-qwen3-hf (set MATHRL_TEST_MODELS): the device check will probe with a random tiny model, no parity"
fi
xz -T0 -6 "$dst.tmp/mathrl" "$dst.tmp/tokenizer.json" "$dst.tmp"/tests/*.test
rm -rf "$dst"
mv "$dst.tmp" "$dst"
du -sh "$dst"
echo "prepare: done; on the GPU machine, with $dst brought along: bash scripts/device/check_h200.sh"
