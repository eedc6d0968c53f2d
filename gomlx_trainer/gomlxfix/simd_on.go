//go:build goexperiment.simd

package gomlxfix

// simdBuild reports whether this binary was built with GOEXPERIMENT=simd,
// which gives the Go backend its AVX kernels (see halfInFloat32).
const simdBuild = true
