package grpo

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/gomlx/compute"
	"github.com/gomlx/compute/distributed"
	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/shapes"
	. "github.com/gomlx/gomlx/core/graph" //nolint:staticcheck // graph-building code reads better unqualified
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/core/tensors/dtensor"
	mlmodel "github.com/gomlx/gomlx/ml/model"

	"github.com/mathrl/mathrl/gomlx_trainer/gomlxfix"
	"github.com/mathrl/mathrl/gomlx_trainer/layout"
	"github.com/mathrl/mathrl/gomlx_trainer/precision"
	"github.com/mathrl/mathrl/gomlx_trainer/qwen3"
)

// Batch is a padded training batch, [rows][seq] each. Position t holds what is
// needed to score the token at t+1: Targets[t] = IDs[t+1], OldLogProbs[t] its
// sampling log-prob, Weights[t] its loss weight (0 on prompt, tool responses,
// template glue and padding). Advantages has one entry per row.
type Batch struct {
	IDs, Targets [][]int32
	OldLogProbs  [][]float32
	RefLogProbs  [][]float32 // nil unless the KL penalty or FlowRL is on
	Weights      [][]float32
	ISWeights    [][]float32 // importance weights of the policy-gradient term (1 unless truncated importance sampling is on)
	Advantages   []float32
	LogZ         []float32 // one per row: FlowRL's log Z of the row's prompt (0 without FlowRL)
	OnPolicy     []float32 // one per row; 1: the loss takes the row's own log-probs as the old ones, not OldLogProbs (StepOptions.OnPolicy; nil: 0)
	PromptLens   []float32 // one per row: the prompt's token count (FlowRL's log Z head averages its hidden states; read only with the head)
	// TokenAdvantages, per position, are added to the row's advantage
	// (on-policy distillation; nil: none, and the graph has no such input).
	TokenAdvantages [][]float32
}

// StepStats are the sums one micro-batch's loss graph returns; the trainer adds
// them up over the micro-batches of an optimizer step.
type StepStats struct {
	Loss, PGLoss, Tokens, ClipTokens, KLSum, EntropySum, RatioSum float64
}

// Add accumulates o into s.
func (s *StepStats) Add(o StepStats) {
	s.Loss += o.Loss
	s.PGLoss += o.PGLoss
	s.Tokens += o.Tokens
	s.ClipTokens += o.ClipTokens
	s.KLSum += o.KLSum
	s.EntropySum += o.EntropySum
	s.RatioSum += o.RatioSum
}

// Learner owns the policy, its optimizer state (in the model's store) and
// its training graphs: one that adds a micro-batch's gradients into
// accumulators, the update that clips and applies them with AdamW (on one
// device weight by weight, see groupedUpdate), and one that
// computes per-token log-probs (for the frozen reference). The trainer's loop
// goes through it to reset the optimizer and to save a checkpoint.
type Learner struct {
	Model   *qwen3.Model
	backend compute.Backend
	vars    []*mlmodel.Variable
	grpo    *mlmodel.Exec // (ids, targets, old, ref, adv, w, isw, onPolicy, logZ[, promptLens][, tokenAdv]) -> stats
	sft     *mlmodel.Exec // (ids, targets, w) -> stats
	apply   *mlmodel.Exec // (lr) -> grad norm: the whole optimizer step as one graph (several devices)
	logp    *mlmodel.Exec // (ids, targets) -> log-probs
	ref     *Learner      // the frozen reference policy of the KL penalty (nil: none)
	opts    qwen3.ModelOptions
	sh      *sharded            // the devices the graphs run on (nil: one)
	prec    precision.Optimizer // the optimizer state's dtypes and the master of 16-bit weights
	adam    AdamWConfig
	ready   bool           // the optimizer state exists (prepare)
	host    *hostOptimizer // the update of some weights on the host (OffloadOptimizer); nil: all on the device
	grouped *groupedUpdate // the optimizer step on one device, weight by weight (built by the first Apply)
	zeros   *Exec          // () -> a zero gradient accumulator per weight of vars, on one device (zeroAccumulators)
	zeroed  []shapes.Shape // the shapes zeros makes

	flowHead bool // the grpo graph computes FlowRL's log Z with the learned head, and takes Batch.PromptLens
}

