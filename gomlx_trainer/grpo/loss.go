package grpo

import (
	"fmt"

	. "github.com/gomlx/gomlx/core/graph" //nolint:staticcheck // graph-building code reads better unqualified, as in GoMLX's own examples
)

// LossConfig holds the knobs of PolicyLoss.
type LossConfig struct {
	EpsLow        float64 // ratio clipped below at 1 - EpsLow
	EpsHigh       float64 // ratio clipped above at 1 + EpsHigh
	KLCoef        float64 // weight of the KL penalty; 0 turns it off (RefLogProbs may then be nil)
	KLType        string  // "k1", "k2", "k3" or "low_var_kl" (k3 clamped to [-10, 10])
	EntropyCoef   float64 // weight of the entropy bonus; 0 turns it off
	SequenceRatio bool    // GSPO: one importance ratio per sequence, the geometric mean of its tokens' ratios
	FlowRL        bool    // FlowRL: FlowRLLoss's flow-balance loss instead of PPO-clip (EpsLow/EpsHigh clip its sequence ratio)
	FlowBeta      float64 // FlowRL's β, the weight of the advantage in the residual
	FlowLogZHead  int     // FlowRL: > 0, log Z is the learned head's (FlowRLHeadLogZ, of this many blocks) and keeps its gradient; 0: LogZ is a constant input
}

// LossInputs are the per-token tensors of one (micro-)batch, all [batch, seq]
// except Advantages, which is [batch]. Position t of LogProbs is the log-prob of
// the token at t+1 given the tokens up to t; Weights is zero wherever that token
// was not sampled by the policy (prompt, tool responses, template glue, padding).
// PPO-clip's advantage of token t of sequence i is Advantages[i] +
// TokenAdvantages[i][t] (the latter 0 when nil).
type LossInputs struct {
	LogProbs    *Node // current policy, differentiable
	OldLogProbs *Node // the old policy of the ratio: the sampler's log-probs, or the training graph's recomputed before the rollout's updates
	RefLogProbs *Node // frozen reference policy; only read when KLCoef > 0 or with FlowRL
	Entropy     *Node // per-token entropy of the current policy; only read when EntropyCoef > 0, may be nil otherwise
	Advantages  *Node // one per sequence
	Weights     *Node // per-token weight of the loss: see TokenWeights
	ISWeights   *Node // per-token importance weights of the policy-gradient term (truncated importance sampling); nil: 1
	LogZ        *Node // FlowRL: log Z(x) of each sequence's prompt, [batch]; only read with FlowRL; differentiable with FlowLogZHead
	// TokenAdvantages, when not nil, add a per-token advantage to the
	// sequence's (on-policy distillation: distill_coef·(log π_teacher −
	// log π_student) at each sampled token, 0 elsewhere); no gradient flows
	// into it.
	TokenAdvantages *Node
}

// LossOutputs are scalars. Loss is what the optimizer minimises. The sums are
// over the tokens with a non-zero weight, so that statistics of several
// micro-batches add up: divide by Tokens to get a mean.
type LossOutputs struct {
	Loss       *Node // Σ w·(pg + KLCoef·kl − EntropyCoef·entropy)
	PGLoss     *Node // Σ w·pg
	Tokens     *Node // number of tokens with w > 0
	ClipTokens *Node // tokens whose clipped term was the larger one (the gradient is cut there)
	KLSum      *Node // Σ kl over the tokens (0 when KLCoef is 0)
	RatioSum   *Node // Σ π/π_old over the tokens
}

