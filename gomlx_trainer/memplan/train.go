package memplan

import (
	"github.com/gomlx/compute/dtypes"

	"github.com/mathrl/mathrl/gomlx_trainer/layout"
	"github.com/mathrl/mathrl/gomlx_trainer/precision"
	"github.com/mathrl/mathrl/gomlx_trainer/qwen3"
)

// Step is the shape of one training step's micro-batch and the options that
// change what it keeps.
type Step struct {
	DType           dtypes.DType // compute dtype of the weights and activations
	Rows            int          // sequences in the micro-batch
	SeqLen          int          // padded tokens per sequence (the longest of the micro-batch)
	LogProbChunk    int          // positions per chunk of the log-prob head; 0: the whole sequence at once
	RecomputeLayers bool         // recompute each decoder layer in the backward, keeping only its input
	Reference       bool         // a frozen reference policy (the KL penalty, FlowRL)
	TeacherParams   int64        // parameters of an in-process distillation teacher, resident beside the policy; 0: none
	FusedAttention  bool         // fused (flash) attention: see FusedAttention
	Devices         int          // num_devices the step spreads over (Rows split over them); 0 or 1: one device
	FSDP            bool         // with Devices > 1: sharding fsdp (the state sharded too), else data
	State           State        // how the optimizer keeps its state (the zero value: float32, a float32 master of 16-bit weights, all on the device)
}

// State is how the optimizer keeps its state: the dtypes and master of
// precision.Optimizer, and what the offload options move to the host.
type State struct {
	Precision       precision.Optimizer
	OffloadFraction float64 // optimizer_cpu_offload: the share of the parameters whose master and moments live on the host (0: none)
	OffloadTrain    bool    // offload_train: the state leaves the device while the trainer samples
	FlowRLHead      int     // flowrl_head_layers of FlowRL's learned log Z head (flowrl_log_z: head); 0: no head
	ImplicitPRM     bool    // process_reward implicit: a second policy-shaped model trained beside the policy
}

// masterBytes is the bytes per parameter of the master values of weights
// of dtype: none for float32 weights (their own master), else 4 for a
// float32 copy, 2 for the 16 low bits, 0 without a master.
func (st State) masterBytes(dtype dtypes.DType) int64 {
	if dtype == dtypes.Float32 {
		return 0
	}
	switch st.Precision.Master {
	case precision.MasterRemainder:
		return 2
	case precision.MasterStochastic, precision.MasterNone:
		return 0
	}
	return 4
}

// dtypeBytes is the size of d, 4 (float32) for the zero dtype.
func dtypeBytes(d dtypes.DType) int64 {
	if d == dtypes.InvalidDType {
		return 4
	}
	return int64(d.Size())
}

// updateBytes is the bytes per parameter the update keeps between steps:
// both moments and the master.
func (st State) updateBytes(dtype dtypes.DType) int64 {
	p := st.Precision
	return dtypeBytes(p.ExpAvgDType) + dtypeBytes(p.ExpAvgSqDType) + st.masterBytes(dtype)
}

// onDevice is the parameters whose update state stays on the device: all
// but the offloaded share (the first weights in order, so a fraction is
// rounded to whole tensors; the plan takes the share as given).
func (st State) onDevice(p int64) int64 {
	return p - int64(st.OffloadFraction*float64(p))
}

// Host is what the host's memory holds under optimizer_cpu_offload: the
// offloaded parameters' master values and moments, and a copy of their
// weights, which the host updates. (With offload_train the rest of the state
// also passes through host memory while the trainer samples.)
func Host(cfg qwen3.Config, dtype dtypes.DType, st State) int64 {
	off := cfg.Params() - st.onDevice(cfg.Params())
	return off * (st.updateBytes(dtype) + int64(dtype.Size()))
}

// rowsOn is the rows of the micro-batch one device runs: Rows/Devices, the
// rows split on the batch axis, rounded up (grpo.Learner pads a micro-batch
// packed by tokens with empty rows to split, layout.PadRows).
func (s Step) rowsOn() int { return layout.RowsPerDevice(s.Rows, s.Devices) }

// FusedAttention reports whether a training step of that dtype under rules r
// runs its attention as one fused op, with a fused backward, and so never
// holds [Rows, Heads, T, T] scores: the model asks the backend for it
// (qwen3's causal attention), and XLA's CUDA backend lowers it to cuDNN's flash
// attention for bfloat16 and float16. On the CPU rules, and in float32, the
// attention is the decomposed graph.
func FusedAttention(dtype dtypes.DType, r Rules) bool {
	return r == XLA && dtype.Size() == 2
}

