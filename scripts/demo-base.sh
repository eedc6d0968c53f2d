#!/usr/bin/env bash
# Regenerates configs/demo-base/, the policy the CPU demo starts from: runs the
# warm-start recipe configs/demo-base.yaml (2000 supervised steps on XLA's CPU
# compiler, about 8 minutes on 2 cores; scripts/setup.sh installs it) into
# runs/demo-base, then copies the Hugging Face files of its last checkpoint
# (config.json, model.safetensors, tokenizer.json) into configs/demo-base/
# through a temporary folder, so a failed run leaves the old base whole.
#
#   bash scripts/demo-base.sh
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/toolchain.sh"
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
bin=.cache/bin/mathrl
bash scripts/build.sh "$bin"
rm -rf runs/demo-base
"$bin" train --config demo-base
ckpt=runs/demo-base/ckpt/step-000000
tmp=$(mktemp -d configs/.demo-base.XXXXXX)
chmod 755 "$tmp" # mktemp makes it private
trap 'rm -rf "$tmp"' EXIT
cp "$ckpt/config.json" "$ckpt/model.safetensors" "$ckpt/tokenizer.json" "$tmp/"
rm -rf configs/demo-base
mv "$tmp" configs/demo-base
trap - EXIT
sha256sum configs/demo-base/*
