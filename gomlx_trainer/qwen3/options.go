package qwen3

// ModelOptions choose how a training graph trades computation for memory. The
// values it computes are the same whatever they say; the zero value builds the
// plain graph.
type ModelOptions struct {
	// Remat recomputes each decoder layer in the backward pass, keeping only the
	// layer's input from the forward pass instead of all its activations (about
	// one more forward pass of compute).
	Remat bool
	// LogProbChunk, when positive, computes log-probs and entropies this many
	// positions at a time (TargetLogProbsChunked), so that no [batch, seq,
	// vocab] tensor exists; 0 computes the full logits.
	LogProbChunk int
	// DecomposedAttention builds the training graph's attention from matmuls and
	// a masked softmax even where the backend's fused attention would be used
	// (causalAttention, gomlxfix.FusedAttention: XLA), to compare the two: the
	// same values within the fused kernel's rounding, with [batch, heads, seq,
	// seq] scores.
	DecomposedAttention bool
}