// Names of the training terms.
const (
	TermWeights      = "weights"
	TermReference    = "reference policy"
	TermTeacher      = "distillation teacher"
	TermAccumulators = "gradient accumulators"
	TermMoments      = "AdamW moments"
	TermMaster       = "master weights"
	TermLayers       = "layer activations"
	TermLayerInputs  = "layer inputs"
	TermScores       = "attention scores"
	TermFused        = "fused attention state"
	TermTransposed   = "transposed weights"
	TermHead         = "log-prob head"
	TermLayerBack    = "layer backward"
	TermRecomputed   = "recomputed layer"
	TermGradients    = "weight gradients"
	TermUpdate       = "optimizer update"
	TermGathered     = "gathered weights"
	TermFlowRLHead   = "FlowRL log Z head"
	TermPRM          = "implicit PRM"
)

// TrainStep returns the peak of one optimizer step under rules r, on one
// device (the first, with Devices > 1: see Sharded): the accumulate graph of
// one micro-batch (forward, backward, gradients added into the accumulators)
// or the AdamW update, whichever holds more. The phases are:
//
//	head backward:    resident + kept activations + log-prob head
//	layer backward:   resident + kept activations + one layer's backward (+ its recomputation;
//	                  under fsdp + its weights gathered)
//	end of backward:  resident + every weight gradient (CPU, and XLA on several devices)
//	optimizer update: resident + update temporaries
//
// where resident is Sharded(cfg, s.DType, s.Reference, s.Devices, s.FSDP, s.State)
// with the teacher (withTeacher) (on the CPU in a SIMD build, plus
// matmulWorkspace), and on several devices the activations are those of
// Rows/Devices rows.
func TrainStep(cfg qwen3.Config, s Step, r Rules) Breakdown {
	d := int64(s.DType.Size())
	resident := withTeacher(Sharded(cfg, s.DType, s.Reference, s.Devices, s.FSDP, s.State), s.TeacherParams, s.DType)
	devices := max(s.Devices, 1)
	s.Rows = s.rowsOn()
	kept := keptActivations(cfg, s, r)
	layer := []Term{{TermLayerBack, layerBackward(cfg, s, r)}}
	if s.RecomputeLayers {
		layer = append(layer, Term{TermRecomputed, recomputedLayer(cfg, s, r)})
	}
	gathered := []Term{{TermGathered, gatheredWeights(cfg, d, s)}}
	workspace := []Term{{TermWorkspace, matmulWorkspace(d, r, linearProduct(cfg, s.Rows, s.SeqLen), attentionProduct(cfg, s.Rows, s.SeqLen, s.SeqLen))}}
	phases := []Breakdown{
		with("head backward", resident, workspace, kept, []Term{{TermHead, logProbHead(cfg, s, r)}}),
		with("layer backward", resident, workspace, gathered, kept, layer),
		with("optimizer update", resident, workspace, []Term{{TermUpdate, OptimizerUpdate(cfg, s, r) / int64(shards(s))}}),
	}
	if r == CPU || devices > 1 {
		grads := weightGradients(cfg, d) / int64(shards(s))
		phases = append(phases, with("end of backward", resident, workspace, []Term{{TermGradients, grads}}))
	}
	return peak(phases...)
}

// shards is the number of pieces fsdp cuts each tensor of the state into: the
// devices under fsdp, else 1.
func shards(s Step) int {
	if s.FSDP && s.Devices > 1 {
		return s.Devices
	}
	return 1
}

// gatheredWeights is, under fsdp, what XLA gathers on a device beyond its
// own shards while a decoder layer runs: that layer's weights whole,
// (P − E)/L·d·(1 − 1/Devices), E the embedding's and head's parameters. As
// measured on XLA's CPU devices (TestShardedPeakOnXLA, and shapes of larger
// layers), the SPMD partitioner gathers a layer's weights where it uses
// them and frees them after, so one layer's are whole at a time; it leaves
// the embedding and head split on their vocabulary axis and gathers the
// micro-batch's rows there instead (the head computes the logits of every row
// for 1/Devices of the vocabulary: as many bytes as logProbHead counts for
// the device's rows), and the head's weight gradient stays split too. 0
// without fsdp.
func gatheredWeights(cfg qwen3.Config, d int64, s Step) int64 {
	n := int64(shards(s))
	return (cfg.Params() - embeddingParams(cfg)) / int64(cfg.Layers) * d * (n - 1) / n
}

