package grpo

import (
	"fmt"
	"slices"

	. "github.com/gomlx/gomlx/core/graph" //nolint:staticcheck // graph-building code reads better unqualified
)

// FlowRL (Zhu et al. 2025, "FlowRL: Matching Reward Distributions for LLM
// Reasoning", arXiv 2509.15207) trains the policy towards the distribution
// π_ref(y|x)·exp(β·r̂(x,y))/Z(x) rather than towards the highest reward: it
// minimises the squared flow-balance (trajectory-balance) residual of each
// sampled sequence. The reference implementations are the authors' verl fork
// (github.com/Xuekai-Zhu/FlowRL) and verl's recipe (verl-project/verl-recipe,
// flowrl/flowrl_actor.py); this one follows the paper where they differ (see
// FlowRLLoss).

// flowLogRatioBound bounds Σ_t (logp − logp_old) of a sequence before its
// exponential, so that the sequence ratio of a long sequence stays finite in
// float32 and the ratio statistic with it; the clipped weight is the same
// for any clip range inside [e^−20, e^20].
const flowLogRatioBound = 20

// FlowRLLoss builds FlowRL's loss on one (micro-)batch. For sequence i with
// n_i loss tokens (Weights > 0: sampled tokens only, tool responses and
// padding excluded):
//
//	δ_i = log Z_i + (1/n_i) Σ_t logp − β·A_i − (1/n_i) Σ_t logp_ref
//	w_i = sg(clip(exp(Σ_t (logp − logp_old)), 1 − ε_low, 1 + ε_high))
//	loss = Σ_i s_i · w_i · δ_i²,   s_i = Σ_t Weights_i,t
//
// where A_i is the group-normalised reward r̂ (in.Advantages), β is
// cfg.FlowBeta, ε_low/ε_high are cfg.EpsLow/EpsHigh, log Z_i is in.LogZ
// (the same for every sequence of a prompt; see VarGradLogZ) and sg stops
// the gradient. The importance weight is the paper's: the ratio of the whole
// sequence's probabilities (the product of its tokens' ratios), clipped and
// detached. (The authors' fork computes the clipped weight but multiplies by
// the unclipped one; verl's recipe clamps it at 10 from above only.) With
// TokenWeights' sequence-mean weights s_i = 1/N, so the loss is the mean
// over the step's N sequences, as in the paper; the trainer uses those for
// FlowRL whatever calculate_per_token_loss says.
//
// The gradient reaches logp only through δ_i's mean log-prob: d loss/d logp
// at a loss token of i is 2·s_i·w_i·δ_i/n_i. logp_ref, the advantages and w
// carry none, and log Z none unless cfg.FlowLogZHead is set (the learned
// head's log Z, whose gradient is 2·s_i·w_i·δ_i). A sequence without loss
// tokens adds nothing.
//
// The outputs are LossOutputs': PGLoss is Loss (no KL or entropy term is
// added: FlowRL's residual already holds log π_ref), ClipTokens counts the
// loss tokens of sequences whose ratio was clipped, RatioSum adds each
// sequence's ratio once per loss token, KLSum is 0.
func FlowRLLoss(in LossInputs, cfg LossConfig) LossOutputs {
	logp := in.LogProbs
	dtype := logp.DType()
	g := logp.Graph()
	b, t := logp.Shape().Dim(0), logp.Shape().Dim(1)
	in.OldLogProbs.AssertDims(b, t)
	in.Weights.AssertDims(b, t)
	in.Advantages.AssertDims(b)
	if in.RefLogProbs == nil || in.LogZ == nil {
		panic("grpo: FlowRLLoss needs RefLogProbs and LogZ")
	}
	in.RefLogProbs.AssertDims(b, t)
	in.LogZ.AssertDims(b)

	w := ConvertDType(in.Weights, dtype)
	active := ConvertDType(GreaterThan(w, ZerosLike(w)), dtype)
	n := ReduceSum(active, -1)      // [b]: loss tokens per sequence
	seqWeight := ReduceSum(w, -1)   // [b]: s_i
	perSeq := func(x *Node) *Node { // [b]: Σ_t x over the loss tokens
		return ReduceSum(Mul(x, active), -1)
	}
	meanOf := func(x *Node) *Node { return Div(perSeq(x), MaxScalar(n, 1)) }

	oldLogp := StopGradient(ConvertDType(in.OldLogProbs, dtype))
	refLogp := StopGradient(ConvertDType(in.RefLogProbs, dtype))
	adv := StopGradient(ConvertDType(in.Advantages, dtype))
	logZ := ConvertDType(in.LogZ, dtype)
	if cfg.FlowLogZHead == 0 { // the learned head's log Z keeps its gradient: δ² trains the head
		logZ = StopGradient(logZ)
	}

	delta := Sub(Add(logZ, meanOf(logp)), Add(MulScalar(adv, cfg.FlowBeta), meanOf(refLogp)))
	ratio := StopGradient(Exp(ClipScalar(perSeq(Sub(logp, oldLogp)), -flowLogRatioBound, flowLogRatioBound)))
	clipped := ClipScalar(ratio, 1-cfg.EpsLow, 1+cfg.EpsHigh)
	loss := ReduceAllSum(Mul(Mul(seqWeight, clipped), Mul(delta, delta)))
	wasClipped := ConvertDType(NotEqual(clipped, ratio), dtype)
	return LossOutputs{
		Loss:       loss,
		PGLoss:     loss,
		Tokens:     ReduceAllSum(n),
		ClipTokens: ReduceAllSum(Mul(wasClipped, n)),
		KLSum:      ScalarZero(g, dtype),
		RatioSum:   ReduceAllSum(Mul(ratio, n)),
	}
}

