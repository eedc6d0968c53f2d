//go:build !(amd64 && goexperiment.simd)

package memplan

// Without GOEXPERIMENT=simd, or off amd64, GoMLX's Go backend multiplies with
// its portable kernel (see matmulWorkspace).
var simdMatmul, simdAVX512 = false, false
