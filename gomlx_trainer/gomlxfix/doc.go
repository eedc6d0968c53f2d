// Package gomlxfix works around what GoMLX v0.28.2 does slowly or wrongly,
// mostly on its pure Go backend, so that every graph of mathrl builds its
// matrix products one way and sums half-precision gradients in float32:
//
//   - DotGeneralMatmul transposes both operands of a DotGeneral into the
//     matmul layout, lhs [batch, m, k] and rhs [batch, k, n], each group of
//     contracting and of cross axes merged into one (axes that are neighbours
//     in the operand merged before the transpose): XLA's CPU compiler sums a
//     bfloat16 product over several contracting axes, or over one made by
//     reshaping a transpose, in bfloat16, and so summed every weight's
//     gradient (batch and sequence contracted) in bfloat16. The Go backend
//     turns any other layout into [batch, n, k] for the rhs and, in a build
//     with GOEXPERIMENT=simd, runs small products of that layout (under about
//     a million multiply-adds, every product of a tiny model and of a decoding
//     step) with an AVX2 kernel that is several times slower than the plain Go
//     one in float32 and gives wrong sums in bfloat16 (errors of the order of
//     the values themselves; the matmul layout is exact to bfloat16's
//     rounding). On XLA a transpose feeding a dot is folded into the dot.
//   - Install replaces GoMLX's gradient rule for DotGeneral with one whose two
//     products are DotGeneralMatmul's, so the backward pass keeps to the
//     matmul layout too. GoMLX's own rule already builds matmuls (v0.26's built
//     a broadcast outer product); only their layout differs.
//   - DotGeneralMatmulF32 is DotGeneralMatmul with a float32 result for
//     bfloat16 operands (scores before a softmax, logits before a
//     log-softmax), so that the float32 sum is not rounded to bfloat16 first.
//   - Install also replaces the gradient rule for Gather: GoMLX's scatters the
//     adjoint in the operand's dtype, and both backends accumulate a bfloat16
//     scatter in bfloat16 (an embedding row used by hundreds of tokens came
//     out 2.5e-2 off); the new rule scatters in float32 and rounds once.
//
// The tests compare both with GoMLX's own results (values, and gradients
// taken from forward passes alone) on several shapes, in float32 and
// bfloat16; BenchmarkMLPGradient and BenchmarkDecodeProducts time them
// against GoMLX's in the same run. TestDotGeneralMatmulF32 and
// TestGatherGradientSumsInFloat32 check the float32 results and sums.
//
// What v0.28.2 no longer needs: Slice's gradient uses Pad, which the Go
// backend now runs, and Dot/DotGeneral gradients are matmuls. What it still
// lacks: Rsqrt has no gradient (TestRsqrtStillHasNoGradient), so the model
// normalises with 1/Sqrt; the Go backend runs neither DynamicSlice nor
// DynamicUpdateSlice (TestGoBackendStillLacksDynamicUpdateSlice), so the
// key/value cache writes its slots with Where and a one-hot mask.
//
// Reading a DotGeneral's axes needs fields GoMLX does not export; they are
// read with reflect and checked against the node's shape. Should a GoMLX
// upgrade rename them, the rule falls back to GoMLX's own (correct, in
// GoMLX's layout), and this package's tests fail to say so.
package gomlxfix