// VarGradLogZ returns, for each of seqs (laid out group after group,
// groupSize consecutive sequences sharing a prompt), the VarGrad estimate of
// its prompt's log Z (Richter et al. 2020; for LLM trajectory balance,
// Bartoldson et al. 2025, arXiv 2503.18929): the mean over the group's
// sequences that have loss tokens (Mask > 0) of
//
//	−[(1/n) Σ_t logp_old − β·A − (1/n) Σ_t logp_ref]
//
// with logp_old the sequences' LogProbs, logp_ref their RefLogProbs and A
// their Advantage. A sequence without loss tokens gets its group's value (0
// if none of the group has any). The trainer hands it the sequences as
// correct leaves them, so logp_old is the old log-probs of the loss's ratio
// (see flowPartition).
//
// The estimate is a constant of the loss graph: its gradient is stopped.
// Where the loss's log-probs are logp_old, δ_i is the residual minus its
// group mean, so Σ_group δ_i = 0 and w_i = 1; the gradient of Σ δ_i²
// through log Z would be −2·Σ δ_i · d(mean residual) = 0, and the stopped
// estimate gives the gradient of the group's variance of the residual
// exactly. On a rollout's later steps it is the estimate at the rollout's
// old policy, held while the policy moves, and the clipped ratios weigh the
// residuals unequally: there it is a baseline, no longer the exact variance.
// One optimizer step per rollout (global_batch_size equal to
// rollout_batch_size × n_samples_per_prompt) keeps it exact.
//
// It returns an error if len(seqs) is not a multiple of groupSize, if a
// group's sequences do not share their prompt (the layout is not whole
// groups, and a log Z would mix prompts), or if a sequence lacks the
// log-probs of its loss tokens.
func VarGradLogZ(seqs []Sequence, groupSize int, beta float64) ([]float64, error) {
	if groupSize < 1 || len(seqs)%groupSize != 0 {
		return nil, fmt.Errorf("grpo: VarGradLogZ: %d sequences do not make whole groups of %d", len(seqs), groupSize)
	}
	out := make([]float64, len(seqs))
	for start := 0; start < len(seqs); start += groupSize {
		logZ, err := groupLogZ(seqs[start:start+groupSize], start, beta)
		if err != nil {
			return nil, err
		}
		for i := start; i < start+groupSize; i++ {
			out[i] = logZ
		}
	}
	return out, nil
}

