package grpo

import (
	"testing"
	"time"

	"github.com/gomlx/compute/dtypes"

	"github.com/mathrl/mathrl/gomlx_trainer/precision"
	"github.com/mathrl/mathrl/gomlx_trainer/qwen3"
)

// BenchmarkMasterWeights times a warm-start step of the tiny model (a
// micro-batch's forward and backward, then the update) in bfloat16 under
// each way of keeping the master, against rounding to nearest in the same
// run, and with the update on the host (the test backend again):
//
//	go test ./gomlx_trainer/grpo -run '^$' -bench MasterWeights -benchtime 20x
func BenchmarkMasterWeights(b *testing.B) {
	modes := []struct {
		name string
		prec precision.Optimizer
		host bool
	}{
		{"none", precision.Optimizer{Master: precision.MasterNone}, false},
		{"float32", precision.Optimizer{}, false},
		{"remainder", precision.Optimizer{Master: precision.MasterRemainder}, false},
		{"stochastic", precision.Optimizer{Master: precision.MasterStochastic}, false},
		{"remainder+cpu-offload", precision.Optimizer{Master: precision.MasterRemainder}, true},
	}
	var base float64
	for _, m := range modes {
		b.Run(m.name, func(b *testing.B) {
			cfg, err := qwen3.NamedConfig("tiny")
			if err != nil {
				b.Fatal(err)
			}
			model, err := qwen3.NewRandom(cfg, dtypes.BFloat16, 1)
			if err != nil {
				b.Fatal(err)
			}
			l := NewLearner(testBackend(b), model, LossConfig{}, AdamWConfig{Beta1: 0.9, Beta2: 0.999, Eps: 1e-8, ClipNorm: 1, Precision: m.prec}, 1)
			if m.host {
				if err := l.OffloadOptimizer(testBackend(b), 1); err != nil {
					b.Fatal(err)
				}
			}
			step := func() {
				if _, _, err := l.Step(testSequences(), StepOptions{SFT: true, LR: 1e-5}); err != nil {
					b.Fatal(err)
				}
			}
			step() // compiles the graphs
			b.ResetTimer()
			start := time.Now()
			for range b.N {
				step()
			}
			per := time.Since(start).Seconds() / float64(b.N)
			if m.name == "none" {
				base = per
			}
			b.ReportMetric(per*1e3, "ms/step")
			if base > 0 {
				b.ReportMetric(per/base, "x-none")
			}
		})
	}
}

// BenchmarkUpdateWeightByWeight times a warm-start step of the tiny model in
// bfloat16 (float32 master) with the update weight by weight, as one device
// runs it (Apply), against the update as one graph (applyWhole, what several
// devices run) in the same run, on the test backend:
//
//	go test ./gomlx_trainer/grpo -run '^$' -bench UpdateWeightByWeight -benchtime 20x
func BenchmarkUpdateWeightByWeight(b *testing.B) {
	var base float64
	for _, whole := range []bool{true, false} {
		name := "weight by weight"
		if whole {
			name = "one graph"
		}
		b.Run(name, func(b *testing.B) {
			cfg, err := qwen3.NamedConfig("tiny")
			if err != nil {
				b.Fatal(err)
			}
			model, err := qwen3.NewRandom(cfg, dtypes.BFloat16, 1)
			if err != nil {
				b.Fatal(err)
			}
			l := NewLearner(testBackend(b), model, LossConfig{}, AdamWConfig{Beta1: 0.9, Beta2: 0.999, Eps: 1e-8, ClipNorm: 1}, 1)
			batch, _ := packBatch(testSequences())
			step := func() {
				if _, err := l.accumulateSFT(batch); err != nil {
					b.Fatal(err)
				}
				apply := l.Apply
				if whole {
					apply = func(lr float64) (float64, error) {
						if _, err := l.applyWhole(lr); err != nil {
							return 0, err
						}
						return 0, l.freeAccumulators()
					}
				}
				if _, err := apply(1e-5); err != nil {
					b.Fatal(err)
				}
			}
			step() // compiles the graphs
			b.ResetTimer()
			start := time.Now()
			for range b.N {
				step()
			}
			per := time.Since(start).Seconds() / float64(b.N)
			if whole {
				base = per
			}
			b.ReportMetric(per*1e3, "ms/step")
			if base > 0 {
				b.ReportMetric(per/base, "x-one-graph")
			}
		})
	}
}
