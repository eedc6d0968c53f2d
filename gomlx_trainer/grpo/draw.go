package grpo

import "context"

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