// groupLogZ is VarGradLogZ's estimate for one group, whose first sequence
// is the first-th of the step's (for the errors).
func groupLogZ(group []Sequence, first int, beta float64) (float64, error) {
	var sum float64
	var count int
	for j, s := range group {
		if !slices.Equal(s.Prompt, group[0].Prompt) {
			return 0, fmt.Errorf("grpo: VarGradLogZ: sequence %d has another prompt than sequence %d, the first of its group of %d: the sequences are not laid out in whole groups",
				first+j, first, len(group))
		}
		r, ok, err := flowResidual(s, beta)
		if err != nil {
			return 0, fmt.Errorf("grpo: VarGradLogZ: sequence %d: %w", first+j, err)
		}
		if ok {
			sum += r
			count++
		}
	}
	if count == 0 {
		return 0, nil
	}
	return -sum / float64(count), nil
}

// flowResidual returns s's residual without log Z, (1/n) Σ_t logp_old −
// β·A − (1/n) Σ_t logp_ref over its n loss tokens, and false when it has
// none. It returns an error when LogProbs or RefLogProbs does not cover Mask.
func flowResidual(s Sequence, beta float64) (float64, bool, error) {
	switch {
	case s.RefLogProbs == nil:
		return 0, false, fmt.Errorf("no reference log-probs")
	case len(s.LogProbs) < len(s.Mask) || len(s.RefLogProbs) < len(s.Mask):
		return 0, false, fmt.Errorf("%d old and %d reference log-probs for %d mask entries", len(s.LogProbs), len(s.RefLogProbs), len(s.Mask))
	}
	var lp, ref, n float64
	for k, m := range s.Mask {
		if m > 0 {
			lp += float64(s.LogProbs[k])
			ref += float64(s.RefLogProbs[k])
			n++
		}
	}
	if n == 0 {
		return 0, false, nil
	}
	return lp/n - beta*s.Advantage - ref/n, true, nil
}

// flowPartition prepares a rollout's kept sequences for FlowRL's loss: it
// computes their reference log-probs once (the frozen initial policy, in the
// micro-batches of the steps that train on them, as correct cuts them) and
// each prompt's log Z as cfg.FlowRLLogZ says (vargrad: VarGradLogZ over the
// whole group, which a step may split; head: none here, the loss graph's
// head computes it), and returns copies of seqs that carry both.
//
// log Z is taken from the sequences' LogProbs as correct leaves them, which
// are the old log-probs of the loss's ratio. With use_rollout_logprobs false
// (the default) they are the training graph's, recomputed at the weights of
// the rollout's first update; that step's loss takes its own forward's
// instead (StepOptions.OnPolicy), equal to them bit for bit on the Go
// backend and to the last bits under XLA, so there each group's residuals
// sum to 0 up to that rounding and every w is 1. With use_rollout_logprobs
// they are the sampler's on every step: the first step's ratios are then not
// all 1, and each group's residuals sum to Σ_i (mean log π − mean log
// π_sampler), the sampler/trainer mismatch, rather than 0.
func (t *trainer) flowPartition(seqs []Sequence) ([]Sequence, error) {
	cfg := t.cfg
	out, err := t.withReferenceLogProbs(seqs, "advantage_estimator flowrl")
	if err != nil {
		return nil, err
	}
	if cfg.flowRLHead() {
		return out, nil // the loss graph's head computes log Z; Sequence.LogZ stays 0
	}
	logZ, err := VarGradLogZ(out, cfg.NSamplesPerPrompt, cfg.FlowRLBeta)
	if err != nil {
		return nil, err
	}
	for i, z := range logZ {
		out[i].LogZ = z
	}
	return out, nil
}

// withReferenceLogProbs returns copies of seqs with the frozen reference
// policy's log-probs of their response tokens (RefLogProbs), computed in the
// micro-batches of the optimizer steps that train on them; what names the
// recipe's key that needs them, for the error when there is no reference.
func (t *trainer) withReferenceLogProbs(seqs []Sequence, what string) ([]Sequence, error) {
	if t.learner.ref == nil {
		return nil, fmt.Errorf("grpo: %s: no reference policy", what)
	}
	out := make([]Sequence, 0, len(seqs))
	for _, part := range stepParts(seqs, t.cfg.GlobalBatchSize) {
		ref, err := t.learner.ref.SequenceLogProbs(part, t.stepOptions(0))
		if err != nil {
			return nil, err
		}
		for i, s := range part {
			s.RefLogProbs = ref[i]
			out = append(out, s)
		}
	}
	return out, nil
}
