#!/usr/bin/env bash
# Installs what `mathrl notebooks run` needs: Jupyter's nbconvert from Debian
# (scripts/setup.sh installs it too; PyPI is not used), and GoNB with goimports
# and gopls at the versions pinned in tools/go.mod, built into .cache/bin, then
# registers the GoNB kernel with Jupyter. Idempotent and quick when done.
#
# For notebooks in a browser, also: apt-get install jupyter-notebook jupyter-client
# and `PATH=$PWD/.cache/bin:$PATH /usr/bin/jupyter notebook` (as root: --allow-root).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/toolchain.sh"
root=$(cd "$(dirname "$0")/.." && pwd)
bin="$root/.cache/bin"
mkdir -p "$bin"

if ! dpkg -s jupyter-nbconvert >/dev/null 2>&1; then
  echo "setup-notebooks: apt-get install jupyter-nbconvert"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends jupyter-nbconvert >/dev/null
fi

# gonb, goimports and gopls, pinned in tools/go.mod (`go install tool` builds all three).
stamp="$bin/.tools-$(sha256sum "$root/tools/go.mod" "$root/tools/go.sum" | sha256sum | cut -c1-16)"
if [ ! -f "$stamp" ] || [ ! -x "$bin/gonb" ] || [ ! -x "$bin/goimports" ]; then
  echo "setup-notebooks: building gonb, goimports, gopls (tools/go.mod; about a minute)"
  (cd "$root/tools" && GOBIN="$bin" go install tool)
  rm -f "$bin"/.tools-*
  touch "$stamp"
fi

# Register the kernel (kernel.json points at $bin/gonb). GoNB runs goimports from PATH.
export PATH="$bin:$PATH"
kernels=${JUPYTER_DATA_DIR:-${XDG_DATA_HOME:-$HOME/.local/share}/jupyter}/kernels/gonb/kernel.json
if [ ! -f "$kernels" ] || ! grep -q "\"$bin/gonb\"" "$kernels"; then
  echo "setup-notebooks: gonb --install"
  gonb --install --raw_error >/dev/null 2>&1 || gonb --install --raw_error
fi
echo "setup-notebooks: done (gonb kernel: $kernels)"
