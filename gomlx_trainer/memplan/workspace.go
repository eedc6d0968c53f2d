package memplan

import (
	"runtime"
	"slices"

	"github.com/mathrl/mathrl/gomlx_trainer/backend"
	"github.com/mathrl/mathrl/gomlx_trainer/qwen3"
)

// kernels names the matrix-product kernels of the Go backend in this process
// (backend.GoKernels): matmulWorkspace counts the SIMD ones' workspace.
var kernels = backend.GoKernels()

// TermWorkspace names the SIMD matmul kernel's workspace (matmulWorkspace).
const TermWorkspace = "matmul workspace"

// packedProduct is the size, in multiply-adds of one product (M·N·K), from
// which GoMLX's Go backend (compute v0.1.14) multiplies with its packed,
// cache-blocked kernel rather than directly on its operands
// (matmul.SmallMatMulSizeThreshold; the AVX-512 router counts the batch
// axis in, the AVX2 one does not).
const packedProduct = 4 << 20

// matmulWorkspace is, under the CPU rules in a build with GOEXPERIMENT=simd
// on an amd64 CPU with AVX2, what GoMLX's AVX2/AVX-512 packed matmul kernel
// holds beyond the plain build's portable one, when one of products (the
// multiply-adds of one product: linearProduct, attentionProduct) reaches
// packedProduct; 0 otherwise. It is an upper bound of what a step holds: see
// below.
//
// Both kernels (compute v0.1.14, internal/gobackend/dot/matmul: nosimd_large.go,
// avx2/large.go, avx512/large.go) run a product on the 2·GOMAXPROCS
// goroutines of the backend's worker pool (on the calling one alone with
// GOMAXPROCS = 1; the plan takes this process's GOMAXPROCS), and each takes from the backend's buffer pool a float32
// accumulator of A output panels, 4·A·Mc·Nc bytes (A = 64; 16 for the SIMD
// kernel on one goroutine), one more panel, 4·Mc·Nc, and its packed operands,
// d·Kc·(Mc + Nc). They go back to the pool after the product, where the Go
// heap keeps them until a collection, so they count for the whole step or
// session. The portable kernel's blocks are small (Mc = 2, Kc = Nc = 512:
// 1.3 MB per goroutine in float32), and the CPU rules' constants, measured on
// the plain build, hold them; the SIMD kernel's accumulators are 4 MiB
// (Mc = 32, Nc = 512; in 16-bit dtypes Nc = 768, 6 MiB), so a goroutine
// holds 3.2–3.4 MB more in float32 (Kc = 128, or 192 with AVX-512).
//
// How many goroutines hold their buffers at the peak depends on how they
// interleave, and tensors of the accumulators' size class in the pool
// (support.TwoBitBucketLen) share their buffers, so a step holds anywhere
// from none to about all of it. Measured with GOMAXPROCS = 2 (TestTrainStepPeakOnCPU
// and TestSamplingPeakOnCPU), the SIMD build's peaks were 7.6–16 MB above the
// plain build's against 12.9 MB here (AVX2, 11–12 runs of each shape; medians,
// at most 12–16.4 MB); with AVX-512, 3–14 MB above against 13.4 MB, and 0–11
// MB where the head's float32 tensors are of the accumulators' size class (2
// x 128 positions of a vocabulary of 4,096). With the kernel's Mc cut to 4
// (GOMLX_GO_AVX2_MC=4) the peaks were the plain build's, with larger
// accumulators (GOMLX_GO_AVX2_NC=1024) higher still.
func matmulWorkspace(d int64, r Rules, products ...int64) int64 {
	if r != CPU || kernels == backend.KernelsGo || slices.Max(products) < packedProduct {
		return 0
	}
	mc, nc, kc := int64(32), int64(512), int64(128)
	if d < 4 {
		nc = 768
	} else if kernels == backend.KernelsAVX512 {
		kc = 192
	}
	procs := int64(runtime.GOMAXPROCS(0))
	goroutines, panels := 2*procs, int64(64)
	if procs == 1 {
		goroutines, panels = 1, 16
	}
	simd := 4*(panels+1)*mc*nc + d*kc*(mc+nc)
	plain := 4*(64+1)*2*512 + d*512*(2+512)
	return goroutines * max(simd-plain, 0)
}

// linearProduct is the multiply-adds of the largest linear product of
// rows·chunk tokens: tokens·Hidden·max(Vocab, Intermediate, Heads·HeadDim)
// (the weight gradients' products are as large).
func linearProduct(cfg qwen3.Config, rows, chunk int) int64 {
	return int64(rows) * int64(chunk) * int64(cfg.Hidden) * int64(max(cfg.VocabSize, cfg.Intermediate, cfg.Heads*cfg.HeadDim))
}

// attentionProduct is the multiply-adds of the attention's products for
// chunk queries over slots keys: chunk·slots·HeadDim per row and head, and
// with AVX-512 (whose router counts the batch axis) over all rows·Heads.
func attentionProduct(cfg qwen3.Config, rows, chunk, slots int) int64 {
	n := int64(chunk) * int64(slots) * int64(cfg.HeadDim)
	if kernels == backend.KernelsAVX512 {
		n *= int64(rows) * int64(cfg.Heads)
	}
	return n
}