// sharded is how the learner's graphs run on several devices: over a
// layout.Mesh, each batch input split on its first axis and every graph
// result replicated, XLA's SPMD partitioner (Shardy) inserting the
// collectives. Under sharding data the variables (weights, gradient
// accumulators, AdamW moments) are whole on every device and XLA all-reduces
// the gradients; under fsdp each is split along its layout.FSDPAxis, and XLA
// gathers a weight where a layer needs it and reduces each gradient onto the
// shards that keep it.
type sharded struct {
	mesh *layout.Mesh
	fsdp bool
}

// shardNames name the knobs in the errors of Shard.
var shardNames = layout.Names{Prefix: "grpo:", Devices: "num_devices", Sharding: "sharding"}

// NewLearner builds the graphs for model (compiled lazily, once per shape).
// temperature is the sampling temperature the log-probs are computed under.
func NewLearner(backend compute.Backend, model *qwen3.Model, loss LossConfig, adam AdamWConfig, temperature float64) *Learner {
	return NewLearnerWith(backend, model, loss, adam, temperature, qwen3.ModelOptions{})
}

// NewLearnerWith is NewLearner with graphs built as opts say (log-probs in
// chunks of positions, decoder layers recomputed in the backward pass): the
// same values for less memory. The zero options build NewLearner's graphs.
func NewLearnerWith(backend compute.Backend, model *qwen3.Model, loss LossConfig, adam AdamWConfig, temperature float64, opts qwen3.ModelOptions) *Learner {
	gomlxfix.Install()
	l := &Learner{Model: model, backend: backend, vars: TrainableVariables(model.Store), opts: opts, prec: adam.Precision, adam: adam,
		flowHead: loss.FlowLogZHead > 0}
	cfg := model.Config
	useRef := loss.KLCoef != 0 || loss.FlowRL
	statsOf := func(out LossOutputs, entropy, w *Node) []*Node {
		active := ConvertDType(GreaterThan(w, ZerosLike(w)), dtypes.Float32)
		return []*Node{out.Loss, out.PGLoss, out.Tokens, out.ClipTokens, out.KLSum, ReduceAllSum(Mul(entropy, active)), out.RatioSum}
	}
	l.grpo = mlmodel.MustNewExec(backend, model.Store, func(scope *mlmodel.Scope, in []*Node) []*Node {
		ids, targets, old, ref, adv, w, isw, onPolicy, logZ := in[0], in[1], in[2], in[3], in[4], in[5], in[6], in[7], in[8]
		extra := in[9:]
		var promptLens *Node // with FlowRL's log Z head, a tenth input: Batch.PromptLens
		if loss.FlowLogZHead > 0 {
			promptLens, extra = extra[0], extra[1:]
		}
		var tokAdv *Node // then Batch.TokenAdvantages, if any
		if len(extra) > 0 {
			tokAdv = extra[0]
		}
		var logp, entropy *Node
		if loss.FlowLogZHead > 0 { // one forward: the log-probs and the head's log Z from the same hidden states
			h := qwen3.HiddenWith(scope, cfg, ids, opts)
			logp, entropy = qwen3.TargetLogProbsFromHidden(scope, cfg, h, targets, temperature, opts)
			logZ = FlowRLHeadLogZ(scope, h, promptLens, loss.FlowLogZHead)
		} else {
			logp, entropy = qwen3.TargetLogProbsOf(scope, cfg, ids, targets, temperature, opts)
		}
		// an on-policy row's old log-probs are its own forward's (PolicyLoss stops their gradient): ratio exactly 1
		old = Where(GreaterThan(onPolicy, ZerosLike(onPolicy)), ConvertDType(logp, old.DType()), old)
		if !useRef {
			ref = nil
		}
		out := PolicyLoss(LossInputs{LogProbs: logp, OldLogProbs: old, RefLogProbs: ref, Entropy: entropy, Advantages: adv,
			Weights: w, ISWeights: isw, LogZ: logZ, TokenAdvantages: tokAdv}, loss)
		AccumulateGradients(scope.Store(), l.vars, out.Loss)
		l.layOutOutputs(l.grpo, ids.Graph())
		return statsOf(out, entropy, w)
	})
	l.sft = mlmodel.MustNewExec(backend, model.Store, func(scope *mlmodel.Scope, ids, targets, w *Node) []*Node {
		logp, entropy := qwen3.TargetLogProbsOf(scope, cfg, ids, targets, 1, opts)
		nll := Neg(ReduceAllSum(Mul(w, logp)))
		AccumulateGradients(scope.Store(), l.vars, nll)
		l.layOutOutputs(l.sft, ids.Graph())
		zero := ScalarZero(ids.Graph(), dtypes.Float32)
		active := ConvertDType(GreaterThan(w, ZerosLike(w)), dtypes.Float32)
		return []*Node{nll, nll, ReduceAllSum(active), zero, zero, ReduceAllSum(Mul(entropy, active)), ReduceAllSum(active)}
	})
	l.apply = mlmodel.MustNewExec(backend, model.Store, func(scope *mlmodel.Scope, lr *Node) *Node {
		norm := l.applyGraph(scope.Store(), lr, adam)
		l.layOutOutputs(l.apply, lr.Graph())
		return norm
	})
	l.logp = mlmodel.MustNewExec(backend, model.Store, func(scope *mlmodel.Scope, ids, targets *Node) *Node {
		logp, _ := qwen3.TargetLogProbsOf(scope, cfg, ids, targets, temperature, opts)
		l.layOutOutputs(l.logp, ids.Graph())
		return logp
	})
	return l
}

