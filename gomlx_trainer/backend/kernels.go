package backend

// The matrix-product kernels of GoMLX's Go backend, as GoKernels names them.
const (
	KernelsGo     = "go"     // the portable kernels: a plain build, or a CPU without AVX2
	KernelsAVX2   = "avx2"   // a GOEXPERIMENT=simd build on a CPU with AVX2
	KernelsAVX512 = "avx512" // a GOEXPERIMENT=simd build on a CPU with AVX-512
)