// embeddingParams is the parameters of the embedding and, untied, the head.
func embeddingParams(cfg qwen3.Config) int64 {
	e := int64(cfg.VocabSize) * int64(cfg.Hidden)
	if !cfg.TieEmbeddings {
		e *= 2
	}
	return e
}

// Resident returns what a training run keeps on the device between steps, for
// P = cfg.Params() parameters and d bytes per element of dtype:
//
//   - weights, P·d: one copy, in the compute dtype. The sampler and the
//     learner share the model's store, and the trainable variables are the
//     weights themselves.
//   - reference policy, P·d, only with the KL penalty or FlowRL: a second,
//     frozen model.
//   - gradient accumulators, P·g: one per weight, g bytes of main_grads_dtype
//     (AccumulateGradients).
//   - AdamW moments, m and v of exp_avg_dtype and exp_avg_sq_dtype (4 + 4
//     bytes by default), for the parameters whose update stays on the device
//     (all but optimizer_offload_fraction under optimizer_cpu_offload).
//   - master weights, for the same parameters of 16-bit weights: 4 bytes (a
//     float32 copy), 2 (the 16 low bits) or none (precision.Optimizer).
//   - FlowRL's log Z head, with st.FlowRLHead layers: its H =
//     FlowRLHeadParams parameters in float32 with their accumulators and
//     moments, H·(4 + g + m + v), never offloaded (grpo refuses the head
//     with optimizer_cpu_offload and fsdp).
//   - the implicit PRM, with st.ImplicitPRM: a second model of the policy's
//     shape with its own AdamW moments and master, P·(d + m + v + master),
//     all on the device (grpo refuses it with optimizer_cpu_offload). Its
//     gradient accumulators live only during its own update, when the
//     policy's are freed, so the policy's term covers them.
func Resident(cfg qwen3.Config, dtype dtypes.DType, reference bool, st State) []Term {
	p, d := cfg.Params(), int64(dtype.Size())
	terms := []Term{{TermWeights, p * d}}
	if reference {
		terms = append(terms, Term{TermReference, p * d})
	}
	kept, pr := st.onDevice(p), st.Precision
	terms = append(terms, Term{TermAccumulators, dtypeBytes(pr.GradDType) * p},
		Term{TermMoments, (dtypeBytes(pr.ExpAvgDType) + dtypeBytes(pr.ExpAvgSqDType)) * kept})
	if m := st.masterBytes(dtype) * kept; m > 0 {
		terms = append(terms, Term{TermMaster, m})
	}
	if st.ImplicitPRM {
		perParam := d + dtypeBytes(pr.ExpAvgDType) + dtypeBytes(pr.ExpAvgSqDType) + st.masterBytes(dtype)
		terms = append(terms, Term{TermPRM, p * perParam})
	}
	if st.FlowRLHead > 0 {
		h := FlowRLHeadParams(cfg.Hidden, st.FlowRLHead)
		terms = append(terms, Term{TermFlowRLHead, h * (4 + dtypeBytes(pr.GradDType) + dtypeBytes(pr.ExpAvgDType) + dtypeBytes(pr.ExpAvgSqDType))})
	}
	return terms
}

// FlowRLHeadParams is the parameter count of FlowRL's log Z head of layers
// blocks on hidden size h: (layers − 1)·(h² + 3h) (a Linear(h, h) and a
// LayerNorm(h) per block) + h + 1 (the last Linear(h, 1)).
func FlowRLHeadParams(h, layers int) int64 {
	hh := int64(h)
	return int64(layers-1)*(hh*hh+3*hh) + hh + 1
}

// Sharded is Resident on the first of devices: under fsdp (and devices > 1)
// every tensor of the weights, accumulators, moments and master is split
// along its largest axis over the devices, so each holds 1/devices of it;
// under data each device holds them whole. The reference policy runs on the
// first device (grpo.Learner leaves it there), whole. devices 0 or 1 is
// Resident.
func Sharded(cfg qwen3.Config, dtype dtypes.DType, reference bool, devices int, fsdp bool, st State) []Term {
	terms := Resident(cfg, dtype, reference, st)
	if !fsdp || devices <= 1 {
		return terms
	}
	for i := range terms {
		if terms[i].Name != TermReference {
			terms[i].Bytes /= int64(devices)
		}
	}
	return terms
}