// Shard runs the learner's graphs (the micro-batch's forward and backward
// pass, the optimizer step and the log-probs) on n devices of its backend as
// sharding says (layout.Data or layout.FSDP, see sharded): every micro-batch
// is split on its batch axis over the devices (padRows).
// n = 1 leaves the graphs on one device (GoMLX cannot compile a 1-device
// mesh). It must be called before the first step, and leaves the reference
// policy (WithReference) on one device.
func (l *Learner) Shard(n int, sharding string) error {
	if n <= 1 {
		return nil
	}
	if err := layout.CheckSpread(shardNames, sharding, n); err != nil {
		return err
	}
	if err := layout.CheckHave(shardNames, n, l.backend.NumDevices(), "the backend"); err != nil {
		return err
	}
	sh, err := newSharded(n, sharding == layout.FSDP)
	if err != nil {
		return err
	}
	if err := l.prepare(); err != nil {
		return err
	}
	if sh.fsdp {
		if err := l.shardVariables(sh); err != nil {
			return err
		}
	}
	for _, e := range []*mlmodel.Exec{l.grpo, l.sft, l.apply, l.logp} {
		// One output spec stands for all: GoMLX repeats the last. The outputs
		// are the changed variables first, then the graph's results; a nil
		// spec would crash in dtensor. Under fsdp the graphs lay their
		// outputs out themselves (layOutOutputs).
		e.AutoSharding(sh.mesh.DeviceMesh()).WithOutputShardingSpecs(sh.mesh.Replicated())
		if err := e.SetDefaultShardingSpec(sh.mesh.Replicated()); err != nil {
			return fmt.Errorf("grpo: num_devices %d: %w", n, err)
		}
	}
	batch := sh.mesh.Batch()
	l.grpo.WithInputShardingSpecs(batch) // a slice of inputs: the spec repeats
	l.sft.WithInputShardingSpecs(batch, batch, batch)
	l.apply.WithInputShardingSpecs(sh.mesh.Replicated())
	l.logp.WithInputShardingSpecs(batch, batch)
	l.sh = sh
	return nil
}

