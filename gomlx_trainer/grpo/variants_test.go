package grpo

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/gomlx/compute/dtypes"
	. "github.com/gomlx/gomlx/core/graph" //nolint:staticcheck

	"github.com/mathrl/mathrl/analysis/metrics"
)

// variantCase is one case of testdata/variants_reference.json, written by
// testdata/variants_reference.py: an independent implementation of each
// variant's formula in plain Python, its gradients checked there by finite
// differences.
type variantCase struct {
	EpsLow        float64 `json:"eps_low"`
	EpsHigh       float64 `json:"eps_high"`
	Weights       string  // "token_mean" or "sequence_mean"
	Loss          float64
	Grad          [][]float64
	ClippedTokens float64     `json:"clipped_tokens"`
	SeqRatio      []float64   `json:"seq_ratio"`
	ISWeights     [][]float64 `json:"is_weights"`
	TISClip       float64     `json:"tis_clip"`
	TISClipLow    float64     `json:"tis_clip_low"`
	Lo, Hi        float64
	Kept          []bool
	KLCoef        float64 `json:"kl_coef"`
	KLSum         float64 `json:"kl_sum"`
	// FlowRL
	Beta      float64
	GroupSize int         `json:"group_size"`
	LogZ      []float64   `json:"log_z"`
	Mask      [][]float32 // the case's loss mask
	OldFrom   string      `json:"old_from"` // "old" or "logp": the old log-probs of the ratio and of log Z
	RatioSum  float64     `json:"ratio_sum"`
}

type variantReference struct {
	Inputs struct {
		Logp, Old, Ref, Rollout, Mask [][]float32
		Adv                           []float32
	}
	Cases      map[string]variantCase `json:"-"`
	Mismatch   map[string]float64
	Advantages struct {
		Rewards     []float64
		GroupSize   int       `json:"group_size"`
		TokenCounts []int     `json:"token_counts"`
		RLOO        []float64 `json:"rloo"`
		GRPO        []float64 `json:"grpo"`
		DrGRPO      []float64 `json:"drgrpo"`
		ReinforcePP []float64 `json:"reinforce_pp_baseline"`
	}
	Overlong struct {
		Buffer         int
		Lengths        []int
		MaxResponseLen int       `json:"max_response_len"`
		Factor1        []float64 `json:"penalty_factor_1"`
		FactorHalf     []float64 `json:"penalty_factor_0_5"`
	}
}

func loadVariants(t *testing.T) variantReference {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", "variants_reference.json"))
	if err != nil {
		t.Fatal(err)
	}
	var ref variantReference
	if err := json.Unmarshal(raw, &ref); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &ref.Cases); err != nil {
		t.Fatal(err)
	}
	return ref
}

// lossAndGrad runs PolicyLoss on the reference inputs with weights w, old
// log-probs old and importance weights isw (nil: none), and returns the loss,
// the clipped-token count, the KL sum and d loss / d logp.
func lossAndGrad(t *testing.T, ref variantReference, old, w, isw [][]float32, cfg LossConfig) (float64, float64, float64, [][]float32) {
	t.Helper()
	if isw == nil {
		isw = make([][]float32, len(w))
		for i := range isw {
			isw[i] = []float32{1, 1, 1, 1}
		}
	}
	exec := MustNewExec(testBackend(t), func(logp, old, refLogp, adv, weights, isw *Node) []*Node {
		out := PolicyLoss(LossInputs{LogProbs: logp, OldLogProbs: old, RefLogProbs: refLogp, Advantages: adv, Weights: weights, ISWeights: isw}, cfg)
		return []*Node{out.Loss, out.ClipTokens, out.KLSum, Gradient(out.Loss, logp)[0]}
	})
	res := exec.MustCall(ref.Inputs.Logp, old, ref.Inputs.Ref, ref.Inputs.Adv, w, isw)
	return float64(res[0].Value().(float32)), float64(res[1].Value().(float32)), float64(res[2].Value().(float32)), res[3].Value().([][]float32)
}

