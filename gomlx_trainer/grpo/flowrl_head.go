package grpo

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/shapes"
	. "github.com/gomlx/gomlx/core/graph" //nolint:staticcheck // graph-building code reads better unqualified
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/layers/activation"
	mlmodel "github.com/gomlx/gomlx/ml/model"

	"github.com/mathrl/mathrl/gomlx_trainer/gomlxfix"
)

// FlowRL's learned log Z (flowrl_log_z: head) is the authors' ProjZModule
// (their verl fork, verl_FlowRL/verl/workers/fsdp_workers.py, and verl's
// recipe): an MLP of `layers` blocks,
//
//	(layers − 1) × [Linear(h, h), GELU, LayerNorm(h), Dropout(0.1)], then Linear(h, 1)
//
// on the masked mean of the policy's last hidden state over the prompt. In
// mathrl:
//
//   - The hidden state is qwen3.HiddenWith's, the last decoder layer's output
//     after the final norm: Hugging Face's hidden_states[-1] for Qwen3 (its
//     Qwen3Model appends the normed state last). It is the training graph's
//     own forward, so no second pass runs.
//   - The mean is over positions 0 … P−2 of a prompt of P tokens: the
//     authors slice the prompt part as full_last_hidden[:, : -response_length
//     - 1], which leaves out the prompt's last token (the position whose
//     logits score the first response token). A one-token prompt gives the
//     head a zero vector.
//   - The gradient is not stopped anywhere: the authors' last_hidden is not
//     detached, so δ² trains the head and, through the hidden state, the
//     policy; log Z enters FlowRLLoss with its gradient.
//   - Dropout is left out (the head is an eval-mode ProjZModule): the head
//     learns from a few hundred sequences a step, and the runs stay
//     deterministic (interrupt and resume give bit-identical weights).
//   - The head is float32 whatever the policy's dtype (the hidden state is
//     converted), so it needs no master copy; its weights follow PyTorch's
//     defaults at creation (Linear: U(−1/√h, 1/√h) for weight and bias;
//     LayerNorm: weight 1, bias 0, ε 1e-5; GELU exact, with erf).
//   - The authors attach the head to the actor module, so it shares the
//     actor's optimizer: the same AdamW, learning rate and weight decay. So it
//     does here (its variables are trainable variables of the policy's store),
//     and there is no separate learning rate.

// FlowRLHeadScope is the store scope of the head's variables. They are named
// as PyTorch names ProjZModule's parameters (net.0.weight is
// FlowRLHeadScope + "/net/0/weight"), are trained with the policy, saved in
// a checkpoint's optimizer.safetensors and never exported with the model.
const FlowRLHeadScope = "/flowrl_log_z"

// flowHeadLayerNormEps is torch.nn.LayerNorm's default ε.
const flowHeadLayerNormEps = 1e-5

// flowHeadTensor is one variable of the head: its PyTorch name and shape.
type flowHeadTensor struct {
	name string
	dims []int
}

// flowHeadTensors lists the head's variables for hidden size h and layers
// blocks, in the order of ProjZModule's net (Linear, GELU, LayerNorm, Dropout
// per block: the Linear is net.4i, the LayerNorm net.4i+2).
func flowHeadTensors(h, layers int) []flowHeadTensor {
	var out []flowHeadTensor
	for i := range layers - 1 {
		lin, norm := fmt.Sprintf("net.%d", 4*i), fmt.Sprintf("net.%d", 4*i+2)
		out = append(out, flowHeadTensor{lin + ".weight", []int{h, h}}, flowHeadTensor{lin + ".bias", []int{h}},
			flowHeadTensor{norm + ".weight", []int{h}}, flowHeadTensor{norm + ".bias", []int{h}})
	}
	last := fmt.Sprintf("net.%d", 4*(layers-1))
	return append(out, flowHeadTensor{last + ".weight", []int{1, h}}, flowHeadTensor{last + ".bias", []int{1}})
}

// flowHeadPath is the store path of the head's tensor name.
func flowHeadPath(name string) string {
	return FlowRLHeadScope + mlmodel.ScopeSeparator + strings.ReplaceAll(name, ".", mlmodel.ScopeSeparator)
}

// isFlowRLHeadScope reports whether a variable's scope is the head's.
func isFlowRLHeadScope(scope string) bool {
	return scope == FlowRLHeadScope || strings.HasPrefix(scope, FlowRLHeadScope+mlmodel.ScopeSeparator)
}

// compareFlowHeadPaths orders store paths as InitFlowRLHead creates them:
// any path outside the head first, in the order given (it compares equal),
// then the head's by module index and weight before bias.
func compareFlowHeadPaths(a, b string) int {
	ka, ok := flowHeadRank(a)
	kb, okb := flowHeadRank(b)
	if !ok || !okb {
		return cmp.Compare(boolRank(ok), boolRank(okb))
	}
	return cmp.Compare(ka, kb)
}

// boolRank is 1 for true and 0 for false.
func boolRank(b bool) int {
	if b {
		return 1
	}
	return 0
}

// flowHeadRank is the creation rank of a head path (FlowRLHeadScope/net/K/
// weight or bias): 2K for the weight, 2K+1 for the bias; ok is false for a
// path outside the head.
func flowHeadRank(path string) (rank int, ok bool) {
	prefix := FlowRLHeadScope + mlmodel.ScopeSeparator + "net" + mlmodel.ScopeSeparator
	rest, found := strings.CutPrefix(path, prefix)
	if !found {
		return 0, false
	}
	index, leaf, found := strings.Cut(rest, mlmodel.ScopeSeparator)
	k, err := strconv.Atoi(index)
	if !found || err != nil || (leaf != "weight" && leaf != "bias") {
		return 0, false
	}
	if leaf == "bias" {
		return 2*k + 1, true
	}
	return 2 * k, true
}