// Mesh is the device mesh the learner's graphs run on (nil on one device).
// A sampler on it (sampler.OnMesh) reads the weights as the learner holds
// them.
func (l *Learner) Mesh() *layout.Mesh {
	if l.sh == nil {
		return nil
	}
	return l.sh.mesh
}

// newSharded lays out n devices as a mesh of one replica, batches split
// over it, under fsdp the variables too (see sharded). It needs no device.
func newSharded(n int, fsdp bool) (*sharded, error) {
	mesh, err := layout.NewMesh(layout.OneReplica(n))
	if err != nil {
		return nil, fmt.Errorf("grpo: num_devices %d: %w", n, err)
	}
	return &sharded{mesh: mesh, fsdp: fsdp}, nil
}

// shardVariables gives every variable of the policy's store, the optimizer
// state created first, its fsdp sharding (layout.Mesh.FSDPSpec), once
// layout.CheckFSDP has found that every one splits.
func (l *Learner) shardVariables(sh *sharded) error {
	store := l.Model.Store
	var vars []layout.Variable
	for v := range store.IterVariables() {
		vars = append(vars, layout.Variable{Name: v.Path(), Dims: v.Shape().Dimensions})
	}
	if err := layout.CheckFSDP(shardNames, sh.mesh.Devices(), vars); err != nil {
		return err
	}
	for v := range store.IterVariables() {
		spec, err := sh.mesh.FSDPSpec(v.Shape().Dimensions)
		if err == nil {
			err = v.SetShardingSpec(spec)
		}
		if err != nil {
			return fmt.Errorf("grpo: sharding %s: %s: %w", layout.FSDP, v.Path(), err)
		}
	}
	return nil
}

// layOutOutputs, called last in each graph function, tells e how its
// outputs lie under fsdp, in the order model.Exec returns them: first the
// variables the graph changed, in the store's order, each sharded as it is,
// then the graph's results, replicated. Without fsdp it does nothing (every
// output is replicated).
func (l *Learner) layOutOutputs(e *mlmodel.Exec, g *Graph) {
	if l.sh == nil || !l.sh.fsdp {
		return
	}
	var specs []*distributed.ShardingSpec
	for v := range l.Model.Store.IterVariables() {
		if v.ChangedInGraph(g) {
			specs = append(specs, v.ShardingSpec())
		}
	}
	e.WithOutputShardingSpecs(append(specs, l.sh.mesh.Replicated())...)
}

// call runs e on args: on one device as they are, on several each split as
// specs say (the last spec repeating; a batch's rows must divide by the
// devices, see padRows), returning the first device's outputs (all are
// replicated).
func (l *Learner) call(e *mlmodel.Exec, specs []*distributed.ShardingSpec, args ...any) ([]*tensors.Tensor, error) {
	if l.sh == nil {
		return e.Call(args...)
	}
	sharded := make([]any, len(args))
	for i, a := range args {
		t, err := tensors.FromAnyValue(a)
		if err != nil {
			return nil, err
		}
		if sharded[i], err = dtensor.ShardTensor(specs[min(i, len(specs)-1)], t); err != nil {
			return nil, err
		}
	}
	out, err := e.Call(sharded...)
	if err != nil {
		return nil, err
	}
	return out[:len(out)/l.sh.mesh.Devices()], nil
}

// batchSpecs are the input specs of a graph whose inputs are all batches
// (nil on one device).
func (l *Learner) batchSpecs() []*distributed.ShardingSpec {
	if l.sh == nil {
		return nil
	}
	return []*distributed.ShardingSpec{l.sh.mesh.Batch()}
}

// WithReference gives the learner a frozen reference policy, whose log-probs
// Step hands to the KL penalty (and FlowRL's residual) where the sequences
// do not carry them. It returns l.
func (l *Learner) WithReference(ref *qwen3.Model, temperature float64) *Learner {
	l.ref = NewLearnerWith(l.backend, ref, LossConfig{}, AdamWConfig{}, temperature, l.opts)
	return l
}