func checkLossGrad(t *testing.T, loss, clipped float64, grad [][]float32, want variantCase, checkClip bool) {
	t.Helper()
	if !near(loss, want.Loss, 1e-5) {
		t.Errorf("loss %.7f, reference %.7f", loss, want.Loss)
	}
	if checkClip && clipped != want.ClippedTokens {
		t.Errorf("clipped tokens %v, reference %v", clipped, want.ClippedTokens)
	}
	for i := range grad {
		for j := range grad[i] {
			if !near(float64(grad[i][j]), want.Grad[i][j], 1e-5) {
				t.Errorf("d loss/d logp[%d][%d] = %.7f, reference %.7f", i, j, grad[i][j], want.Grad[i][j])
			}
		}
	}
}

func TestGSPOAgainstReference(t *testing.T) {
	ref := loadVariants(t)
	for _, name := range []string{"gspo_token_mean", "gspo_sequence_mean", "gspo_sequence_mean_wide"} {
		t.Run(name, func(t *testing.T) {
			c := ref.Cases[name]
			w := TokenWeights(ref.Inputs.Mask, c.Weights == "token_mean")
			loss, clipped, _, grad := lossAndGrad(t, ref, ref.Inputs.Old, w, nil, LossConfig{EpsLow: c.EpsLow, EpsHigh: c.EpsHigh, SequenceRatio: true})
			checkLossGrad(t, loss, clipped, grad, c, true)
		})
	}
}

// referenceSequences are the reference rows as Sequences: one prompt token,
// then four response tokens sampled with the sampler's log-probs.
func referenceSequences(ref variantReference) []Sequence {
	seqs := make([]Sequence, len(ref.Inputs.Mask))
	for i := range seqs {
		seqs[i] = Sequence{Prompt: []int{0}, Response: []int{1, 2, 3, 4}, Mask: ref.Inputs.Mask[i],
			LogProbs: ref.Inputs.Rollout[i], Advantage: float64(ref.Inputs.Adv[i])}
	}
	return seqs
}

// flowRLLossAndGrad runs FlowRLLoss on the reference inputs with old
// log-probs old, loss mask mask (sequence-mean weights) and log Z logZ, in
// dtype, and returns the loss, the clipped-token count, the ratio sum and
// d loss / d logp.
func flowRLLossAndGrad(t *testing.T, ref variantReference, old, mask [][]float32, logZ []float32, cfg LossConfig, dtype dtypes.DType) (float64, float64, float64, [][]float32) {
	t.Helper()
	exec := MustNewExec(testBackend(t), func(logp, old, refLogp, adv, weights, logZ *Node) []*Node {
		lp := ConvertDType(logp, dtype)
		in := LossInputs{LogProbs: lp, OldLogProbs: ConvertDType(old, dtype), RefLogProbs: ConvertDType(refLogp, dtype),
			Advantages: ConvertDType(adv, dtype), Weights: ConvertDType(weights, dtype), LogZ: ConvertDType(logZ, dtype)}
		out := PolicyLoss(in, cfg)
		f32 := func(x *Node) *Node { return ConvertDType(x, dtypes.Float32) }
		return []*Node{f32(out.Loss), f32(out.ClipTokens), f32(out.RatioSum), Gradient(f32(out.Loss), logp)[0]}
	})
	res := exec.MustCall(ref.Inputs.Logp, old, ref.Inputs.Ref, ref.Inputs.Adv, TokenWeights(mask, false), logZ)
	return float64(res[0].Value().(float32)), float64(res[1].Value().(float32)), float64(res[2].Value().(float32)), res[3].Value().([][]float32)
}

