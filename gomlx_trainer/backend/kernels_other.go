//go:build !(amd64 && goexperiment.simd)

package backend

// GoKernels names the matrix-product kernels that GoMLX's Go backend runs in
// this process: without GOEXPERIMENT=simd, or off amd64, its portable ones.
// A run on the Go backend rounds alike, bit for bit, wherever its kernels are
// the same, so provenance.json records them.
func GoKernels() string { return KernelsGo }