// StepOptions say how Step turns sequences into one optimizer step.
type StepOptions struct {
	SFT          bool    // the negative log-likelihood of the sampled tokens (warm start) instead of the policy loss
	PerTokenLoss bool    // loss weights: the token mean over all sequences, else the mean of per-sequence means (TokenWeights)
	MicroBatch   int     // sequences per forward and backward pass (0: all at once)
	MaxTokens    int     // when positive: micro-batches packed by length, each at most MaxTokens padded tokens (tokenMicroBatches); MicroBatch is then ignored
	LR           float64 // learning rate
	// OnPolicy says that the weights are those the sequences' old log-probs
	// were computed with (the first step on recomputed log-probs): the loss
	// takes its own forward's log-probs as the old ones, so every ratio is
	// exactly 1 whatever the backend rounds differently between this graph
	// and LogProbs' (as verl's actor does on policy). The sequences'
	// LogProbs are then not read.
	OnPolicy bool
}

// Step takes one optimizer step on seqs: it sets their loss weights
// (TokenWeights) over all of seqs, cuts them into micro-batches
// (microBatches), pads each (packBatch) and sums their gradients (with the
// reference's log-probs when the KL penalty is on), then clips the gradients
// and applies AdamW. Since the weights span the step, how it is cut changes
// the loss and gradients only by float rounding. It returns the summed
// statistics and the gradient norm before clipping. A non-finite loss (the
// weights are then left as they were) or gradient norm gives an error wrapping
// ErrNonFinite. seqs are not modified.
func (l *Learner) Step(seqs []Sequence, o StepOptions) (StepStats, float64, error) {
	masks := make([][]float32, len(seqs))
	for i := range seqs {
		masks[i] = seqs[i].Mask
	}
	weighted := slices.Clone(seqs)
	for i, w := range TokenWeights(masks, o.PerTokenLoss) {
		weighted[i].Weights = w
	}
	var ss StepStats
	for _, part := range microBatches(weighted, o) {
		s, err := l.accumulate(part, o)
		if err != nil {
			return StepStats{}, 0, err
		}
		ss.Add(s)
	}
	if math.IsNaN(ss.Loss) || math.IsInf(ss.Loss, 0) {
		return ss, 0, fmt.Errorf("loss is %v: %w", ss.Loss, ErrNonFinite)
	}
	norm, err := l.Apply(o.LR)
	if err != nil {
		return ss, 0, err
	}
	if math.IsNaN(norm) || math.IsInf(norm, 0) {
		return ss, norm, fmt.Errorf("gradient norm is %v: %w", norm, ErrNonFinite)
	}
	return ss, norm, nil
}

// microBatches cuts one optimizer step's sequences into micro-batches: runs
// of o.MicroBatch sequences in order (all at once when it is 0), or with
// o.MaxTokens set, the token-budget packing of tokenMicroBatches. The loss
// weights must already be set, since they span the whole step.
func microBatches(seqs []Sequence, o StepOptions) [][]Sequence {
	var out [][]Sequence
	for _, rows := range microBatchRows(seqs, o) {
		part := make([]Sequence, len(rows))
		for j, i := range rows {
			part[j] = seqs[i]
		}
		out = append(out, part)
	}
	return out
}

// seqLengths returns the length of each sequence, prompt and response.
func seqLengths(seqs []Sequence) []int {
	out := make([]int, len(seqs))
	for i, s := range seqs {
		out[i] = len(s.Prompt) + len(s.Response)
	}
	return out
}

// prepare creates the optimizer state once, before the first graph that
// uses it (createOptimizerState), and with the host's optimizer moves the
// state of its weights there: a frozen reference policy, which never steps,
// holds none.
func (l *Learner) prepare() error {
	if l.ready {
		return nil
	}
	if err := createOptimizerState(l.Model.Store, l.vars, l.prec); err != nil {
		return err
	}
	if l.host != nil {
		if err := l.prepareHost(l.adam); err != nil {
			return fmt.Errorf("grpo: optimizer_cpu_offload: %w", err)
		}
	}
	l.ready = true
	return nil
}