// TestFlowRLAgainstReference checks VarGradLogZ and FlowRLLoss (loss,
// clipped tokens, ratio sum and d loss/d logp) against the reference: the
// three sequences one group, log Z at the old policy; the on-policy case is
// the rollout's first step (old = logp, every weight 1), where the reference
// also checked that the gradient with log Z held constant is the gradient
// of the group's variance of the residual; the masked case has a sequence
// without loss tokens, left out of log Z and of the loss.
func TestFlowRLAgainstReference(t *testing.T) {
	ref := loadVariants(t)
	for _, name := range []string{"flowrl", "flowrl_wide", "flowrl_on_policy", "flowrl_masked"} {
		t.Run(name, func(t *testing.T) {
			c := ref.Cases[name]
			old := ref.Inputs.Old
			if c.OldFrom == "logp" {
				old = ref.Inputs.Logp
			}
			seqs := make([]Sequence, len(c.Mask))
			for i := range seqs {
				seqs[i] = Sequence{Prompt: []int{0}, Response: []int{1, 2, 3, 4}, Mask: c.Mask[i], LogProbs: old[i],
					RefLogProbs: ref.Inputs.Ref[i], Advantage: float64(ref.Inputs.Adv[i])}
			}
			logZ, err := VarGradLogZ(seqs, c.GroupSize, c.Beta)
			if err != nil {
				t.Fatal(err)
			}
			z32 := make([]float32, len(logZ))
			for i, z := range logZ {
				z32[i] = float32(z)
				if !near(z, c.LogZ[i], 1e-6) {
					t.Errorf("log Z of sequence %d = %v, reference %v", i, z, c.LogZ[i])
				}
			}
			cfg := LossConfig{EpsLow: c.EpsLow, EpsHigh: c.EpsHigh, FlowRL: true, FlowBeta: c.Beta}
			loss, clipped, ratioSum, grad := flowRLLossAndGrad(t, ref, old, c.Mask, z32, cfg, dtypes.Float32)
			checkLossGrad(t, loss, clipped, grad, c, true)
			if !near(ratioSum, c.RatioSum, 1e-5) {
				t.Errorf("ratio sum %v, reference %v", ratioSum, c.RatioSum)
			}
		})
	}
}

// TestFlowRLBFloat16TracksFloat32 runs FlowRLLoss in bfloat16 on the
// reference case and checks it stays within bfloat16's rounding of float32's
// (the learner's log-probs are float32 whatever the weights' dtype; this
// covers a caller that hands it bfloat16).
func TestFlowRLBFloat16TracksFloat32(t *testing.T) {
	ref := loadVariants(t)
	c := ref.Cases["flowrl_wide"]
	z32 := make([]float32, len(c.LogZ))
	for i, z := range c.LogZ {
		z32[i] = float32(z)
	}
	cfg := LossConfig{EpsLow: c.EpsLow, EpsHigh: c.EpsHigh, FlowRL: true, FlowBeta: c.Beta}
	loss32, _, _, grad32 := flowRLLossAndGrad(t, ref, ref.Inputs.Old, c.Mask, z32, cfg, dtypes.Float32)
	loss16, _, _, grad16 := flowRLLossAndGrad(t, ref, ref.Inputs.Old, c.Mask, z32, cfg, dtypes.BFloat16)
	if !near(loss16, loss32, 0.05) {
		t.Errorf("bfloat16 loss %v, float32 %v", loss16, loss32)
	}
	for i := range grad32 {
		for j := range grad32[i] {
			if math.Abs(float64(grad16[i][j]-grad32[i][j])) > 0.05*(math.Abs(float64(grad32[i][j]))+0.01) {
				t.Errorf("d/d logp[%d][%d]: bfloat16 %v, float32 %v", i, j, grad16[i][j], grad32[i][j])
			}
		}
	}
}