// flowHeadVars are the head's variables in store (none without a head).
func flowHeadVars(store *mlmodel.Store) []*mlmodel.Variable {
	var vars []*mlmodel.Variable
	for v := range store.IterVariables() {
		if isFlowRLHeadScope(v.Scope()) {
			vars = append(vars, v)
		}
	}
	return vars
}

// InitFlowRLHead creates in store the head's variables for hidden size h and
// layers blocks that it does not hold yet (a resumed run's come from its
// checkpoint), trainable and float32, with PyTorch's initialisation drawn
// from seed. It returns an error if a variable it holds has another shape.
func InitFlowRLHead(store *mlmodel.Store, h, layers int, seed uint64) error {
	if layers < 1 {
		return fmt.Errorf("grpo: flowrl_head_layers %d, want at least 1", layers)
	}
	rng := rand.New(rand.NewPCG(seed, 0x5a_4c_6f_67)) // stream "ZLog": apart from the sampler's
	bound := 1 / math.Sqrt(float64(h))
	for _, spec := range flowHeadTensors(h, layers) {
		path := flowHeadPath(spec.name)
		if v := store.GetVariable(path); v != nil {
			if !v.Shape().Equal(shapes.Make(dtypes.Float32, spec.dims...)) {
				return fmt.Errorf("grpo: flowrl_log_z head: %s is %s, want float32 %v (flowrl_head_layers or the policy changed since the checkpoint?)", path, v.Shape(), spec.dims)
			}
			v.SetTrainable(true)
			continue
		}
		n := 1
		for _, d := range spec.dims {
			n *= d
		}
		vals := make([]float32, n)
		isNorm := flowHeadIsNorm(spec.name)
		for i := range vals {
			switch {
			case isNorm && strings.HasSuffix(spec.name, ".weight"):
				vals[i] = 1
			case isNorm:
				vals[i] = 0
			default:
				vals[i] = float32((2*rng.Float64() - 1) * bound)
			}
		}
		store.VariableWithValue(path, tensors.FromFlatDataAndDimensions(vals, spec.dims...)).SetTrainable(true)
	}
	return nil
}

// flowHeadIsNorm reports whether a head tensor name (net.K.weight) belongs
// to a LayerNorm: K = 4i + 2.
func flowHeadIsNorm(name string) bool {
	var k int
	var rest string
	if _, err := fmt.Sscanf(name, "net.%d.%s", &k, &rest); err != nil {
		return false
	}
	return k%4 == 2
}

// FlowRLHeadLogZ builds the head's log Z, [b] float32, from the policy's
// last hidden states h [b, t, hidden] (any float dtype) and each row's prompt
// length promptLens [b] (any numeric dtype; the prompt is the row's first
// promptLens tokens): the head applied to the mean of h over positions 0 …
// P−2 (see the comment at the top of this file). The head's variables are
// read from scope's store; it panics if they are missing.
func FlowRLHeadLogZ(scope *mlmodel.Scope, h, promptLens *Node, layers int) *Node {
	g := h.Graph()
	b, t, hidden := h.Shape().Dim(0), h.Shape().Dim(1), h.Shape().Dim(2)
	promptLens.AssertDims(b)
	last := AddScalar(ConvertDType(promptLens, dtypes.Int32), -1) // positions < P−1
	inPrompt := LessThan(Iota(g, shapes.Make(dtypes.Int32, b, t), 1), BroadcastToDims(InsertAxes(last, -1), b, t))
	mask := ConvertDType(inPrompt, dtypes.Float32)                                                                  // [b, t]
	sum := gomlxfix.DotGeneralMatmul(mask, []int{1}, []int{0}, ConvertDType(h, dtypes.Float32), []int{1}, []int{0}) // [b, hidden]
	x := Div(sum, InsertAxes(MaxScalar(ReduceSum(mask, -1), 1), -1))
	x.AssertDims(b, hidden)
	return FlowRLHead(scope, x, layers)
}

// FlowRLHead applies the head to x [b, hidden] (float32) and returns [b].
func FlowRLHead(scope *mlmodel.Scope, x *Node, layers int) *Node {
	g := x.Graph()
	v := func(name string) *Node {
		variable := scope.Store().GetVariable(flowHeadPath(name))
		if variable == nil {
			panic(fmt.Errorf("grpo: flowrl_log_z head: %s not in the store (InitFlowRLHead)", flowHeadPath(name)))
		}
		return gomlxfix.VariableNode(variable, g)
	}
	// row reads a [hidden] vector as [1, hidden], broadcast over the rows
	row := func(name string) *Node { return InsertAxes(v(name), 0) }
	// linear is PyTorch's Linear k: x·Wᵀ + b, W [out, in]
	linear := func(x *Node, k int) *Node {
		w, bias := v(fmt.Sprintf("net.%d.weight", k)), row(fmt.Sprintf("net.%d.bias", k))
		return Add(gomlxfix.DotGeneralMatmul(x, []int{1}, nil, w, []int{1}, nil), bias)
	}
	for i := range layers - 1 {
		x = activation.Gelu(linear(x, 4*i))
		mean := ReduceAndKeep(x, ReduceMean, -1)
		centred := Sub(x, mean)
		variance := ReduceAndKeep(Square(centred), ReduceMean, -1)
		x = Div(centred, Sqrt(AddScalar(variance, flowHeadLayerNormEps)))
		x = Add(Mul(x, row(fmt.Sprintf("net.%d.weight", 4*i+2))), row(fmt.Sprintf("net.%d.bias", 4*i+2)))
	}
	out := linear(x, 4*(layers-1)) // [b, 1]
	return Reshape(out, x.Shape().Dim(0))
}
