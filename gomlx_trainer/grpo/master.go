package grpo

import (
	"fmt"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/dtypes/bfloat16"
	"github.com/gomlx/compute/shapes"
	. "github.com/gomlx/gomlx/core/graph" //nolint:staticcheck // graph-building code reads better unqualified
	"github.com/gomlx/gomlx/core/tensors"
	mlmodel "github.com/gomlx/gomlx/ml/model"

	"github.com/mathrl/mathrl/gomlx_trainer/gomlxfix"
	"github.com/mathrl/mathrl/gomlx_trainer/precision"
	"github.com/mathrl/mathrl/gomlx_trainer/qwen3"
)

// MasterScope holds the master values of 16-bit weights: a float32 copy of
// each (precision.MasterFloat32) or its 16 low bits (precision.MasterRemainder). It is not under
// AdamScope, so resetting the optimizer between the warm start and GRPO
// leaves it, and it is saved in checkpoints with the optimizer state.
const MasterScope = "/master"

// remainderSuffix ends the path of a weight's 16 low bits under MasterScope.
const remainderSuffix = "_remainder"

// orFloat32 is d, or float32 for the zero dtype.
func orFloat32(d dtypes.DType) dtypes.DType {
	if d == dtypes.InvalidDType {
		return dtypes.Float32
	}
	return d
}

// masterOf is how weight v keeps its master value: precision.MasterNone for a float32
// weight (it is its own master), else p.Master (precision.MasterFloat32 when unset).
func masterOf(p precision.Optimizer, v *mlmodel.Variable) string {
	if v.DType() == dtypes.Float32 {
		return precision.MasterNone
	}
	if p.Master == "" {
		return precision.MasterFloat32
	}
	return p.Master
}

// masterPath is the path of v's master value under MasterScope (its float32
// copy, or its remainder with remainderSuffix).
func masterPath(v *mlmodel.Variable, mode string) string {
	if mode == precision.MasterRemainder {
		return MasterScope + v.Path() + remainderSuffix
	}
	return MasterScope + v.Path()
}

// createMaster creates v's master value where v needs one and it does not
// exist yet: the float32 copy from v's value, or a zero remainder (a bfloat16
// weight is exactly its float32 master with 16 zero low bits). A master read
// from a checkpoint is kept.
func createMaster(store *mlmodel.Store, v *mlmodel.Variable, p precision.Optimizer) error {
	mode := masterOf(p, v)
	switch mode {
	case precision.MasterNone, precision.MasterStochastic:
		return nil
	case precision.MasterRemainder:
		if v.DType() != dtypes.BFloat16 {
			return fmt.Errorf("grpo: master_weights %s needs bfloat16 weights, %s is %s", mode, v.Path(), v.DType())
		}
		_, err := ensureState(store, masterPath(v, mode), shapes.Make(dtypes.Int16, v.Shape().Dimensions...))
		return err
	case precision.MasterFloat32:
		path := masterPath(v, mode)
		if store.GetVariable(path) != nil {
			_, err := ensureState(store, path, shapes.Make(dtypes.Float32, v.Shape().Dimensions...))
			return err
		}
		t, err := v.Value()
		if err != nil {
			return fmt.Errorf("grpo: master of %s: %w", v.Path(), err)
		}
		vals, err := qwen3.Float32s(t)
		if err != nil {
			return fmt.Errorf("grpo: master of %s: %w", v.Path(), err)
		}
		store.VariableWithValue(path, tensors.FromFlatDataAndDimensions(vals, v.Shape().Dimensions...)).SetTrainable(false)
		return nil
	}
	return fmt.Errorf("grpo: master weights %q: want %s, %s, %s or %s", mode, precision.MasterFloat32, precision.MasterRemainder, precision.MasterStochastic, precision.MasterNone)
}

// masterValue is the float32 value the update of weight v starts from, in
// graph g (joinMaster).
func masterValue(store *mlmodel.Store, v *mlmodel.Variable, p precision.Optimizer, g *Graph) *Node {
	mode := masterOf(p, v)
	if mode == precision.MasterFloat32 {
		return gomlxfix.VariableNode(store.GetVariable(masterPath(v, mode)), g)
	}
	w := gomlxfix.VariableNode(v, g)
	if mode == precision.MasterRemainder {
		return joinMaster(mode, w, gomlxfix.VariableNode(store.GetVariable(masterPath(v, mode)), g))
	}
	return joinMaster(mode, w, nil)
}

