//go:build goexperiment.simd

package backend

// SIMD reports whether this binary was built with GOEXPERIMENT=simd, which
// lets GoMLX's Go backend run its matrix products with AVX2/AVX-512 kernels
// (see SIMDAdvice).
const SIMD = true