// TestTISAgainstReference checks the importance weights and the loss of
// use_tis against the reference, the PPO ratio taken against the recomputed
// log-probs (the default); with use_rollout_logprobs the weights are the same
// and the ratio's old log-probs stay the sampler's.
func TestTISAgainstReference(t *testing.T) {
	ref := loadVariants(t)
	for _, name := range []string{"tis_token", "tis_token_low"} {
		for _, rollout := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s, use_rollout_logprobs %v", name, rollout), func(t *testing.T) {
				c := ref.Cases[name]
				cfg := Config{UseTIS: true, TISClip: c.TISClip, TISClipLow: c.TISClipLow, UseRolloutLogprobs: rollout}
				seqs := correctSequences(referenceSequences(ref), ref.Inputs.Old, cfg)
				isw := make([][]float32, len(seqs))
				for i, s := range seqs {
					isw[i] = s.ISWeights
					for k := range s.ISWeights {
						if !near(float64(s.ISWeights[k]), c.ISWeights[i][k], 1e-6) {
							t.Errorf("importance weight [%d][%d] = %v, reference %v", i, k, s.ISWeights[k], c.ISWeights[i][k])
						}
					}
					want := ref.Inputs.Old[i] // the recomputed log-probs
					if rollout {
						want = ref.Inputs.Rollout[i]
					}
					if !slices.Equal(s.LogProbs, want) {
						t.Fatalf("sequence %d: old log-probs %v, want %v", i, s.LogProbs, want)
					}
				}
				if rollout {
					return // the reference's loss takes the ratio against the recomputed log-probs
				}
				w := TokenWeights(ref.Inputs.Mask, true)
				loss, clipped, _, grad := lossAndGrad(t, ref, ref.Inputs.Old, w, isw, LossConfig{EpsLow: c.EpsLow, EpsHigh: c.EpsHigh})
				checkLossGrad(t, loss, clipped, grad, c, true)
			})
		}
	}
}

func TestSequenceMaskAgainstReference(t *testing.T) {
	ref := loadVariants(t)
	for _, name := range []string{"seq_mask", "seq_mask_tight"} {
		t.Run(name, func(t *testing.T) {
			c := ref.Cases[name]
			cfg := Config{TISClip: 2, TISSeqMaskLow: c.Lo, TISSeqMaskHigh: c.Hi}
			seqs := correctSequences(referenceSequences(ref), ref.Inputs.Old, cfg)
			masks := make([][]float32, len(seqs))
			for i, s := range seqs {
				masks[i] = s.Mask
				kept := sum(s.Mask) > 0
				if kept != c.Kept[i] {
					t.Errorf("sequence %d kept %v, reference %v (ratio %v)", i, kept, c.Kept[i], c.SeqRatio[i])
				}
				if r := sequenceRatioOf(referenceSequences(ref)[i], ref.Inputs.Old[i]); !near(r, c.SeqRatio[i], 1e-6) {
					t.Errorf("sequence %d ratio %v, reference %v", i, r, c.SeqRatio[i])
				}
			}
			loss, _, _, grad := lossAndGrad(t, ref, ref.Inputs.Old, TokenWeights(masks, true), nil, LossConfig{EpsLow: c.EpsLow, EpsHigh: c.EpsHigh})
			checkLossGrad(t, loss, 0, grad, c, false)
		})
	}
}

func TestMismatchAgainstReference(t *testing.T) {
	ref := loadVariants(t)
	m := mismatchOf(referenceSequences(ref), ref.Inputs.Old, Config{TISClip: 2})
	if !near(m.meanAbsDiff, ref.Mismatch["mean_abs_diff"], 1e-6) || !near(m.maxAbsDiff, ref.Mismatch["max_abs_diff"], 1e-6) {
		t.Errorf("mismatch mean %v max %v, reference %v %v", m.meanAbsDiff, m.maxAbsDiff, ref.Mismatch["mean_abs_diff"], ref.Mismatch["max_abs_diff"])
	}
}

func TestK2AgainstReference(t *testing.T) {
	ref := loadVariants(t)
	c := ref.Cases["k2"]
	w := TokenWeights(ref.Inputs.Mask, c.Weights == "token_mean")
	loss, _, klSum, grad := lossAndGrad(t, ref, ref.Inputs.Old, w, nil, LossConfig{EpsLow: c.EpsLow, EpsHigh: c.EpsHigh, KLCoef: c.KLCoef, KLType: "k2"})
	checkLossGrad(t, loss, 0, grad, c, false)
	if !near(klSum, c.KLSum, 1e-5) {
		t.Errorf("KL sum %v, reference %v", klSum, c.KLSum)
	}
}