// applyGraph builds the optimizer step on the device: the gradients summed in
// the accumulators, clipped by their global norm, and AdamW applied to the
// weights. On several devices it zeroes the accumulators; on one, Apply frees
// them after the step.
func (l *Learner) applyGraph(store *mlmodel.Store, lr *Node, adam AdamWConfig) *Node {
	return ApplyAdamW(store, l.vars, AccumulatedGradients(store, l.vars, lr.Graph(), l.sh != nil), lr, adam)
}

// freeAccumulators releases the device memory of the gradient accumulators
// between steps (on one device), so that they exist only inside a step:
// readyAccumulators makes them again, at zero, on the device.
func (l *Learner) freeAccumulators() error {
	if l.sh != nil {
		return nil
	}
	for _, v := range l.vars {
		if err := accumulator(l.Model.Store, v).Reset(); err != nil {
			return fmt.Errorf("grpo: free gradient accumulators: %w", err)
		}
	}
	return nil
}

// readyAccumulators creates the accumulators that freeAccumulators released,
// at zero on the device, by a graph (nothing moves from the host): on one
// device zeroAccumulators', compiled once, and then GoMLX's variable
// initialisation for any other variable without a value (it compiles a graph
// at each call that finds one).
func (l *Learner) readyAccumulators() error {
	accs := make([]*mlmodel.Variable, len(l.vars))
	missing := 0
	for i, v := range l.vars {
		if accs[i] = accumulator(l.Model.Store, v); !accs[i].HasValue() {
			missing++
		}
	}
	if missing == 0 {
		return nil
	}
	if l.sh == nil && missing == len(accs) {
		if err := l.zeroAccumulators(accs); err != nil {
			return err
		}
	}
	return l.Model.Store.InitializeVariables(l.backend, func(*mlmodel.Exec) error { return nil })
}

// zeroAccumulators sets accs, the accumulators of vars in order, to zeros
// made on the device by one graph, compiled at its first call (and again
// should the accumulators' shapes change).
func (l *Learner) zeroAccumulators(accs []*mlmodel.Variable) error {
	want := make([]shapes.Shape, len(accs))
	for i, a := range accs {
		want[i] = a.Shape()
	}
	if l.zeros == nil || !slices.EqualFunc(want, l.zeroed, shapes.Shape.Equal) {
		e, err := NewExec(l.backend, func(g *Graph) []*Node {
			out := make([]*Node, len(want))
			for i, s := range want {
				out[i] = Zeros(g, s)
			}
			return out
		})
		if err != nil {
			return fmt.Errorf("grpo: gradient accumulators: %w", err)
		}
		if l.zeros != nil {
			l.zeros.Finalize()
		}
		l.zeros, l.zeroed = e, want
	}
	zeros, err := l.zeros.Call()
	if err != nil {
		return fmt.Errorf("grpo: gradient accumulators: %w", err)
	}
	for i, a := range accs {
		if err := a.SetValue(zeros[i]); err != nil {
			return fmt.Errorf("grpo: gradient accumulator %s: %w", a.Path(), err)
		}
	}
	return nil
}

// accumulate adds one micro-batch's gradients to the accumulators.
func (l *Learner) accumulate(seqs []Sequence, o StepOptions) (StepStats, error) {
	b, err := packBatch(padRows(seqs, l.devices()))
	if err != nil {
		return StepStats{}, err
	}
	if o.SFT {
		return l.accumulateSFT(b)
	}
	if o.OnPolicy {
		b.OnPolicy = make([]float32, len(b.IDs))
		for i := range b.OnPolicy {
			b.OnPolicy[i] = 1
		}
	}
	if l.ref != nil && b.RefLogProbs == nil {
		if b.RefLogProbs, err = l.ref.LogProbs(b.IDs, b.Targets); err != nil {
			return StepStats{}, err
		}
	}
	return l.accumulatePolicy(b)
}