// setMaster stores the updated float32 value x of weight v into the weight
// and its master (splitMaster). step (uint32) and index (uint32, the
// weight's place in the update) key the draws of stochastic rounding, so
// that a resumed run draws the same.
func setMaster(store *mlmodel.Store, v *mlmodel.Variable, p precision.Optimizer, x, step, index *Node) {
	mode := masterOf(p, v)
	w, master := splitMaster(mode, x, v.DType(), p.Seed, step, index)
	if master != nil {
		store.GetVariable(masterPath(v, mode)).SetNodeValue(master)
	}
	v.SetNodeValue(w)
}

// joinMaster is the float32 value of a weight w whose master value, kept as
// mode says, is master (nil for the modes that keep none).
func joinMaster(mode string, w, master *Node) *Node {
	switch mode {
	case precision.MasterFloat32:
		return master
	case precision.MasterRemainder:
		return JoinRemainder(w, master)
	}
	return ConvertDType(w, dtypes.Float32)
}

// splitMaster is what a weight of dtype keeps of the float32 value x, as mode
// says: the weight and its master value (nil for the modes that keep none).
// Stochastic rounding draws by seed, step and index (see drawBits).
func splitMaster(mode string, x *Node, dtype dtypes.DType, seed uint32, step, index *Node) (w, master *Node) {
	switch mode {
	case precision.MasterFloat32:
		return ConvertDType(x, dtype), x
	case precision.MasterRemainder:
		return SplitRemainder(x)
	case precision.MasterStochastic:
		return StochasticBFloat16(x, drawBits(x.Shape(), step, seed, index)), nil
	}
	return ConvertDType(x, dtype), nil
}

// SplitRemainder splits float32 x into the bfloat16 w nearest to it (ties
// rounded away from zero) and the int16 remainder r of its 16 low bits, such
// that JoinRemainder(w, r) is x bit for bit (Transformer Engine's
// store_param_remainders): with M the bits of x, w's bits are (M + 2^15) >> 16
// and r is M's low 16 bits read as a signed number, negative exactly when the
// rounding went up. r is computed as M minus w's bits shifted up, a
// difference in [-2^15, 2^15) that converts to int16 by value, so no
// conversion narrows raw bits. (The earlier form, the low bits masked and
// narrowed, was exact op by op on CUDA but left every remainder 0 inside
// the optimizer step there: docs/gpu.md. This form is not yet run there.)
func SplitRemainder(x *Node) (w, r *Node) {
	bits := Bitcast(x, dtypes.Uint32)
	w = truncateToBFloat16(AddScalar(bits, 1<<15))
	high := BitwiseShiftLeftScalar(ConvertDType(Bitcast(w, dtypes.Uint16), dtypes.Uint32), 16)
	r = ConvertDType(Bitcast(Sub(bits, high), dtypes.Int32), dtypes.Int16)
	return w, r
}

// JoinRemainder is the float32 whose SplitRemainder is (w, r): the bits of w
// shifted up 16, plus r (sign-extended, modulo 2^32).
func JoinRemainder(w, r *Node) *Node {
	hi := BitwiseShiftLeftScalar(ConvertDType(Bitcast(w, dtypes.Uint16), dtypes.Uint32), 16)
	lo := Bitcast(ConvertDType(r, dtypes.Int32), dtypes.Uint32)
	return Bitcast(Add(hi, lo), dtypes.Float32)
}

// StochasticBFloat16 rounds float32 x to a bfloat16 neighbour at random: up
// with probability (distance to the lower neighbour) / ulp, using the low 16
// bits of the uint32 draws bits (one per element), so that the rounded value's
// mean is x.
func StochasticBFloat16(x, bits *Node) *Node {
	noise := BitwiseAnd(bits, Scalar(x.Graph(), dtypes.Uint32, 0xFFFF))
	return truncateToBFloat16(Add(Bitcast(x, dtypes.Uint32), noise))
}

// truncateToBFloat16 is the bfloat16 whose bits are the high 16 of the
// uint32 bits.
func truncateToBFloat16(bits *Node) *Node {
	return Bitcast(ConvertDType(BitwiseShiftRightLogicalScalar(bits, 16), dtypes.Uint16), dtypes.BFloat16)
}