func TestAdvantageEstimatorsAgainstReference(t *testing.T) {
	a := loadVariants(t).Advantages
	for _, tc := range []struct {
		estimator    string
		normalizeStd bool
		want         []float64
	}{
		{"rloo", true, a.RLOO},
		{"grpo", true, a.GRPO},
		{"gspo", true, a.GRPO},
		{"flowrl", true, a.GRPO},
		{"grpo", false, a.DrGRPO},
		{"reinforce_plus_plus_baseline", true, a.ReinforcePP},
	} {
		got := Advantages(tc.estimator, a.Rewards, a.GroupSize, a.TokenCounts, 1e-6, tc.normalizeStd)
		for i := range tc.want {
			if !near(got[i], tc.want[i], 1e-9) {
				t.Errorf("%s (std %v): advantage %d = %v, reference %v", tc.estimator, tc.normalizeStd, i, got[i], tc.want[i])
			}
		}
	}
}

func TestOverlongPenaltyAgainstReference(t *testing.T) {
	o := loadVariants(t).Overlong
	for i, l := range o.Lengths {
		if got := OverlongPenalty(l, o.MaxResponseLen, o.Buffer, 1); !near(got, o.Factor1[i], 1e-12) {
			t.Errorf("length %d, factor 1: %v, reference %v", l, got, o.Factor1[i])
		}
		if got := OverlongPenalty(l, o.MaxResponseLen, o.Buffer, 0.5); !near(got, o.FactorHalf[i], 1e-12) {
			t.Errorf("length %d, factor 0.5: %v, reference %v", l, got, o.FactorHalf[i])
		}
	}
	if OverlongPenalty(100, 20, 0, 1) != 0 {
		t.Error("a buffer of 0 must turn the penalty off")
	}
}

// TestTrainVariants trains the smoke recipe with the variants on: GSPO with a
// k2 KL penalty, the mismatch metrics with truncated importance sampling and
// the sequence mask, the overlong penalty and truncated responses masked;
// RLOO; REINFORCE++'s baseline; and dynamic sampling that draws further
// groups, under a reward that makes every other group's rewards all equal.
// Each run must finish and log what its variants report.
func TestTrainVariants(t *testing.T) {
	if testing.Short() {
		t.Skip("trains a tiny model")
	}
	for _, tc := range []struct {
		name   string
		set    func(*Config)
		reward func(g int) RewardFunc
		drawn  float64 // groups drawn per rollout (0: not checked)
	}{
		{"gspo, k2, tis, overlong", func(c *Config) {
			c.AdvantageEstimator, c.UseKLLoss, c.KLLossCoef, c.KLLossType = "gspo", true, 0.01, "k2"
			c.GetMismatchMetrics, c.UseTIS, c.TISSeqMaskLow, c.TISSeqMaskHigh = true, true, 0.5, 2
			c.OverlongBufferLen, c.MaskTruncated = 16, true
		}, nil, 0},
		{"rloo", func(c *Config) { c.AdvantageEstimator = "rloo" }, nil, 0},
		{"reinforce++ baseline", func(c *Config) { c.AdvantageEstimator = "reinforce_plus_plus_baseline" }, nil, 0},
		// groups 0, 2, 4... all equal: rollout 1 draws groups 0-1, then 2, then 3 (two kept);
		// rollout 2 draws 4-5, then 6, then 7.
		{"dynamic sampling fill", func(c *Config) {
			c.DynamicSampling, c.DynamicSamplingMaxDraws, c.OverSamplingBatchSize = true, 5, 1
		}, alternatingGroups, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := smokeConfig(t)
			cfg.EvalInterval, cfg.SaveInterval = 0, 0
			tc.set(&cfg)
			opt := TrainOptions{Backend: testBackend(t), Tools: arithTools{}}
			if tc.reward != nil {
				opt.Reward = tc.reward(cfg.NSamplesPerPrompt)
			}
			var log testLog
			opt.Progress = &log
			if err := Train(context.Background(), cfg, opt); err != nil {
				t.Fatalf("%v\n%s", err, log)
			}
			steps, err := RunFolder(cfg.Save).ReadSteps(1 << 30)
			if err != nil || len(steps) == 0 {
				t.Fatalf("%d steps, %v", len(steps), err)
			}
			for _, m := range steps {
				checkVariantMetrics(t, cfg, m)
				if tc.drawn > 0 && (m.Extra["groups_drawn"] != tc.drawn || m.Extra["groups_kept"] != float64(cfg.RolloutBatchSize)) {
					t.Errorf("step %d: groups drawn %v, kept %v; want %v and %d", m.Step, m.Extra["groups_drawn"], m.Extra["groups_kept"], tc.drawn, cfg.RolloutBatchSize)
				}
			}
		})
	}
}