// padRows makes a micro-batch's rows split over devices (layout.PadRows),
// appending copies of its first sequence masked out: weighing nothing in
// the loss and counting in no statistic, they change nothing. (A warm-start
// step whose tool call failed, or a micro-batch packed by tokens, may have
// any row count.) When the rows already split (one device among them) it
// returns seqs.
func padRows(seqs []Sequence, devices int) []Sequence {
	return layout.PadRows(seqs, devices, func() Sequence {
		pad := seqs[0]
		pad.Mask = make([]float32, len(pad.Response))
		pad.Weights = pad.Mask
		return pad
	})
}

// devices is the number of devices the learner's graphs run on.
func (l *Learner) devices() int {
	if l.sh == nil {
		return 1
	}
	return l.sh.mesh.Devices()
}

// accumulatePolicy runs forward and backward on one micro-batch of GRPO data and adds
// its gradients to the accumulators.
func (l *Learner) accumulatePolicy(b Batch) (StepStats, error) {
	if err := l.prepare(); err != nil {
		return StepStats{}, err
	}
	if err := l.readyAccumulators(); err != nil {
		return StepStats{}, err
	}
	ref := b.RefLogProbs
	if ref == nil {
		ref = b.OldLogProbs // unused by the graph
	}
	onPolicy := b.OnPolicy
	if onPolicy == nil {
		onPolicy = make([]float32, len(b.IDs))
	}
	logZ := b.LogZ
	if logZ == nil {
		logZ = make([]float32, len(b.IDs))
	}
	args := []any{b.IDs, b.Targets, b.OldLogProbs, ref, b.Advantages, b.Weights, b.ISWeights, onPolicy, logZ}
	if l.flowHead {
		promptLens := b.PromptLens
		if promptLens == nil {
			promptLens = make([]float32, len(b.IDs))
		}
		args = append(args, promptLens)
	}
	if b.TokenAdvantages != nil {
		args = append(args, b.TokenAdvantages)
	}
	out, err := l.call(l.grpo, l.batchSpecs(), args...)
	if err != nil {
		return StepStats{}, fmt.Errorf("grpo: train step: %w", err)
	}
	return statsFrom(out)
}

// accumulateSFT adds the gradients of the weighted negative log-likelihood of
// the targets (supervised warm start) to the accumulators.
func (l *Learner) accumulateSFT(b Batch) (StepStats, error) {
	if err := l.prepare(); err != nil {
		return StepStats{}, err
	}
	if err := l.readyAccumulators(); err != nil {
		return StepStats{}, err
	}
	out, err := l.call(l.sft, l.batchSpecs(), b.IDs, b.Targets, b.Weights)
	if err != nil {
		return StepStats{}, fmt.Errorf("grpo: warm-start step: %w", err)
	}
	return statsFrom(out)
}

// Apply clips the accumulated gradients, takes one AdamW step with learning rate
// lr (with OffloadOptimizer, that of some weights on the host), empties the
// accumulators and returns the gradient norm before clipping. On one device
// the step runs weight by weight (groupedUpdate), on several as one graph.
func (l *Learner) Apply(lr float64) (float64, error) {
	if err := l.prepare(); err != nil {
		return 0, err
	}
	var norm float64
	var err error
	switch {
	case l.host != nil:
		norm, err = l.host.step(l.Model.Store, lr)
	case l.sh != nil:
		norm, err = l.applyWhole(lr)
	default:
		if l.grouped == nil {
			l.grouped = newGroupedUpdate(l.backend, l.Model.Store, l.vars, l.vars, l.adam)
		}
		norm, _, err = l.grouped.step(lr)
	}
	if err != nil {
		return 0, err
	}
	return norm, l.freeAccumulators()
}

// applyWhole runs the optimizer step as one graph (applyGraph) and returns
// the gradient norm before clipping.
func (l *Learner) applyWhole(lr float64) (float64, error) {
	var specs []*distributed.ShardingSpec
	if l.sh != nil {
		specs = []*distributed.ShardingSpec{l.sh.mesh.Replicated()}
	}
	out, err := l.call(l.apply, specs, float32(lr))
	if err != nil {
		return 0, fmt.Errorf("grpo: optimizer step: %w", err)
	}
	return float64(out[0].Value().(float32)), nil
}