// withTeacher appends to resident the weights of an in-process distillation
// teacher of params parameters in dtype, frozen and whole on the first
// device as the reference policy is (grpo leaves it there); params 0 adds
// nothing.
func withTeacher(resident []Term, params int64, dtype dtypes.DType) []Term {
	if params == 0 {
		return resident
	}
	return append(resident, Term{TermTeacher, params * int64(dtype.Size())})
}

// keptActivations are what the forward pass leaves for the backward, for all
// L layers of N = Rows·SeqLen tokens: L·N·layerTokens plus, per layer, the
// attention scores (Rows·Heads·SeqLen² elements of scoreKept bytes). With
// RecomputeLayers only each layer's input survives: L·N·Hidden·d. That
// assumes the recomputed layer is kept apart from the forward one (XLA's
// common-subexpression pass would otherwise merge them back, keeping it all).
// On the CPU the forward pass also leaves transposedWeights.
func keptActivations(cfg qwen3.Config, s Step, r Rules) []Term {
	d, l, n := int64(s.DType.Size()), int64(cfg.Layers), tokens(s)
	var terms []Term
	if s.RecomputeLayers {
		terms = []Term{{TermLayerInputs, l * n * int64(cfg.Hidden) * d}}
	} else if s.FusedAttention {
		terms = []Term{
			{TermLayers, l * n * layerTokens(cfg, d, r)},
			{TermFused, l * n * fusedKept(cfg, d)},
		}
	} else {
		terms = []Term{
			{TermLayers, l * n * layerTokens(cfg, d, r)},
			{TermScores, l * scores(cfg, s) * scoreKept(d, r)},
		}
	}
	if r == CPU {
		terms = append(terms, Term{TermTransposed, transposedWeights(cfg, d, s.RecomputeLayers)})
	}
	return terms
}

// transposedWeights is, on the CPU, the copy of each linear weight [out, in]
// transposed to [in, out] that the forward pass makes for its matmul
// (gomlxfix.DotGeneralMatmul) and keeps for the gradient of the activations:
// every layer's seven projections and the head's weight, in the compute
// dtype; with RecomputeLayers only the head's, the layers' being remade one at
// a time by the recomputed layer. XLA folds those transposes into its dots.
func transposedWeights(cfg qwen3.Config, d int64, recompute bool) int64 {
	h, i := int64(cfg.Hidden), int64(cfg.Intermediate)
	q, kv := int64(cfg.Heads*cfg.HeadDim), int64(cfg.KVHeads*cfg.HeadDim)
	n := int64(cfg.VocabSize) * h
	if !recompute {
		n += int64(cfg.Layers) * (2*h*q + 2*h*kv + 3*h*i)
	}
	return n * d
}

func tokens(s Step) int64 { return int64(s.Rows) * int64(s.SeqLen) }

// scores is the number of attention scores of one layer: [Rows, Heads, T, T].
func scores(cfg qwen3.Config, s Step) int64 {
	return int64(s.Rows) * int64(cfg.Heads) * int64(s.SeqLen) * int64(s.SeqLen)
}

// layerTokens is the bytes per token one decoder layer keeps for its
// backward, with H = Hidden, I = Intermediate, q = Heads·HeadDim and
// kv = KVHeads·HeadDim (qwen3's decoder):
//
//   - XLA, (4H + 3q + 3kv + 3I)·d: the layer input, the normalised input of the
//     q/k/v projections, the q, k and v projections, q and k after their norm
//     and RoPE (the score matmul's operands), the attention output (o_proj's
//     operand), the residual after attention, its normalised form, gate, up and
//     silu(gate)·up. Norm statistics are float32 per token and left out.
//   - CPU, (6H + 4q + 4kv + 5I)·d: the same matmul operands plus what each
//     unfused op's gradient reads: both norms' normalised values (before the
//     weight), q and k before and after their own norm, sigmoid(gate) and
//     silu(gate). In bfloat16 each of the four RMSNorms also keeps its input
//     converted to float32: + 4·(2H + q + kv).
func layerTokens(cfg qwen3.Config, d int64, r Rules) int64 {
	h, i := int64(cfg.Hidden), int64(cfg.Intermediate)
	q, kv := int64(cfg.Heads*cfg.HeadDim), int64(cfg.KVHeads*cfg.HeadDim)
	if r == XLA {
		return (4*h + 3*q + 3*kv + 3*i) * d
	}
	n := (6*h + 4*q + 4*kv + 5*i) * d
	if d < 4 {
		n += 4 * (2*h + q + kv)
	}
	return n
}

