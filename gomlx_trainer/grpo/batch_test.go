package grpo

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/mathrl/mathrl/gomlx_trainer/layout"
)

func TestTokenMicroBatches(t *testing.T) {
	for _, tc := range []struct {
		name    string
		lengths []int
		budget  int
		want    [][]int
	}{
		{"empty", nil, 64, nil},
		{"doc example", []int{40, 10, 100, 20, 30}, 128, [][]int{{2}, {0, 4}, {3, 1}}},
		{"all fit", []int{5, 31, 20}, 96, [][]int{{1, 2, 0}}},
		{"one row each", []int{5, 31, 20}, 32, [][]int{{1}, {2}, {0}}},
		{"budget between rows", []int{5, 31, 20}, 63, [][]int{{1}, {2}, {0}}},
		{"ties keep input order", []int{7, 7, 7, 7, 7}, 64, [][]int{{0, 1}, {2, 3}, {4}}},
		{"one over budget alone", []int{300, 10, 10}, 64, [][]int{{0}, {1, 2}}},
		{"padding by 128 above 256", []int{257, 384, 100}, 768, [][]int{{1, 0}, {2}}},
		{"budget under every row", []int{10, 20}, 1, [][]int{{1}, {0}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := tokenMicroBatches(tc.lengths, tc.budget)
			if !slices.EqualFunc(got, tc.want, slices.Equal) {
				t.Errorf("tokenMicroBatches(%v, %d) = %v, want %v", tc.lengths, tc.budget, got, tc.want)
			}
		})
	}
}

// Every sequence lands in exactly one micro-batch, and every micro-batch of
// more than one row keeps to the budget.
func TestTokenMicroBatchesCoverAndFit(t *testing.T) {
	lengths := seqLengths(longTailSequences(200, 1, 3))
	for _, budget := range []int{1, 512, 8192, 65536} {
		seen := make([]int, len(lengths))
		for _, rows := range tokenMicroBatches(lengths, budget) {
			longest := 0
			for _, i := range rows {
				seen[i]++
				longest = max(longest, lengths[i])
			}
			if cost := len(rows) * layout.PadLength(longest); len(rows) > 1 && cost > budget {
				t.Errorf("budget %d: micro-batch %v costs %d padded tokens", budget, rows, cost)
			}
		}
		for i, n := range seen {
			if n != 1 {
				t.Fatalf("budget %d: sequence %d is in %d micro-batches", budget, i, n)
			}
		}
	}
}

func TestTokenMicroBatchesPanicsOnZeroBudget(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("no panic for budget 0")
		}
	}()
	tokenMicroBatches([]int{1}, 0)
}

// stepSequences returns testSequences' three sequences and two longer ones (a
// 40-token and a 70-token response), so that packing by tokens mixes padded
// lengths 32, 64 and 96; their loss weights are left for Step to set.
func stepSequences() []Sequence {
	seqs := testSequences()
	for i, n := range []int{40, 70} {
		resp, mask, lp := make([]int, n), make([]float32, n), make([]float32, n)
		for k := range resp {
			resp[k], mask[k], lp[k] = 30+(7*k+i)%200, 1, -5.6
		}
		mask[n/2] = 0 // a tool-response token
		seqs = append(seqs, Sequence{Prompt: []int{256, 14 + i}, Response: resp, Mask: mask, LogProbs: lp, Advantage: 0.9 - float64(i)})
	}
	for i := range seqs {
		seqs[i].Weights = nil
	}
	return seqs
}

// TestStepTokenPackingSameLoss takes one optimizer step on the same sequences
// with all of them in one micro-batch, with fixed micro-batches and packed by
// tokens, and requires the same loss, statistics, gradient norm and weights.
func TestStepTokenPackingSameLoss(t *testing.T) {
	backend := testBackend(t)
	seqs := stepSequences()
	const budget = 64 // padded lengths 32, 32, 32, 64 and 96: [4] [3] [0 1] [2]
	if got := tokenMicroBatches(seqLengths(seqs), budget); len(got) != 4 {
		t.Fatalf("budget %d gives micro-batches %v, want 4: the test would not mix shapes", budget, got)
	}
	// Adam's first update is lr·g/(|g|+ε): with ε = 1 it stays linear in the
	// gradient, so float rounding in a gradient near 0 cannot flip its sign.
	adam := AdamWConfig{Beta1: 0.9, Beta2: 0.999, Eps: 1, ClipNorm: 1}
	lossCfg := LossConfig{EpsLow: 0.2, EpsHigh: 0.28, EntropyCoef: 0.01}
	for _, perToken := range []bool{true, false} {
		t.Run(fmt.Sprintf("per-token %v", perToken), func(t *testing.T) {
			var stats []StepStats
			var norms []float64
			var weights []map[string][]float32
			for _, o := range []StepOptions{{}, {MicroBatch: 2}, {MicroBatch: 2, MaxTokens: budget}} {
				o.PerTokenLoss, o.LR = perToken, 1
				l := NewLearner(backend, tinyModel(t, 11), lossCfg, adam, 1)
				ss, norm, err := l.Step(seqs, o)
				if err != nil {
					t.Fatal(err)
				}
				stats, norms, weights = append(stats, ss), append(norms, norm), append(weights, weightsOf(t, l.Model))
			}
			if moved := maxDiff(weights[0], weightsOf(t, tinyModel(t, 11))); moved < 1e-3 {
				t.Fatalf("the step moved no weight by more than %g", moved)
			}
			for k := 1; k < len(stats); k++ {
				compareSteps(t, k, stats[0], stats[k], norms[0], norms[k], weights[0], weights[k])
			}
		})
	}
}

func compareSteps(t *testing.T, k int, a, b StepStats, na, nb float64, wa, wb map[string][]float32) {
	t.Helper()
	pairs := [][2]float64{{a.Loss, b.Loss}, {a.PGLoss, b.PGLoss}, {a.Tokens, b.Tokens}, {a.EntropySum, b.EntropySum}, {a.RatioSum, b.RatioSum}, {na, nb}}
	for j, p := range pairs {
		if !near(p[1], p[0], 1e-5) {
			t.Errorf("run %d: statistic %d (loss, pg, tokens, entropy, ratio, grad norm) is %v, one micro-batch gives %v", k, j, p[1], p[0])
		}
	}
	for name, w := range wa {
		for i := range w {
			if !near(float64(wb[name][i]), float64(w[i]), 1e-5) {
				t.Fatalf("run %d: %s[%d] = %v after the step, one micro-batch gives %v", k, name, i, wb[name][i], w[i])
			}
		}
	}
}

// maxDiff returns the largest difference between the weights of a and b.
func maxDiff(a, b map[string][]float32) float64 {
	d := 0.0
	for name, w := range a {
		for i := range w {
			d = max(d, math.Abs(float64(w[i]-b[name][i])))
		}
	}
	return d
}

// With token packing off, config.json (and the checkpoints' state) has no
// max_tokens_per_micro_batch key, so a run that does not use it writes the
// same bytes as one from before the knob existed.
func TestTokenPackingOffNotInConfigJSON(t *testing.T) {
	for _, tc := range []struct {
		max  int
		want bool
	}{{0, false}, {4096, true}} {
		cfg := Default()
		cfg.MaxTokensPerMicroBatch = tc.max
		data, err := json.Marshal(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(string(data), `"max_tokens_per_micro_batch"`); got != tc.want {
			t.Errorf("max_tokens_per_micro_batch %d: key in config.json %v, want %v", tc.max, got, tc.want)
		}
	}
}
