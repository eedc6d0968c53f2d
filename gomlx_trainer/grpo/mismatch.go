package grpo

import "math"

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
// graph, unless use_rollout_logprobs is set and none of get_mismatch_metrics,
// use_tis and the sequence mask asks for them, and returns seqs corrected as
// the config says (see correctSequences) with the mismatch between the
// recomputed log-probs and the sampler's (measured when one of those three
// asks for it). It runs before the rollout's first update, on the current
// weights (under async_rollouts one rollout's updates past the sampler's),
// and cuts seqs as optimize and Learner.Step do (stepParts, then
// microBatchRows). The first step then takes its own forward's log-probs as
// the old ones (StepOptions.OnPolicy), so that its ratio is exactly 1 on any
// backend: they equal the recomputed ones bit for bit where the backend
// rounds the two graphs alike (the Go backend), not on XLA, which compiles
// them apart.
func (t *trainer) correct(seqs []Sequence) ([]Sequence, mismatchStats, error) {
	cfg := t.cfg
	measure := cfg.GetMismatchMetrics || cfg.UseTIS || cfg.TISSeqMaskHigh > 0
	if cfg.UseRolloutLogprobs && !measure || len(seqs) == 0 {
		return seqs, mismatchStats{}, nil
	}
	train := make([][]float32, 0, len(seqs))
	for _, part := range stepParts(seqs, cfg.GlobalBatchSize) {
		lp, err := t.learner.SequenceLogProbs(part, t.stepOptions(0))
		if err != nil {
			return nil, mismatchStats{}, err
		}
		train = append(train, lp...)
	}
	var mm mismatchStats
	if measure {
		mm = mismatchOf(seqs, train, cfg)
	}
	return correctSequences(seqs, train, cfg), mm, nil
}

// correctSequences returns copies of seqs (whose LogProbs are the sampler's)
// corrected with the recomputed log-probs train: unless use_rollout_logprobs,
// LogProbs, the old log-probs of the PPO ratio, become train's; with use_tis,
// ISWeights are clamp(π_train/π_sampler, tis_clip_low, tis_clip); with the
// sequence mask, the masks of sequences whose geometric-mean ratio
// π_train/π_sampler leaves [tis_seq_mask_low, tis_seq_mask_high] are set to 0.
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
		}
		if !cfg.UseRolloutLogprobs {
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