// TestDynamicSamplingCapsDraws scores every sample 0, so that every group's
// rewards are all equal and dynamic sampling never fills its batch: each
// rollout must stop after dynamic_sampling_max_draws further draws of
// over_sampling_batch_size groups, keep nothing and take no step.
func TestDynamicSamplingCapsDraws(t *testing.T) {
	if testing.Short() {
		t.Skip("samples with a tiny model")
	}
	cfg := smokeConfig(t)
	cfg.EvalPromptData, cfg.EvalInterval, cfg.SaveInterval, cfg.SFTSteps = "", 0, 0, 0
	cfg.DynamicSampling, cfg.DynamicSamplingMaxDraws, cfg.OverSamplingBatchSize = true, 3, 1
	var rollouts []RolloutLog
	var log testLog
	err := Train(context.Background(), cfg, TrainOptions{Backend: testBackend(t), Tools: arithTools{}, Progress: &log,
		Reward:    func(_, _ string, _ int) Reward { return Reward{} },
		OnRollout: func(r RolloutLog) { rollouts = append(rollouts, r) }})
	if err != nil {
		t.Fatalf("%v\n%s", err, log)
	}
	if len(rollouts) != cfg.NumRollout {
		t.Fatalf("%d rollouts, want %d", len(rollouts), cfg.NumRollout)
	}
	want := cfg.RolloutBatchSize + cfg.DynamicSamplingMaxDraws*cfg.OverSamplingBatchSize
	for _, r := range rollouts {
		if len(r.Problems) != want || len(r.Samples) != want*cfg.NSamplesPerPrompt || len(r.Sequences) != 0 || len(r.Steps) != 0 {
			t.Errorf("rollout %d: %d groups drawn, %d samples, %d sequences kept, %d steps; want %d groups, nothing kept",
				r.Rollout, len(r.Problems), len(r.Samples), len(r.Sequences), len(r.Steps), want)
		}
	}
}

// alternatingGroups is a reward, for groups of g samples scored in order, that
// is 0 for every sample of the even groups and 1 only for the first sample of
// the odd ones.
func alternatingGroups(g int) RewardFunc {
	calls := 0
	return func(_, _ string, _ int) Reward {
		i := calls
		calls++
		if (i/g)%2 == 1 && i%g == 0 {
			return Reward{Value: 1, Correct: true}
		}
		return Reward{}
	}
}

// checkVariantMetrics checks the train.jsonl extras the variants of cfg log.
func checkVariantMetrics(t *testing.T, cfg Config, m metrics.StepMetrics) {
	t.Helper()
	if cfg.DynamicSampling {
		drawn, kept := m.Extra["groups_drawn"], m.Extra["groups_kept"]
		if drawn < float64(cfg.RolloutBatchSize) || kept > float64(cfg.RolloutBatchSize) || kept < 1 {
			t.Errorf("step %d: groups drawn %v, kept %v (rollout_batch_size %d)", m.Step, drawn, kept, cfg.RolloutBatchSize)
		}
	}
	if cfg.GetMismatchMetrics {
		// one model samples and trains: in float32 the two paths differ by rounding only
		mean, ok := m.Extra["train_rollout_logprob_abs_diff"]
		if !ok || mean > 1e-4 || m.Extra["train_rollout_logprob_abs_diff_max"] < mean {
			t.Errorf("step %d: mismatch mean %v (logged %v), max %v", m.Step, mean, ok, m.Extra["train_rollout_logprob_abs_diff_max"])
		}
		if w := m.Extra["tis_weight_mean"]; math.Abs(w-1) > 1e-3 {
			t.Errorf("step %d: mean importance weight %v, want about 1", m.Step, w)
		}
	}
}

