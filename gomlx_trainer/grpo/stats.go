package grpo

import (
	"math"

	"github.com/mathrl/mathrl/analysis/metrics"
	"github.com/mathrl/mathrl/gomlx_trainer/toolloop"
)

// batchStats sums what one rollout's samples did.
type batchStats struct {
	n, correct, errors, truncated int
	rewardSum, rewardSq           float64
	lenSum                        int
	lenMax                        int
	toolCalls, toolErrors         int
	toolNoOutput                  int
}

func (r *batchStats) add(s toolloop.Sample, rw Reward) {
	r.n++
	if rw.Correct {
		r.correct++
	}
	if rw.Err != nil {
		r.errors++
	}
	if s.Finish == metrics.FinishLength {
		r.truncated++
	}
	r.rewardSum += rw.Value
	r.rewardSq += rw.Value * rw.Value
	r.lenSum += len(s.IDs)
	r.lenMax = max(r.lenMax, len(s.IDs))
	r.toolCalls += s.ToolCalls
	r.toolErrors += s.ToolErrors
	r.toolNoOutput += s.NoOutput
}

func (r *batchStats) rewardMean() float64     { return r.rewardSum / float64(max(r.n, 1)) }
func (r *batchStats) accuracy() float64       { return float64(r.correct) / float64(max(r.n, 1)) }
func (r *batchStats) lenMean() float64        { return float64(r.lenSum) / float64(max(r.n, 1)) }
func (r *batchStats) toolsPerSample() float64 { return float64(r.toolCalls) / float64(max(r.n, 1)) }

func (r *batchStats) metrics(step int, ss StepStats, gradNorm, lr float64) metrics.StepMetrics {
	mean := r.rewardMean()
	variance := math.Max(r.rewardSq/float64(max(r.n, 1))-mean*mean, 0)
	m := metrics.StepMetrics{
		Version: metrics.StepMetricsVersion, Step: step, Samples: r.n,
		RewardMean: mean, RewardStd: math.Sqrt(variance), Accuracy: r.accuracy(),
		ResponseLenMean: r.lenMean(), ResponseLenMax: r.lenMax,
		TruncationRate:     float64(r.truncated) / float64(max(r.n, 1)),
		ToolCallsPerSample: r.toolsPerSample(),
		Loss:               ss.Loss, GradNorm: gradNorm, LR: lr,
	}
	if r.toolCalls > 0 {
		m.ToolErrorRate = float64(r.toolErrors) / float64(r.toolCalls)
	}
	if ss.Tokens > 0 {
		m.ClipFraction = ss.ClipTokens / ss.Tokens
		m.Entropy = math.Max(ss.EntropySum/ss.Tokens, 0)
	}
	return m
}

// merge adds o's sums to r.
func (r *batchStats) merge(o batchStats) {
	r.n += o.n
	r.correct += o.correct
	r.errors += o.errors
	r.truncated += o.truncated
	r.rewardSum += o.rewardSum
	r.rewardSq += o.rewardSq
	r.lenSum += o.lenSum
	r.lenMax = max(r.lenMax, o.lenMax)
	r.toolCalls += o.toolCalls
	r.toolErrors += o.toolErrors
	r.toolNoOutput += o.toolNoOutput
}
