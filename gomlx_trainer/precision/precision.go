// Package precision says in which dtypes an optimizer keeps its state, as
// Megatron's precision-aware optimizer does: the gradient accumulators, the
// AdamW moments, and how a 16-bit weight keeps the master value its updates
// add to. The trainer (grpo) keeps its state so, and the memory planner
// (memplan) counts its bytes so.
package precision

import "github.com/gomlx/compute/dtypes"

// The ways a 16-bit weight keeps what an update adds to it. An AdamW step moves
// a weight by about the learning rate; at 1e-6 that is far below half a
// bfloat16 ulp of a weight of 0.02 (6e-5), so rounding the updated weight to
// nearest each step (MasterNone) loses almost every update.
const (
	MasterFloat32    = "float32"    // a float32 copy of each weight (4 bytes per parameter); exact
	MasterRemainder  = "remainder"  // the bfloat16 weight and its 16 low bits (2 bytes); exactly the float32 master
	MasterStochastic = "stochastic" // no master; the updated value rounded up or down at random (0 bytes): unbiased, not exact
	MasterNone       = "none"       // no master; the updated value rounded to nearest (updates under half an ulp are lost)
)

// Optimizer says which dtypes the optimizer keeps its state in (Megatron's
// precision-aware optimizer); the arithmetic is float32 whatever they are.
// The zero value keeps everything in float32, with a float32 master copy of
// 16-bit weights.
type Optimizer struct {
	Master        string       // how a 16-bit weight keeps its master value (Master*); "": MasterFloat32. Float32 weights are their own master.
	GradDType     dtypes.DType // gradient accumulators (main_grads_dtype); 0: float32
	ExpAvgDType   dtypes.DType // AdamW's first moment (exp_avg_dtype); 0: float32
	ExpAvgSqDType dtypes.DType // AdamW's second moment (exp_avg_sq_dtype); 0: float32
	Seed          uint32       // with MasterStochastic: seeds the rounding draws, which also depend on the step and the element
}
