package grpo

// Implicit process rewards (PRIME: Cui et al. 2025, "Process Reinforcement
// through Implicit Rewards", arXiv 2502.01456), process_reward: implicit.
//
// An implicit PRM π_φ, a second copy of the initial policy, gives each
// sampled token t of a response y the reward
//
//	r_φ(y_t) = β · (log π_φ(y_t | y_<t) − log π_ref(y_t | y_<t))
//
// with π_ref the frozen initial policy, so that the response's implicit
// outcome reward is their sum, r_φ(y) = Σ_t r_φ(y_t). The PRM learns online
// from the outcome labels alone, with the cross-entropy of σ(r_φ(y)) against
// the label (the reward is positive: 1, else 0), one optimizer step per
// policy step's samples before the policy's steps, and the rewards are read
// from the updated PRM (the paper's Algorithm 1). The policy's per-token
// advantage (ImplicitAdvantages) is the return of the process rewards and
// the outcome reward, each with a leave-one-out (RLOO) baseline over the
// prompt's group, entering the PPO-clip loss as TokenAdvantages.
//
// Tool responses (Mask 0) get no process reward, no advantage and no
// gradient, in the policy's loss and in the PRM's.

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"

	"github.com/gomlx/compute"
	"github.com/gomlx/compute/dtypes"
	. "github.com/gomlx/gomlx/core/graph" //nolint:staticcheck // graph-building code reads better unqualified
	mlmodel "github.com/gomlx/gomlx/ml/model"

	"github.com/mathrl/mathrl/gomlx_trainer/qwen3"
)

// prmFile is the checkpoint file holding the implicit PRM: its weights and
// optimizer state, each tensor named by its store path.
const prmFile = "prm.safetensors"

// ProcessRewards lists the process_reward values: none, or implicit (PRIME).
func ProcessRewards() []string { return []string{"none", "implicit"} }

// ImplicitPRMLoss builds the PRM's loss on a micro-batch: logp and ref
// [b, t] are the PRM's and the reference's log-probs of the targets, mask
// [b, t] weighs the positions that score a sampled token (1) or not (0),
// labels [b] are the outcome labels (1 correct, 0 not) and rowWeights [b]
// each row's share of the step's mean (1/N for N sequences; 0 for a padding
// row). With s = β·Σ_t mask·(logp − ref), the row's implicit outcome reward,
// the loss is Σ_b rowWeights·BCE(σ(s), label), written as
// label·softplus(−s) + (1 − label)·softplus(s) to stay finite. It also
// returns the number of rows (of non-zero weight) whose σ(s) falls on their
// label's side of ½.
func ImplicitPRMLoss(logp, ref, mask, labels, rowWeights *Node, beta float64) (loss, correct *Node) {
	f32 := func(x *Node) *Node { return ConvertDType(x, dtypes.Float32) }
	logp, ref, mask, labels, rowWeights = f32(logp), f32(ref), f32(mask), f32(labels), f32(rowWeights)
	s := MulScalar(ReduceSum(Mul(mask, Sub(logp, ref)), -1), beta) // [b]
	one := OnesLike(labels)
	bce := Add(Mul(labels, Softplus(Neg(s))), Mul(Sub(one, labels), Softplus(s)))
	loss = ReduceAllSum(Mul(rowWeights, bce))
	predicted := ConvertDType(GreaterThan(s, ZerosLike(s)), dtypes.Float32)
	right := Sub(one, Abs(Sub(predicted, labels)))
	active := ConvertDType(GreaterThan(rowWeights, ZerosLike(rowWeights)), dtypes.Float32)
	return loss, ReduceAllSum(Mul(active, right))
}

// implicitPRM is PRIME's implicit PRM: a policy-shaped model with its own
// AdamW state (a Learner whose policy graphs never run) and its loss graph.
type implicitPRM struct {
	learner *Learner
	loss    *mlmodel.Exec // (ids, targets, ref, mask, labels, rowWeights) -> (loss, correct)
	beta    float64
}

// prmStats are the PRM's update on one rollout: the mean cross-entropy and
// the fraction of sequences whose implicit outcome reward had the label's
// sign, before the update, and the mean process reward per sampled token
// after it.
type prmStats struct {
	loss, accuracy, rewardMean float64
}

