package gomlxfix

import (
	"github.com/gomlx/compute"
	"github.com/gomlx/compute/gobackend"
)

// FusedAttention reports whether graphs on b should ask for the backend's
// FusedScaledDotProductAttention: where b has it, except on GoMLX's Go backend.
// The Go backend has it since GoMLX v0.28.16 (compute v0.1.14), but at the
// shapes of the project's CPU models its fused attention, forward and
// backward, is slower than the same attention built from matmuls and a
// softmax, in a plain build and many times over in a GOEXPERIMENT=simd one,
// whose AVX-512 kernel sums each query-key product across a vector's lanes
// (BenchmarkFusedAttention in qwen3 times both in the same run).
func FusedAttention(b compute.Backend) bool {
	return b.Capabilities().Operations[compute.OpTypeFusedScaledDotProductAttention] && b.String() != gobackend.BackendName
}
