#!/usr/bin/env bash
# Builds the test binaries of the packages device_tests.txt names into DIR
# (stripped, x86-64 Linux, cgo), as <package>.test; check_h200.sh runs them on
# the device, and scripts/test.sh in its dry run.
#   bash scripts/device/build_tests.sh DIR
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../toolchain.sh"
cd "$(dirname "$0")/../.."
dir=${1:?usage: build_tests.sh DIR}
mkdir -p "$dir"
grep -v '^#' scripts/device/device_tests.txt | while read -r pkg _; do
  [ -n "$pkg" ] || continue
  CGO_ENABLED=1 GOOS=linux GOARCH=amd64 go test -c -ldflags='-s -w' -o "$dir/$(basename "$pkg").test" "./$pkg"
done