// scoreKept is the bytes per attention score one layer keeps for its
// backward. Scores and softmax are float32 (qwen3's attention), and the
// probabilities are converted back to the compute dtype for the matmul with
// the values.
//
//   - XLA, 4 + d (4 in float32): the float32 softmax numerator, which its
//     gradient reads, and the probabilities in the compute dtype, the matmul's
//     operand. The mask is an iota comparison, fused.
//   - CPU, 5 + d: the same plus the boolean mask broadcast to every score (the
//     gradient of Where reads it); in float32 the numerator and the
//     probabilities are two buffers, 9 in all.
func scoreKept(d int64, r Rules) int64 {
	if r == XLA {
		if d == 4 {
			return 4
		}
		return 4 + d
	}
	return 5 + d
}

// fusedKept is the bytes per token one layer keeps for the backward of fused
// attention, with q = Heads·HeadDim and kv = KVHeads·HeadDim, beyond what
// layerTokens counts (q, k, v and the attention output): the float32
// log-sum-exp of each query row and head (4·Heads), and, for grouped-query
// attention, keys and values broadcast to every query head (2·(q − kv)·d),
// since cuDNN's kernel takes equal head counts.
func fusedKept(cfg qwen3.Config, d int64) int64 {
	q, kv := int64(cfg.Heads*cfg.HeadDim), int64(cfg.KVHeads*cfg.HeadDim)
	return 4*int64(cfg.Heads) + 2*(q-kv)*d
}

// fusedBackward is the bytes per token of fused attention's backward: the
// gradients of the query and of the broadcast keys and values (3q·d, reduced
// to kv heads after the op) and the kernel's float32 accumulator for the
// query's gradient (4q). cuDNN's workspace beyond that is a few MiB and is
// left out.
func fusedBackward(cfg qwen3.Config, d int64) int64 {
	q := int64(cfg.Heads * cfg.HeadDim)
	return 3*q*d + 4*q
}

// layerBackward is one layer's backward working set beyond what it kept: the
// gradients of its attention scores and of its widest token tensors. With
// fused attention the scores' part is N·fusedBackward.
//
//   - XLA, scores·(4 + 2d) + N·(H + 2I)·d: the probabilities' gradient (the
//     matmul's output, d), a float32 intermediate of the softmax gradient and
//     the scores' gradient in the compute dtype (d); the residual's gradient and
//     those of gate and up.
//   - CPU, scores·8 + N·(H + 4I)·d: two float32 score-sized buffers are alive
//     at once (the probabilities' gradient and the gradient through the
//     softmax; the Go backend runs the ops in the order the graph made them);
//     the gradients of the residual, of silu(gate)·up, gate and up, and a
//     blocked copy of one [N, I] operand.
func layerBackward(cfg qwen3.Config, s Step, r Rules) int64 {
	d := int64(s.DType.Size())
	h, i := int64(cfg.Hidden), int64(cfg.Intermediate)
	if r == XLA {
		if s.FusedAttention {
			return tokens(s) * ((h+2*i)*d + fusedBackward(cfg, d))
		}
		return scores(cfg, s)*(4+2*d) + tokens(s)*(h+2*i)*d
	}
	return scores(cfg, s)*8 + tokens(s)*(h+4*i)*d
}

// recomputedLayer is, with RecomputeLayers, what the backward of one layer
// recomputes and holds while it runs: the activations and scores one layer
// would otherwise have kept, N·layerTokens + scores·scoreKept (N·fusedKept in
// place of the scores with fused attention).
func recomputedLayer(cfg qwen3.Config, s Step, r Rules) int64 {
	d := int64(s.DType.Size())
	if s.FusedAttention {
		return tokens(s) * (layerTokens(cfg, d, r) + fusedKept(cfg, d))
	}
	return tokens(s)*layerTokens(cfg, d, r) + scores(cfg, s)*scoreKept(d, r)
}

