# Sourced by the project's scripts: selects the Go toolchain that go.mod's
# `toolchain` line names (Go 1.27.3, which GoMLX v0.28.16 needs). The go
# command downloads it once from the module proxy into the module cache; an
# older local Go works as the launcher. GOTOOLCHAIN set by the caller wins.
export GOTOOLCHAIN=${GOTOOLCHAIN:-$(awk '$1 == "toolchain" {print $2}' "$(dirname "${BASH_SOURCE[0]}")/../go.mod")}
# GoMLX's Go backend multiplies with its AVX2/AVX-512 kernels only in a build
# with GOEXPERIMENT=simd, 2.4-8x faster at the CPU demo's shapes (docs/gomlx.md):
# the project builds with it. GOEXPERIMENT set by the caller wins
# (GOEXPERIMENT=nosimd builds the portable kernels alone).
export GOEXPERIMENT=${GOEXPERIMENT-simd}