// newImplicitPRM builds the PRM of the recipe: the initial policy
// (newPolicy, as the reference is), or with resumeDir the PRM saved in that
// checkpoint.
func newImplicitPRM(cfg Config, b compute.Backend, resumeDir string) (*implicitPRM, error) {
	model, err := newPolicy(cfg)
	if err != nil {
		return nil, err
	}
	if resumeDir != "" {
		path := filepath.Join(resumeDir, prmFile)
		if err := readPRM(path, model.Store); err != nil {
			return nil, fmt.Errorf("grpo: checkpoint %s: %w", path, err)
		}
	}
	p := &implicitPRM{learner: NewLearnerWith(b, model, lossConfig(cfg), adamConfig(cfg), cfg.RolloutTemperature, modelOptions(cfg)),
		beta: cfg.PRMBeta}
	l := p.learner
	p.loss = mlmodel.MustNewExec(b, model.Store, func(scope *mlmodel.Scope, in []*Node) []*Node {
		ids, targets, ref, mask, labels, rows := in[0], in[1], in[2], in[3], in[4], in[5]
		logp, _ := qwen3.TargetLogProbsOf(scope, model.Config, ids, targets, cfg.RolloutTemperature, modelOptions(cfg))
		loss, correct := ImplicitPRMLoss(logp, ref, mask, labels, rows, p.beta)
		AccumulateGradients(scope.Store(), l.vars, loss)
		l.layOutOutputs(p.loss, ids.Graph())
		return []*Node{loss, correct}
	})
	return p, nil
}

// update takes one optimizer step of the PRM at learning rate lr on seqs,
// which carry their reference log-probs, in the micro-batches o cuts, and
// returns the summed loss and correct count of the step.
func (p *implicitPRM) update(seqs []Sequence, o StepOptions, lr float64) (loss, correct float64, err error) {
	l := p.learner
	if err := l.prepare(); err != nil {
		return 0, 0, err
	}
	for _, rows := range microBatchRows(seqs, o) {
		if err := l.readyAccumulators(); err != nil {
			return 0, 0, err
		}
		part := make([]Sequence, len(rows))
		for j, i := range rows {
			part[j] = seqs[i]
			part[j].Weights = seqs[i].Mask // packBatch lays the mask out at the scoring positions
		}
		padded := padRows(part, l.devices())
		b, err := packBatch(padded)
		if err != nil {
			return 0, 0, err
		}
		if b.RefLogProbs == nil {
			return 0, 0, errors.New("grpo: implicit PRM: sequences without reference log-probs")
		}
		labels, weights := make([]float32, len(padded)), make([]float32, len(padded))
		for j := range part {
			labels[j], weights[j] = prmLabel(part[j].Reward), float32(1/float64(len(seqs)))
		}
		out, err := l.call(p.loss, l.batchSpecs(), b.IDs, b.Targets, b.RefLogProbs, b.Weights, labels, weights)
		if err != nil {
			return 0, 0, fmt.Errorf("grpo: implicit PRM step: %w", err)
		}
		loss += float64(out[0].Value().(float32))
		correct += float64(out[1].Value().(float32))
	}
	if math.IsNaN(loss) || math.IsInf(loss, 0) {
		return 0, 0, fmt.Errorf("grpo: implicit PRM: loss %v: %w", loss, ErrNonFinite)
	}
	if _, err := l.Apply(lr); err != nil {
		return 0, 0, fmt.Errorf("grpo: implicit PRM optimizer step: %w", err)
	}
	return loss, correct, nil
}

// prmLabel is the PRM's outcome label of a reward: 1 when it is positive
// (a correct answer under rm_type math, dapo or verify), else 0.
func prmLabel(reward float64) float32 {
	if reward > 0 {
		return 1
	}
	return 0
}

// processRewards returns each sequence's per-token implicit rewards
// β·(log π_φ − log π_ref) under the PRM as it is now (0 where Mask is 0).
func (p *implicitPRM) processRewards(seqs []Sequence, o StepOptions) ([][]float64, error) {
	logp, err := p.learner.SequenceLogProbs(seqs, o)
	if err != nil {
		return nil, fmt.Errorf("grpo: implicit PRM log-probs: %w", err)
	}
	out := make([][]float64, len(seqs))
	for i, s := range seqs {
		out[i] = make([]float64, len(s.Response))
		for k := range s.Response {
			if s.Mask[k] != 0 {
				out[i][k] = p.beta * float64(logp[i][k]-s.RefLogProbs[k])
			}
		}
	}
	return out, nil
}