// logProbHead is the log-prob head at its peak, on Rows·C positions at once,
// where C = min(LogProbChunk, SeqLen), or SeqLen without chunks (then it holds
// [Rows, SeqLen, Vocab] float32 logits), plus the gradient of its weight,
// V·H·d. With chunks, each chunk's logits are assumed to be recomputed in the
// backward, so that one chunk's are alive at a time. Per logit:
//
//   - XLA, d + 8: the logits from the matmul (d), the float32 log-softmax its
//     gradient reads, and the float32 gradient of the logits.
//   - CPU, 4k: the k float32 buffers TargetLogProbs' gradient reads: the
//     exponentials of the shifted logits and of the log-softmax, the
//     log-softmax, and for vocabularies of at most 4,096 ids the one-hot
//     targets (k = 4, else 3). The gradients take their places: each is made by
//     the last op that reads one of them, which reuses its buffer.
func logProbHead(cfg qwen3.Config, s Step, r Rules) int64 {
	d, v, c := int64(s.DType.Size()), int64(cfg.VocabSize), headPositions(s)
	perLogit := d + 8
	if r == CPU {
		perLogit = 4 * 3
		if cfg.VocabSize <= 4096 { // qwen3.TargetLogProbs' one-hot limit
			perLogit = 4 * 4
		}
	}
	return int64(s.Rows)*c*v*perLogit + v*int64(cfg.Hidden)*d/int64(shards(s))
}

// headPositions is C = min(LogProbChunk, SeqLen), or SeqLen without chunks:
// the positions per row the log-prob head computes at once.
func headPositions(s Step) int64 {
	if s.LogProbChunk > 0 && s.LogProbChunk < s.SeqLen {
		return int64(s.LogProbChunk)
	}
	return int64(s.SeqLen)
}

// OptimizerUpdate is what the optimizer step holds beyond the resident
// state.
//
//   - XLA, one device: the fresh state of the largest weight, W·(d + the
//     bytes of its moments and master). The step runs weight by weight
//     (grpo's groupedUpdate): a graph computes the global gradient norm (its
//     transient is a few scalars), then each weight's update runs alone with
//     its old weight, moments, master and accumulator donated. GoMLX
//     v0.28.2 declares no input/output aliasing, so XLA writes that
//     weight's new values into new buffers and frees the old ones after it;
//     the elementwise update fuses into the loops that write them, with no
//     temporaries of note (TestOptimizerStepPeakOnXLA measures it). With
//     optimizer_cpu_offload the device updates only the weights it keeps
//     (none: 0; the host's new weights replace the old ones as they
//     arrive); the plan still counts the largest weight.
//   - XLA, several devices: one graph writes a fresh copy of everything the
//     step writes (TestShardedPeakOnXLA measures it): for the parameters
//     updated on the device, their weights, moments and master, and the
//     accumulators, which the step zeroes.
//   - CPU: 8·W, W = largestWeight(cfg). The pure Go backend writes a donated
//     buffer in place, but each weight's update makes up to two float32
//     temporaries of its size (m and v are outputs, so their bias-corrected
//     quotients are new buffers).
func OptimizerUpdate(cfg qwen3.Config, s Step, r Rules) int64 {
	if r == CPU {
		return 8 * largestWeight(cfg)
	}
	p := cfg.Params()
	perParam := int64(s.DType.Size()) + s.State.updateBytes(s.DType)
	if s.Devices <= 1 {
		if s.State.onDevice(p) == 0 {
			return 0
		}
		return largestWeight(cfg) * perParam
	}
	return s.State.onDevice(p)*perParam + p*dtypeBytes(s.State.Precision.GradDType)
}

// weightGradients is, on the CPU, what the end of the backward holds: every
// weight's gradient in the compute dtype, P·d, since the additions into the
// accumulators were built after the whole backward, plus two more of the
// largest weight's size, 2·W·d (the embedding's two gradients, from the head
// and from the lookup, and their sum; or a transposed copy of a matmul's
// weight gradient). XLA on several devices holds the same (measured on its
// CPU devices): its all-reduce combiner makes one collective of every
// gradient, which are then all alive at the end of the backward; under fsdp
// each is reduce-scattered onto its shards, 1/Devices of it (TrainStep
// divides). On a GPU XLA's combiner caps the bytes of one collective, so
// there this is an upper bound.
func weightGradients(cfg qwen3.Config, d int64) int64 {
	return (cfg.Params() + 2*largestWeight(cfg)) * d
}

// largestWeight is the element count of the largest weight: the embedding
// (and lm_head) V·H, or an MLP projection H·I, or a query projection H·q.
func largestWeight(cfg qwen3.Config) int64 {
	h := int64(cfg.Hidden)
	return h * max(int64(cfg.VocabSize), int64(cfg.Intermediate), int64(cfg.Heads*cfg.HeadDim))
}
