package qwen3

import (
	"math/rand/v2"
	"testing"

	"github.com/gomlx/compute/dtypes"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/ml/model"

	"github.com/mathrl/mathrl/gomlx_trainer/backend/backendtest"
	"github.com/mathrl/mathrl/gomlx_trainer/gomlxfix"
)

// BenchmarkEmbeddingGradientPeakMemory takes the gradient of a bfloat16
// embedding (vocabulary 151,936 as Qwen3's, hidden size 64, 2 x 128 tokens)
// two ways that both sum it in float32, and reports the peak heap growth of
// each, with the gradient and for the forward pass alone (a sampler's graph),
// measured in the same run: embed (a bfloat16 Gather, whose gradient
// gomlxfix.Install scatters into a float32 buffer) and a gather from a float32
// copy of the embedding. emb-MB is the embedding's own size in bfloat16.
//
// Measured on the Go backend: with the gradient, 75.6 MB both ways (25.3 MB
// for GoMLX's bfloat16 scatter, before the fix: the float32 buffer and its
// rounded copy); the forward pass alone, 0.014 MB for embed and 50.4 MB for
// the float32 copy, which every decoding step would make.
//
//	go test ./gomlx_trainer/qwen3 -run XXX -bench EmbeddingGradientPeakMemory -benchtime 1x
func BenchmarkEmbeddingGradientPeakMemory(b *testing.B) {
	const vocab, hidden, rows, seq = 151936, 64, 2, 128
	m := &Model{Store: model.NewStore()}
	rng := rand.New(rand.NewPCG(8, 5))
	m.setWeight("model.embed_tokens.weight", tensorIn(bf16Normal(rng, vocab*hidden, 0.02), dtypes.BFloat16, vocab, hidden))
	ids := zipfIDs(rows, seq, vocab, 6)
	adjoint := tensorIn(bf16Normal(rng, rows*seq*hidden, 1), dtypes.Float32, rows, seq, hidden)
	backend := backendtest.New(b)
	gomlxfix.Install()
	graph := func(lookup func(emb, ids *Node) *Node, grad bool) *model.Exec {
		return model.MustNewExec(backend, m.Store, func(scope *model.Scope, ids, c *Node) *Node {
			emb := weight(scope, ids.Graph(), "model.embed_tokens.weight")
			loss := ReduceAllSum(Mul(c, ConvertDType(lookup(emb, ids), dtypes.Float32)))
			if !grad {
				return loss
			}
			return Gradient(loss, emb)[0]
		})
	}
	index := func(ids *Node) *Node { return InsertAxes(ids, -1) }
	fromCopy := func(emb, ids *Node) *Node {
		return ConvertDType(Gather(ConvertDType(emb, dtypes.Float32), index(ids)), emb.DType())
	}
	b.ResetTimer()
	for range b.N {
		for _, way := range []struct {
			name   string
			lookup func(emb, ids *Node) *Node
		}{{"embed", embed}, {"f32-copy", fromCopy}} {
			b.ReportMetric(measure(b, graph(way.lookup, true), ids, adjoint).peakBytes/1e6, way.name+"-grad-peak-MB")
			b.ReportMetric(measure(b, graph(way.lookup, false), ids, adjoint).peakBytes/1e6, way.name+"-fwd-peak-MB")
		}
		b.ReportMetric(vocab*hidden*2/1e6, "emb-MB")
	}
}