// TestGSPOEqualsGRPOOnPolicy checks the identity docs/algorithms.md states: where
// every ratio is 1 (the first optimizer step on a rollout, sampled by the
// same weights), GSPO's gradient is GRPO's, with token-mean and with
// sequence-mean weights alike.
func TestGSPOEqualsGRPOOnPolicy(t *testing.T) {
	ref := loadVariants(t)
	for _, perToken := range []bool{true, false} {
		w := TokenWeights(ref.Inputs.Mask, perToken)
		_, _, _, grpo := lossAndGrad(t, ref, ref.Inputs.Logp, w, nil, LossConfig{EpsLow: 0.2, EpsHigh: 0.28})
		_, _, _, gspo := lossAndGrad(t, ref, ref.Inputs.Logp, w, nil, LossConfig{EpsLow: 3e-4, EpsHigh: 4e-4, SequenceRatio: true})
		for i := range grpo {
			for j := range grpo[i] {
				if !near(float64(grpo[i][j]), float64(gspo[i][j]), 1e-6) {
					t.Errorf("token mean %v: d/d logp[%d][%d]: GRPO %v, GSPO %v", perToken, i, j, grpo[i][j], gspo[i][j])
				}
			}
		}
	}
}

// TestTrainFlowRL trains the tiny model two optimizer steps on one rollout
// with advantage_estimator flowrl (the second step off-policy, on log Z
// estimated at the rollout's policy), under a reward that gives each group
// one correct sample, so that r̂ and the residuals are not all 0. The losses,
// gradient norms and log Z means must be finite, the gradients not 0, and
// the weights must move.
func TestTrainFlowRL(t *testing.T) {
	if testing.Short() {
		t.Skip("trains a tiny model")
	}
	cfg := smokeConfig(t)
	cfg.AdvantageEstimator = "flowrl"
	cfg.NumRollout, cfg.SFTSteps, cfg.EvalPromptData, cfg.EvalInterval, cfg.SaveInterval = 1, 0, "", 0, 0
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	steps := trainFirstOfGroup(t, cfg)
	for _, m := range steps {
		z, ok := m.Extra["flowrl_log_z_mean"]
		t.Logf("step %d: loss %.4g, grad norm %.4g, clip fraction %.3g, ratio mean %.6g, log Z mean %.4g", m.Step, m.Loss, m.GradNorm, m.ClipFraction, m.Extra["ratio_mean"], z)
		finite := !math.IsNaN(m.Loss+m.GradNorm+z) && !math.IsInf(m.Loss+m.GradNorm+z, 0)
		if !ok || !finite || m.Loss <= 0 || m.GradNorm <= 0 {
			t.Errorf("step %d: loss %v, grad norm %v, log Z mean %v (logged %v)", m.Step, m.Loss, m.GradNorm, z, ok)
		}
	}
	initial, err := newPolicy(cfg)
	if err != nil {
		t.Fatal(err)
	}
	final := checkpointWeights(t, filepath.Join(RunFolder(cfg.Save).CkptDir(), CheckpointName(len(steps))))
	if moved := maxDiff(final, weightsOf(t, initial)); moved == 0 {
		t.Error("the weights did not move")
	}
}

// trainFirstOfGroup trains cfg, rewarding the first sample of each group
// only (so every group's advantages are non-zero), and returns its steps'
// metrics, one rollout's worth.
func trainFirstOfGroup(t *testing.T, cfg Config) []metrics.StepMetrics {
	t.Helper()
	g, calls := cfg.NSamplesPerPrompt, 0
	firstOfGroup := func(_, _ string, _ int) Reward {
		i := calls
		calls++
		return Reward{Value: float64(1 - min(i%g, 1)), Correct: i%g == 0}
	}
	var log testLog
	err := Train(context.Background(), cfg, TrainOptions{Backend: testBackend(t), Tools: arithTools{}, Progress: &log, Reward: firstOfGroup})
	if err != nil {
		t.Fatalf("%v\n%s", err, log)
	}
	steps, err := RunFolder(cfg.Save).ReadSteps(1 << 30)
	if err != nil || len(steps) != cfg.StepsPerRollout() {
		t.Fatalf("%d steps, want %d: %v", len(steps), cfg.StepsPerRollout(), err)
	}
	return steps
}