// LogProbs returns the per-position log-probs of the targets under the current
// weights.
func (l *Learner) LogProbs(ids, targets [][]int32) ([][]float32, error) {
	rows := len(ids)
	// rows repeated to split over the devices, their log-probs dropped
	ids = layout.PadRows(ids, l.devices(), func() []int32 { return ids[0] })
	targets = layout.PadRows(targets, l.devices(), func() []int32 { return targets[0] })
	out, err := l.call(l.logp, l.batchSpecs(), ids, targets)
	if err != nil {
		return nil, fmt.Errorf("grpo: log-probs: %w", err)
	}
	return out[0].Value().([][]float32)[:rows], nil
}

// SequenceLogProbs returns, for each sequence, the log-probs of its response
// tokens under the current weights, computed by the training graph (one
// entry per response token, 0 where Mask is 0), in micro-batches cut as o
// says.
func (l *Learner) SequenceLogProbs(seqs []Sequence, o StepOptions) ([][]float32, error) {
	out := make([][]float32, len(seqs))
	for _, rows := range microBatchRows(seqs, o) {
		part := make([]Sequence, len(rows))
		for j, i := range rows {
			part[j] = seqs[i]
			part[j].Weights = seqs[i].Mask // packBatch lays weights out too
		}
		b, err := packBatch(part)
		if err != nil {
			return nil, err
		}
		logp, err := l.LogProbs(b.IDs, b.Targets)
		if err != nil {
			return nil, err
		}
		for j, s := range part {
			row := make([]float32, len(s.Response))
			for k := range s.Response {
				if s.Mask[k] != 0 {
					row[k] = logp[j][len(s.Prompt)+k-1]
				}
			}
			out[rows[j]] = row
		}
	}
	return out, nil
}

// microBatchRows is microBatches as indices into seqs.
func microBatchRows(seqs []Sequence, o StepOptions) [][]int {
	if o.MaxTokens > 0 {
		return tokenMicroBatches(seqLengths(seqs), o.MaxTokens)
	}
	micro := o.MicroBatch
	if micro <= 0 {
		micro = len(seqs)
	}
	var out [][]int
	for m := 0; m < len(seqs); m += micro {
		var rows []int
		for i := m; i < min(m+micro, len(seqs)); i++ {
			rows = append(rows, i)
		}
		out = append(out, rows)
	}
	return out
}

func statsFrom(out []*tensors.Tensor) (StepStats, error) {
	v := make([]float64, len(out))
	for i, t := range out {
		v[i] = float64(t.Value().(float32))
	}
	return StepStats{Loss: v[0], PGLoss: v[1], Tokens: v[2], ClipTokens: v[3], KLSum: v[4], EntropySum: v[5], RatioSum: v[6]}, nil
}

// resetOptimizer sets the AdamW moments and step counter to zero (between the
// warm start and GRPO, whose learning rates and loss scales differ), on the
// device and, with the host's optimizer, on the host.
func (l *Learner) resetOptimizer() error {
	stores := []*mlmodel.Store{l.Model.Store}
	if l.host != nil {
		stores = append(stores, l.host.store)
	}
	for _, store := range stores {
		for v := range store.IterVariables() {
			if strings.HasPrefix(v.Scope(), AdamScope) {
				if err := v.SetValue(tensors.FromShape(v.Shape())); err != nil {
					return fmt.Errorf("grpo: reset optimizer: %w", err)
				}
			}
		}
	}
	return nil
}

// save writes the learner's state, the policy's weights and the optimizer
// moments, with tokenizerJSON and st as the checkpoint folder dir (see
// SaveCheckpoint) with the extra files, marking the phase once the
// temporary folder exists.
func (l *Learner) save(dir string, tokenizerJSON []byte, st TrainState, marks *PhaseMarks, extra ...extraFile) error {
	return saveCheckpoint(dir, l.Model, l.stateVariables(), tokenizerJSON, st, marks, extra...)
}

// params is the number of the policy's parameters.
func (l *Learner) params() int64 { return l.Model.Config.Params() }
