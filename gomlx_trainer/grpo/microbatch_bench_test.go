package grpo

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/mathrl/mathrl/gomlx_trainer/layout"
)

// longTailSequences returns n GRPO sequences with the lengths of a long-tailed
// rollout, divided by div (at least 1 prompt and 1 response token each):
//
//	prompt:   uniform in [64, 320) tokens
//	response: lognormal, median 600 tokens, σ = 1 (mean ≈ 990, p90 ≈ 2200,
//	          p99 ≈ 6200), cut so that prompt + response ≤ 8192
//
// Most responses are short and a few run to the cap (about 0.6% are cut),
// the shape of a math RL rollout. Every response token is sampled (mask 1),
// with log-prob -5.6 and advantage ±1; the ids are random bytes.
func longTailSequences(n, div int, seed uint64) []Sequence {
	const maxLen, median, sigma = 8192, 600, 1.0
	rng := rand.New(rand.NewPCG(seed, 1))
	seqs := make([]Sequence, n)
	for i := range seqs {
		p := 64 + rng.IntN(256)
		r := int(median * math.Exp(sigma*rng.NormFloat64()))
		r = min(max(r, 1), maxLen-p)
		p, r = max(p/div, 1), max(r/div, 1)
		s := Sequence{Prompt: make([]int, p), Response: make([]int, r), Mask: make([]float32, r), LogProbs: make([]float32, r), Advantage: float64(1 - 2*(i%2))}
		for k := range s.Prompt {
			s.Prompt[k] = rng.IntN(256)
		}
		for k := range s.Response {
			s.Response[k], s.Mask[k], s.LogProbs[k] = rng.IntN(256), 1, -5.6
		}
		seqs[i] = s
	}
	return seqs
}

// paddingFraction returns the share of the padded tokens of micro-batches
// that are padding.
func paddingFraction(parts [][]Sequence) float64 {
	used, padded := 0, 0
	for _, part := range parts {
		longest := 0
		for _, n := range seqLengths(part) {
			used += n
			longest = max(longest, n)
		}
		padded += len(part) * layout.PadLength(longest)
	}
	return 1 - float64(used)/float64(padded)
}

// shapeCount returns the number of distinct [rows, padded length] shapes of
// micro-batches: the graphs an accelerator compiles.
func shapeCount(parts [][]Sequence) int {
	seen := map[[2]int]bool{}
	for _, part := range parts {
		seen[[2]int{len(part), layout.PadLength(slices.Max(seqLengths(part)))}] = true
	}
	return len(seen)
}

// BenchmarkMicroBatches compares fixed micro-batches of 8 sequences with
// micro-batches packed by tokens under the same worst case (8 × the longest
// sequence), on longTailSequences. At full scale (256 sequences up to 8192
// tokens) it reports the padding fraction, the forward/backward passes and the
// compiled shapes of each. It then times optimizer steps of the tiny model on
// 32 sequences with lengths divided by 32 (up to 256 tokens), the two ways in
// turn, and reports the packed step time over the fixed one. Run it with
//
//	go test ./gomlx_trainer/grpo -run '^$' -bench MicroBatches -benchtime 3x
func BenchmarkMicroBatches(b *testing.B) {
	const micro = 8
	small := longTailSequences(32, 32, 2)
	ways := []StepOptions{{MicroBatch: micro, LR: 1e-4}, {MaxTokens: micro * 256, LR: 1e-4}}
	learners := make([]*Learner, len(ways))
	for i, o := range ways {
		learners[i] = NewLearner(testBackend(b), tinyModel(b, 1), LossConfig{EpsLow: 0.2, EpsHigh: 0.28}, AdamWConfig{Beta1: 0.9, Beta2: 0.999, Eps: 1e-8}, 1)
		if _, _, err := learners[i].Step(small, o); err != nil { // compiles every shape
			b.Fatal(err)
		}
	}
	spent := make([]time.Duration, len(ways))
	b.ResetTimer()
	for range b.N {
		for i, o := range ways {
			start := time.Now()
			if _, _, err := learners[i].Step(small, o); err != nil {
				b.Fatal(err)
			}
			spent[i] += time.Since(start)
		}
	}
	b.StopTimer()
	b.ReportMetric(spent[1].Seconds()/spent[0].Seconds(), "time-packed/fixed")
	b.ReportMetric(paddingFraction(microBatches(small, ways[0])), "pad-fixed-small")
	b.ReportMetric(paddingFraction(microBatches(small, ways[1])), "pad-packed-small")

	full := longTailSequences(256, 1, 1)
	fixed := microBatches(full, StepOptions{MicroBatch: micro})
	packed := microBatches(full, StepOptions{MaxTokens: micro * 8192})
	b.ReportMetric(paddingFraction(fixed), "pad-fixed")
	b.ReportMetric(paddingFraction(packed), "pad-packed")
	b.ReportMetric(float64(len(packed))/float64(len(fixed)), "passes-packed/fixed")
	b.ReportMetric(float64(shapeCount(packed))/float64(shapeCount(fixed)), "shapes-packed/fixed")
}