// PolicyLoss builds the PPO-clip policy-gradient loss of GRPO/DAPO:
//
//	ratio = exp(logp − logp_old)
//	A_t   = A + A_tok,t                (A_tok: TokenAdvantages, 0 when nil)
//	pg    = max(−A_t·ratio, −A_t·clip(ratio, 1−ε_low, 1+ε_high))
//	loss  = Σ_t w_t · (pg_t + β·kl_t − c·entropy_t)
//
// where kl is k1 = logp − logp_ref, k2 = (logp − logp_ref)²/2 or k3 =
// exp(logp_ref − logp) − (logp_ref − logp) − 1. With TokenWeights' token-mean
// weights the loss is the mean over all response tokens of the global batch;
// with sequence-mean weights it is the mean of the per-sequence means.
//
// With SequenceRatio (GSPO) every token of sequence i has the ratio
// s_i = exp(Σ_t (logp − logp_old) / n_i) over its n_i sampled tokens, so pg is
// one value per sequence and the gradient reaches each token as s_i/n_i; with
// sequence-mean weights the loss is GSPO's mean over sequences. ISWeights,
// when given, multiply pg token by token (truncated importance sampling).
// With FlowRL it returns FlowRLLoss instead.
func PolicyLoss(in LossInputs, cfg LossConfig) LossOutputs {
	if cfg.FlowRL {
		return FlowRLLoss(in, cfg)
	}
	logp := in.LogProbs
	dtype := logp.DType()
	g := logp.Graph()
	b, t := logp.Shape().Dim(0), logp.Shape().Dim(1)
	in.OldLogProbs.AssertDims(b, t)
	in.Weights.AssertDims(b, t)
	in.Advantages.AssertDims(b)

	w := ConvertDType(in.Weights, dtype)
	adv := ExpandAxes(ConvertDType(in.Advantages, dtype), -1) // [b, 1]
	if in.TokenAdvantages != nil {
		in.TokenAdvantages.AssertDims(b, t)
		adv = Add(adv, StopGradient(ConvertDType(in.TokenAdvantages, dtype))) // [b, t]
	}
	oldLogp := StopGradient(ConvertDType(in.OldLogProbs, dtype))
	active := ConvertDType(GreaterThan(w, ZerosLike(w)), dtype)

	ratio := Exp(Sub(logp, oldLogp))
	if cfg.SequenceRatio {
		ratio = sequenceRatio(logp, oldLogp, active)
	}
	pg1 := Neg(Mul(adv, ratio))
	pg2 := Neg(Mul(adv, ClipScalar(ratio, 1-cfg.EpsLow, 1+cfg.EpsHigh)))
	pg := Max(pg1, pg2)
	clipped := Mul(ConvertDType(GreaterThan(pg2, pg1), dtype), active)
	if in.ISWeights != nil {
		in.ISWeights.AssertDims(b, t)
		pg = Mul(pg, StopGradient(ConvertDType(in.ISWeights, dtype)))
	}

	perToken := pg
	klSum := ScalarZero(g, dtype)
	if cfg.KLCoef != 0 {
		if in.RefLogProbs == nil {
			panic("grpo: PolicyLoss: KLCoef > 0 needs RefLogProbs")
		}
		kl := KL(logp, StopGradient(ConvertDType(in.RefLogProbs, dtype)), cfg.KLType)
		perToken = Add(perToken, MulScalar(kl, cfg.KLCoef))
		klSum = ReduceAllSum(Mul(kl, active))
	}
	if cfg.EntropyCoef != 0 {
		if in.Entropy == nil {
			panic("grpo: PolicyLoss: EntropyCoef > 0 needs Entropy")
		}
		perToken = Sub(perToken, MulScalar(ConvertDType(in.Entropy, dtype), cfg.EntropyCoef))
	}
	return LossOutputs{
		Loss:       ReduceAllSum(Mul(w, perToken)),
		PGLoss:     ReduceAllSum(Mul(w, pg)),
		Tokens:     ReduceAllSum(active),
		ClipTokens: ReduceAllSum(clipped),
		KLSum:      klSum,
		RatioSum:   ReduceAllSum(Mul(StopGradient(ratio), active)),
	}
}

// sequenceRatio is GSPO's ratio, broadcast to every token of its sequence:
// exp of the mean of logp − logp_old over the sequence's active tokens.
func sequenceRatio(logp, oldLogp, active *Node) *Node {
	b, t := logp.Shape().Dim(0), logp.Shape().Dim(1)
	n := MaxScalar(ReduceSum(active, -1), 1)
	mean := Div(ReduceSum(Mul(Sub(logp, oldLogp), active), -1), n)
	return BroadcastToDims(ExpandAxes(Exp(mean), -1), b, t)
}

// KL returns the per-token estimate of KL(π‖π_ref) from log-probs of the sampled
// tokens: "k1" is logp − ref, "k2" is (logp − ref)²/2, "k3" is exp(ref − logp) −
// (ref − logp) − 1 (always ≥ 0, lower variance), "low_var_kl" is k3 clamped to
// [-10, 10] as in slime.
func KL(logp, ref *Node, kind string) *Node {
	switch kind {
	case "k1":
		return Sub(logp, ref)
	case "k2":
		d := Sub(logp, ref)
		return MulScalar(Mul(d, d), 0.5)
	case "k3", "low_var_kl":
		d := Sub(ref, logp)
		k3 := Sub(Sub(Exp(d), d), OnesLike(d))
		if kind == "low_var_kl" {
			k3 = ClipScalar(k3, -10, 10)
		}
		return k3
	}
	panic(fmt.Sprintf("grpo: KL: unknown kind %q", kind))
}
