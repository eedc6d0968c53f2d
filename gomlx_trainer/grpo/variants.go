package grpo

import (
	"context"
	"math"
)

// drawBatch samples and scores one rollout's batch: rollout_batch_size prompt
// groups, and with dynamic sampling and dynamic_sampling_max_draws, further
// draws of over_sampling_batch_size groups while fewer than
// rollout_batch_size groups have rewards that are not all equal (as DAPO and
// slime fill their batches). rollout numbers it from 1 and version is the
// optimizer steps of the engine's weights; it reads nothing of t.st, so that
// it may run while the trainer optimizes (see ahead).
func (t *trainer) drawBatch(ctx context.Context, rollout, version int) (batch, error) {
	cfg := t.cfg
	d, err := t.sample(ctx, rollout, cfg.RolloutBatchSize)
	if err != nil {
		return batch{}, err
	}
	b := batch{draw: d, scores: t.score(d), step: version}
	if !cfg.DynamicSampling {
		return b, nil
	}
	more := cfg.OverSamplingBatchSize
	if more == 0 {
		more = cfg.RolloutBatchSize
	}
	for n := 0; n < cfg.DynamicSamplingMaxDraws && len(KeepGroups(b.rewards, cfg.NSamplesPerPrompt)) < cfg.RolloutBatchSize; n++ {
		extra, err := t.sample(ctx, rollout, more)
		if err != nil {
			return batch{}, err
		}
		b.draw, b.scores = b.draw.plus(extra), b.scores.plus(t.score(extra))
	}
	return b, nil
}

// mismatchStats describe the sampler/trainer mismatch of one rollout's kept
// sequences, measured before its first update.
type mismatchStats struct {
	measured      bool
	meanAbsDiff   float64 // mean |log π_train − log π_sampler| over sampled tokens
	maxAbsDiff    float64
	isWeightMean  float64 // mean truncated importance weight (use_tis)
	maskedSeqs    int     // sequences left out by the sequence mask
	sampledTokens int
}

// correct recomputes the log-probs of seqs' sampled tokens with the training
// graph, when get_mismatch_metrics, use_tis or the sequence mask asks for
// them, and returns seqs corrected as those say (see Config): importance
// weights and the PPO ratio against the recomputed log-probs (use_tis), and
// the masks of sequences whose geometric-mean ratio leaves
// [tis_seq_mask_low, tis_seq_mask_high] set to 0.
func (t *trainer) correct(seqs []Sequence) ([]Sequence, mismatchStats, error) {
	cfg := t.cfg
	seqMask := cfg.TISSeqMaskHigh > 0
	if !cfg.GetMismatchMetrics && !cfg.UseTIS && !seqMask || len(seqs) == 0 {
		return seqs, mismatchStats{}, nil
	}
	train, err := t.learner.SequenceLogProbs(seqs, StepOptions{MicroBatch: cfg.MicroBatchSize, MaxTokens: cfg.MaxTokensPerMicroBatch})
	if err != nil {
		return nil, mismatchStats{}, err
	}
	return correctSequences(seqs, train, cfg), mismatchOf(seqs, train, cfg), nil
}

// correctSequences applies use_tis and the sequence mask to copies of seqs,
// given the recomputed log-probs train.
func correctSequences(seqs []Sequence, train [][]float32, cfg Config) []Sequence {
	out := make([]Sequence, len(seqs))
	for i, s := range seqs {
		out[i] = s
		if cfg.UseTIS {
			out[i].ISWeights = make([]float32, len(s.Response))
			for k := range s.Response {
				w := math.Exp(float64(train[i][k] - s.LogProbs[k]))
				out[i].ISWeights[k] = float32(math.Min(math.Max(w, cfg.TISClipLow), cfg.TISClip))
			}
			out[i].LogProbs = train[i]
		}
		if cfg.TISSeqMaskHigh > 0 {
			if r := sequenceRatioOf(s, train[i]); r < cfg.TISSeqMaskLow || r > cfg.TISSeqMaskHigh {
				out[i].Mask = make([]float32, len(s.Mask))
			}
		}
	}
	return out
}

// sequenceRatioOf is exp of the mean of log π_train − log π_sampler over the
// sequence's sampled tokens (1 for a sequence without any).
func sequenceRatioOf(s Sequence, train []float32) float64 {
	var d, n float64
	for k, m := range s.Mask {
		if m != 0 {
			d += float64(train[k] - s.LogProbs[k])
			n++
		}
	}
	if n == 0 {
		return 1
	}
	return math.Exp(d / n)
}

// mismatchOf measures |log π_train − log π_sampler| over the sampled tokens.
func mismatchOf(seqs []Sequence, train [][]float32, cfg Config) mismatchStats {
	m := mismatchStats{measured: true}
	var sum, isSum float64
	for i, s := range seqs {
		if cfg.TISSeqMaskHigh > 0 {
			if r := sequenceRatioOf(s, train[i]); r < cfg.TISSeqMaskLow || r > cfg.TISSeqMaskHigh {
				m.maskedSeqs++
			}
		}
		for k, mk := range s.Mask {
			if mk == 0 {
				continue
			}
			d := float64(train[i][k] - s.LogProbs[k])
			sum += math.Abs(d)
			m.maxAbsDiff = math.Max(m.maxAbsDiff, math.Abs(d))
			isSum += math.Min(math.Max(math.Exp(d), cfg.TISClipLow), cfg.TISClip)
			m.sampledTokens++
		}
	}
	if m.sampledTokens > 0 {
		m.meanAbsDiff = sum / float64(m.sampledTokens)
		m.isWeightMean = isSum / float64(m.sampledTokens)
	}
	return m
}