// drawBits returns uint32 draws of shape's dimensions, a function of the
// element, the optimizer step (uint32), the seed and the variable's index
// (uint32) alone (a counter-based generator: the lowbias32 hash of the element's
// index plus a per-step, per-variable offset), so that no generator state
// needs saving for a resumed run to draw the same.
func drawBits(shape shapes.Shape, step *Node, seed uint32, index *Node) *Node {
	g := step.Graph()
	key := BitwiseXor(Scalar(g, dtypes.Uint32, seed), Mul(index, Scalar(g, dtypes.Uint32, 0x9E3779B9)))
	offset := hash32(Add(MulScalar(step, 0x85EBCA6B), key))
	return hash32(Add(IotaFull(g, shapes.Make(dtypes.Uint32, shape.Dimensions...)), offset))
}

// hash32 is Chris Wellons' lowbias32 integer hash of uint32 x (a bijection).
func hash32(x *Node) *Node {
	g := x.Graph()
	mix := func(x *Node, shift int, mul uint32) *Node {
		x = BitwiseXor(x, BitwiseShiftRightLogicalScalar(x, shift))
		if mul == 0 {
			return x
		}
		return Mul(x, Scalar(g, dtypes.Uint32, mul))
	}
	x = mix(x, 16, 0x7FEB352D)
	x = mix(x, 15, 0x846CA68B)
	return mix(x, 16, 0)
}

// ensureState returns the trainer's variable at path with shape, created at
// zero when missing. One of another dtype (read from a checkpoint, where the
// optimizer state is stored as float32, or saved under other precision
// settings) is converted on the host to shape's dtype.
func ensureState(store *mlmodel.Store, path string, shape shapes.Shape) (*mlmodel.Variable, error) {
	v := store.GetVariable(path)
	if v == nil || v.Shape().Equal(shape) {
		return state(store, path, shape), nil
	}
	if v.Shape().Size() != shape.Size() {
		return nil, fmt.Errorf("grpo: optimizer state %s: shape %s, want %s", path, v.Shape(), shape)
	}
	if !v.HasValue() { // still at its zero initial value: made anew in shape's dtype
		if err := store.DeleteVariable(path); err != nil {
			return nil, fmt.Errorf("grpo: optimizer state %s: %w", path, err)
		}
		return state(store, path, shape), nil
	}
	t, err := v.Value()
	if err != nil {
		return nil, fmt.Errorf("grpo: optimizer state %s: %w", path, err)
	}
	vals, err := stateFloat32s(t)
	if err != nil {
		return nil, fmt.Errorf("grpo: optimizer state %s: %w", path, err)
	}
	converted, err := stateTensor(vals, shape)
	if err != nil {
		return nil, fmt.Errorf("grpo: optimizer state %s: %w", path, err)
	}
	if err := store.DeleteVariable(path); err != nil {
		return nil, fmt.Errorf("grpo: optimizer state %s: %w", path, err)
	}
	return store.VariableWithValue(path, converted).SetTrainable(false), nil
}

// stateFloat32s copies a state tensor's values (float32, bfloat16 or int16)
// as float32, which holds each of them exactly.
func stateFloat32s(t *tensors.Tensor) ([]float32, error) {
	if t.DType() != dtypes.Int16 {
		return qwen3.Float32s(t)
	}
	out := make([]float32, t.Shape().Size())
	tensors.MustConstFlatData(t, func(flat []int16) {
		for i, v := range flat {
			out[i] = float32(v)
		}
	})
	return out, nil
}

// stateTensor makes a tensor of shape from float32 values: rounded to nearest
// for bfloat16, and for int16 only when each value is an int16.
func stateTensor(vals []float32, shape shapes.Shape) (*tensors.Tensor, error) {
	switch shape.DType {
	case dtypes.Float32:
		return tensors.FromFlatDataAndDimensions(vals, shape.Dimensions...), nil
	case dtypes.Int16:
		out := make([]int16, len(vals))
		for i, v := range vals {
			if v != float32(int16(v)) {
				return nil, fmt.Errorf("value %v at %d is not an int16", v, i)
			}
			out[i] = int16(v)
		}
		return tensors.FromFlatDataAndDimensions(out, shape.Dimensions...), nil
	case dtypes.BFloat16:
		t := tensors.FromShape(shape)
		tensors.MustMutableFlatData(t, func(flat []bfloat16.BFloat16) {
			for i, v := range vals {
				flat[i] = bfloat16.FromFloat32(v)
			}
		})
		return t, nil
	}
	return nil, fmt.Errorf("dtype %s: want Float32, BFloat16 or Int16", shape.DType)
}
