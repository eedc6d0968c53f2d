//go:build amd64 && goexperiment.simd

package backend

import (
	"simd/archsimd"

	"github.com/gomlx/compute/support/envutil"
)

// GoKernels names the matrix-product kernels that GoMLX's Go backend runs in
// this process. In a GOEXPERIMENT=simd build on amd64 they are the widest the
// CPU has (KernelsAVX512, then KernelsAVX2), as compute chooses them:
// GOMLX_GO_SIMD_AVX512=false or GOMLX_GO_SIMD_AVX2=false turns a width off.
// A run on the Go backend rounds alike, bit for bit, wherever its kernels are
// the same, so provenance.json records them.
func GoKernels() string {
	switch {
	case allowed(envutil.GoBackendSIMD_AVX512) && archsimd.X86.AVX512():
		return KernelsAVX512
	case allowed(envutil.GoBackendSIMD_AVX2) && archsimd.X86.AVX2():
		return KernelsAVX2
	}
	return KernelsGo
}

// allowed reads compute's switch for a kernel width; compute itself refuses
// a value that is not a boolean when the process starts.
func allowed(name string) bool {
	on, err := envutil.ReadBool(name, true)
	return on || err != nil
}
