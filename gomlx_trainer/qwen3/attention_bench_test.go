package qwen3

import (
	"testing"
	"time"

	"github.com/gomlx/compute"
	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/shapes"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/ml/model"

	"github.com/mathrl/mathrl/gomlx_trainer/backend/backendtest"
	"github.com/mathrl/mathrl/gomlx_trainer/gomlxfix"
)

// BenchmarkFusedAttention times the gradient of a random model's hidden
// states with respect to every weight, its causal attention built as the
// backend's fused attention (causalAttention) and from matmuls and a softmax
// (attention), in the same run, at the CPU demo's shapes (the tiny model's
// warm-start step, 4 × 200 tokens, and GRPO micro-batch, 32 × 256) and the
// small config's (8 × 128), and reports the ms of each and their ratio: what
// gomlxfix.FusedAttention decides on. It needs a backend with fused attention
// (the Go backend has it since GoMLX v0.28.16).
//
//	go test ./gomlx_trainer/qwen3 -run XXX -bench FusedAttention -benchtime 2x
func BenchmarkFusedAttention(b *testing.B) {
	backend := backendtest.New(b)
	if !backend.Capabilities().Operations[compute.OpTypeFusedScaledDotProductAttention] {
		b.Skipf("backend %s has no fused attention", backend)
	}
	gomlxfix.Install() // as the learner has
	for _, sh := range []struct {
		name, config string
		batch, seq   int
	}{{"tiny-4x200", "tiny", 4, 200}, {"tiny-32x256", "tiny", 32, 256}, {"small-8x128", "small", 8, 128}} {
		b.Run(sh.name, func(b *testing.B) {
			cfg, err := NamedConfig(sh.config)
			if err != nil {
				b.Fatal(err)
			}
			m, err := NewRandom(cfg, dtypes.Float32, 1)
			if err != nil {
				b.Fatal(err)
			}
			ids := randomIDs(sh.batch, sh.seq, cfg.VocabSize, 2)
			build := func(fused bool) *model.Exec {
				return model.MustNewExec(backend, m.Store, func(scope *model.Scope, ids *Node) []*Node {
					g := ids.Graph()
					var visible *Node // nil: causalAttention
					if !fused {
						visible = causal(g, sh.batch, sh.seq)
					}
					kv := func(_ int, k, v *Node) (*Node, *Node, *Node, bool) { return k, v, visible, false }
					positions := Iota(g, shapes.Make(dtypes.Int32, sh.batch, sh.seq), 1)
					loss := ReduceAllSum(decoder(scope, cfg, ids, positions, kv, false))
					var ws []*Node
					for _, spec := range cfg.Tensors() {
						ws = append(ws, weight(scope, g, spec.Name))
					}
					return Gradient(loss, ws...)
				})
			}
			timeIt := func(e *model.Exec) time.Duration {
				e.MustCall(ids) // compile
				start := time.Now()
				for range b.N {
					e.MustCall(ids)
				}
				return time.Since(start)
			}
			b.ResetTimer()
			fused := timeIt(build(true))
			decomposed := timeIt(build(false))
			b.ReportMetric(float64(fused)/float64(b.N)/1e6, "fused-ms/op")
			b.ReportMetric(float64(decomposed)/float64(b.N)/1e6, "decomposed-ms/op")
			b.ReportMetric(float64(fused)/float64(decomposed), "fused/decomposed")
		})
	}
}
