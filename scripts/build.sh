#!/usr/bin/env bash
# Builds the mathrl binary into OUT (default .cache/bin/mathrl) with the commit
# it is built from stamped in (internal/vcs), so that `mathrl version` and every
# run's provenance.json name that commit even when Go's own VCS stamp is off
# (-buildvcs=false) or the checkout has moved on since the build. Outside a git
# checkout nothing is stamped. $LDFLAGS is added to the linker flags; further
# arguments go to go build.
#
#   bash scripts/build.sh
#   LDFLAGS='-s -w' bash scripts/build.sh .cache/device/mathrl
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/toolchain.sh"
out=$(realpath -m "${1:-.cache/bin/mathrl}")
shift $(($# > 0 ? 1 : 0))
cd "$(dirname "$0")/.."
ldflags=${LDFLAGS:-}
if commit=$(git rev-parse HEAD 2>/dev/null); then
  dirty=false
  if [ -n "$(git status --porcelain --untracked-files=no)" ]; then dirty=true; fi
  pkg=github.com/mathrl/mathrl/internal/vcs
  ldflags="$ldflags -X $pkg.commit=$commit -X $pkg.dirty=$dirty"
fi
mkdir -p "$(dirname "$out")"
go build -ldflags "$ldflags" -o "$out" "$@" ./cmd/mathrl