// ImplicitAdvantages combines process and outcome rewards into each
// response token's advantage, as PRIME's RLOO estimator does, over groups
// of groupSize consecutive sequences (the same prompt's). For sequence i of
// a group, with process[i][k] its tokens' implicit rewards, m_i their mean
// over its sampled tokens (mask non-zero) and outcome[i] its reward:
//
//	A_i,k = coef · Σ_{s ≥ k, sampled} (process[i][s] − mean_{j≠i} m_j)
//	        + outcome[i] − mean_{j≠i} outcome[j]
//
// on sampled tokens, 0 on the others (tool responses). The process baseline
// is the other samples' mean reward per token, so that it is on the scale of
// the rewards it is taken from; the return has no discount (γ = 1).
//
// For example, a group of two whose outcomes are 1 and −1 gives every
// sampled token of the first the outcome term 2 and of the second −2.
func ImplicitAdvantages(process [][]float64, masks [][]float32, outcome []float64, groupSize int, coef float64) ([][]float32, error) {
	n := len(process)
	if groupSize < 2 || n%groupSize != 0 || len(masks) != n || len(outcome) != n {
		return nil, fmt.Errorf("grpo: ImplicitAdvantages: %d process rows, %d masks, %d outcomes in groups of %d (want whole groups of at least 2)",
			n, len(masks), len(outcome), groupSize)
	}
	means := make([]float64, n)
	for i := range process {
		if len(process[i]) != len(masks[i]) {
			return nil, fmt.Errorf("grpo: ImplicitAdvantages: sequence %d has %d rewards and %d mask entries", i, len(process[i]), len(masks[i]))
		}
		var sum, count float64
		for k, m := range masks[i] {
			if m != 0 {
				sum += process[i][k]
				count++
			}
		}
		if count > 0 {
			means[i] = sum / count
		}
	}
	out := make([][]float32, n)
	for i := range process {
		g := i / groupSize * groupSize
		others := float64(groupSize - 1)
		var meanSum, outcomeSum float64
		for j := g; j < g+groupSize; j++ {
			meanSum += means[j]
			outcomeSum += outcome[j]
		}
		baseline := (meanSum - means[i]) / others
		outcomeAdv := outcome[i] - (outcomeSum-outcome[i])/others
		out[i] = make([]float32, len(process[i]))
		var ret float64
		for k := len(process[i]) - 1; k >= 0; k-- {
			if masks[i][k] == 0 {
				continue
			}
			ret += process[i][k] - baseline
			out[i][k] = float32(coef*ret + outcomeAdv)
		}
	}
	return out, nil
}

// processAdvantages runs PRIME's step on a rollout's sequences: their
// reference log-probs, one PRM update per optimizer step's share of them
// (stepParts) at the PRM's learning rate, then each token's advantage from
// the updated PRM's process rewards and the outcomes (ImplicitAdvantages),
// set as TokenAdvantages with Advantage 0. Without process rewards it
// returns seqs.
func (t *trainer) processAdvantages(seqs []Sequence) ([]Sequence, error) {
	if t.prm == nil || len(seqs) == 0 {
		return seqs, nil
	}
	cfg, o := t.cfg, t.stepOptions(0)
	out, err := t.withReferenceLogProbs(seqs, "process_reward implicit")
	if err != nil {
		return nil, err
	}
	lr := cfg.PRMLR
	if lr == 0 {
		lr = cfg.LR
	}
	var loss, correct float64
	parts := stepParts(out, cfg.GlobalBatchSize)
	for _, part := range parts {
		l, c, err := t.prm.update(part, o, lr)
		if err != nil {
			return nil, err
		}
		loss, correct = loss+l, correct+c
	}
	process, err := t.prm.processRewards(out, o)
	if err != nil {
		return nil, err
	}
	masks, outcome := make([][]float32, len(out)), make([]float64, len(out))
	for i, s := range out {
		masks[i], outcome[i] = s.Mask, s.Reward
	}
	adv, err := ImplicitAdvantages(process, masks, outcome, cfg.NSamplesPerPrompt, cfg.PRMCoef)
	if err != nil {
		return nil, err
	}
	var rewardSum, tokens float64
	for i := range out {
		out[i].Advantage, out[i].TokenAdvantages = 0, adv[i]
		for k, m := range out[i].Mask {
			if m != 0 {
				rewardSum += process[i][k]
				tokens++
			}
		}
	}
	t.prmStats = &prmStats{loss: loss / float64(len(parts)), accuracy: correct / float64(len(out))}
	if tokens > 0 {
		t.prmStats.rewardMean = rewardSum / tokens
	}
	return out, nil
}

// prmVariables are the PRM's variables a checkpoint keeps: every one with a
// value (weights, moments, master), in the store's order.
func (p *implicitPRM) variables() []*mlmodel.Variable {
	var vars []*mlmodel.Variable
	for v := range p.learner.Model.Store.IterVariables() {
		if v.HasValue() { // gradient accumulators are freed between steps
			vars = append(vars, v)
		}
	}
	return vars
}

// readPRM restores a PRM saved by writeOptimizer (prmFile) into store, which
// holds the initial policy's weights: each weight is overwritten, and the
// optimizer state is created as readOptimizer does.
func readPRM(path string, store *mlmodel.Store) error {
	if _, err := os.Stat(path); err != nil {
		return fmt.Errorf("no implicit PRM (the checkpoint was not written by a run with process_reward implicit?): %w", err)
	}
	return readVariables(path, store, func(name, scope string) bool {
		return isOptimizerScope(scope) || store.GetVariable(name) != nil
	})
}
