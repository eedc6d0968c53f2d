//go:build amd64 && goexperiment.simd

package memplan

import "simd/archsimd"

// In a build with GOEXPERIMENT=simd on amd64, GoMLX's Go backend multiplies
// with its AVX2 or AVX-512 kernels where the CPU has them (see
// matmulWorkspace).
var (
	simdMatmul = archsimd.X86.AVX2()
	simdAVX512 = archsimd.X86.AVX512()
)
