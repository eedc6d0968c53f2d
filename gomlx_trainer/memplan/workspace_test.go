package memplan

import (
	"runtime"
	"testing"

	"github.com/gomlx/compute/dtypes"

	"github.com/mathrl/mathrl/gomlx_trainer/backend"
	"github.com/mathrl/mathrl/gomlx_trainer/qwen3"
)

// withKernels runs fn as if the Go backend in this process ran the named
// kernels (backend.GoKernels), and GOMAXPROCS were procs.
func withKernels(t *testing.T, name string, procs int, fn func()) {
	t.Helper()
	saved := kernels
	defer func() { kernels = saved }()
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
	kernels = name
	fn()
}

// TestMatmulWorkspaceByHand works out the SIMD kernels' workspace with
// GOMAXPROCS = 2 (4 goroutines, 64 panels each) in float32 (d = 4), with the
// portable kernel's 4·65·2·512 + 4·512·514 = 1,318,912 bytes per goroutine
// taken off: AVX2 packs Kc = 128, 4·65·32·512 + 4·128·(32 + 512) = 4,538,368,
// so 4·3,219,456 = 12,877,824 bytes; AVX-512 packs Kc = 192, 4,677,632, so
// 4·3,358,720 = 13,434,880. In bfloat16 (d = 2) both use Nc = 768 and Kc = 128:
// 4·65·32·768 + 2·128·800 = 6,594,560 against 266,240 + 2·512·514 = 792,576,
// so 4·5,801,984 = 23,207,936. On one goroutine (GOMAXPROCS = 1) the SIMD
// kernel keeps 16 panels, the portable one still 64: 4·17·32·512 + 4·128·544
// - 1,318,912 = 73,728 bytes with AVX2. The portable kernels, the XLA rules
// and products below packedProduct hold none.
func TestMatmulWorkspaceByHand(t *testing.T) {
	for _, tc := range []struct {
		kernels string
		procs   int
		d       int64
		r       Rules
		product int64
		bytes   int64
	}{
		{backend.KernelsAVX2, 2, 4, CPU, packedProduct, 12_877_824},
		{backend.KernelsAVX512, 2, 4, CPU, packedProduct, 13_434_880},
		{backend.KernelsAVX2, 2, 2, CPU, packedProduct, 23_207_936},
		{backend.KernelsAVX512, 2, 2, CPU, packedProduct, 23_207_936},
		{backend.KernelsAVX2, 1, 4, CPU, packedProduct, 73_728},
		{backend.KernelsAVX2, 2, 4, CPU, packedProduct - 1, 0},
		{backend.KernelsAVX512, 2, 4, XLA, packedProduct, 0},
		{backend.KernelsGo, 2, 4, CPU, packedProduct, 0},
	} {
		withKernels(t, tc.kernels, tc.procs, func() {
			if got := matmulWorkspace(tc.d, tc.r, 1, tc.product); got != tc.bytes {
				t.Errorf("%s kernels, GOMAXPROCS %d, d = %d, %s rules, product %d: workspace %d, want %d",
					tc.kernels, tc.procs, tc.d, tc.r, tc.product, got, tc.bytes)
			}
		})
	}
}

// TestAttentionProductByHand: 8 queries over 16 keys with HeadDim 2 are
// 8·16·2 = 256 multiply-adds per row and head, which the portable and AVX2
// kernels' routers count; AVX-512's counts the batch axis too, 3 rows of 2
// heads: 6·256 = 1536.
func TestAttentionProductByHand(t *testing.T) {
	cfg := qwen3.Config{Heads: 2, HeadDim: 2}
	for name, want := range map[string]int64{backend.KernelsGo: 256, backend.KernelsAVX2: 256, backend.KernelsAVX512: 1536} {
		withKernels(t, name, runtime.GOMAXPROCS(0), func() {
			if got := attentionProduct(cfg, 3, 8, 16); got != want {
				t.Errorf("%s kernels: attentionProduct = %d, want %d", name, got, want)
			}
		})
	}
}

// TestTrainStepCountsTheWorkspace checks that under the CPU rules with SIMD
// kernels a train step's peak counts the whole workspace whichever phase it
// is in: the head backward of a vocabulary of 4,096 at 2 x 128 positions,
// whose float32 tensors are of the accumulators' size class, and the layer
// backward of long sequences; the portable kernels and the XLA rules count
// none.
func TestTrainStepCountsTheWorkspace(t *testing.T) {
	shape := func(hidden, vocab, inter int) qwen3.Config {
		return qwen3.Config{VocabSize: vocab, Hidden: hidden, Intermediate: inter, Layers: 2, Heads: 4, KVHeads: 2,
			HeadDim: hidden / 4, TieEmbeddings: true, DType: "float32"}
	}
	for _, tc := range []struct {
		cfg   qwen3.Config
		step  Step
		phase string
	}{
		{shape(64, 4096, 128), Step{DType: dtypes.Float32, Rows: 2, SeqLen: 128}, "head backward"},
		{shape(64, 300, 128), Step{DType: dtypes.Float32, Rows: 2, SeqLen: 512}, "layer backward"},
	} {
		for _, k := range []string{backend.KernelsAVX2, backend.KernelsAVX512, backend.KernelsGo} {
			for _, r := range []Rules{CPU, XLA} {
				withKernels(t, k, 2, func() {
					b := TrainStep(tc.cfg, tc.step, r)
					want := int64(0)
					if r == CPU && k != backend.KernelsGo {
						want = matmulWorkspace(4, CPU, linearProduct(tc.cfg, 2, tc.step.SeqLen))
					}
					if r == CPU && b.Phase != tc.phase || b.Term(TermWorkspace) != want {
						t.Errorf("%s kernels, %s rules, %d positions: peak in %s with a workspace of %d; want %s, %d",
							k, r, tc.step.SeqLen, b.Phase, b.Term(TermWorkspace), tc.phase, want)
					}
				})
			}
		}
	}
}
