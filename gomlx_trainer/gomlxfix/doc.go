// Package gomlxfix replaces a few gradient rules of GoMLX v0.26.0 with ones that
// are faster or that work on every backend. Install swaps them into GoMLX's
// graph.VJPRegistration table, once per process:
//
//   - Dot and DotGeneral: GoMLX builds the gradient as a broadcast outer product
//     followed by a reduction, which materialises a tensor of size
//     batch x m x k x n. Here each operand's gradient is itself one DotGeneral
//     (a matmul) plus a transpose: on the pure Go backend a training step of a
//     small transformer runs several times faster, and bfloat16 gradients are
//     accumulated by the matmul instead of by a long reduction.
//   - Slice: GoMLX's gradient uses Pad, which the pure Go backend does not
//     implement; here unit-stride slices get their gradient by concatenating
//     zeros, which every backend runs. Strided slices keep GoMLX's rule.
//   - Rsqrt: GoMLX has no gradient for it; d/dx x^(-1/2) = -y^3/2 is added.
//
// The tests compare every rule with GoMLX's own gradient (or a finite
// difference where GoMLX has none) on several shapes.
//
// Reading a DotGeneral's or Slice's axes needs fields GoMLX does not export; they
// are read with reflect and checked against the node's shape. Should a GoMLX
// upgrade rename them, the rules fall back to GoMLX's own (slower, but correct),
// and this package's tests fail to say so.
package gomlxfix
