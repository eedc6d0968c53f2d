package qwen3

import (
	"math/rand/v2"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"testing"
	"time"

	"github.com/gomlx/gomlx/pkg/core/dtypes"
	. "github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/ml/context"

	"github.com/mathrl/mathrl/gomlx_trainer/backend/backendtest"
	"github.com/mathrl/mathrl/gomlx_trainer/gomlxfix"
)

// runCost is what one execution of a graph cost: the largest growth of the Go
// heap (the pure Go backend keeps its buffers there) and the wall time.
type runCost struct {
	peakBytes float64
	seconds   float64
}

// measure runs exec once to compile it, once with the garbage collector at 5%
// (so that the heap follows the live buffers closely) while sampling the heap,
// and once more with the default collector for the time.
func measure(b *testing.B, exec *context.Exec, args ...any) runCost {
	b.Helper()
	exec.MustExec(args...)
	runtime.GC()
	runtime.GC() // the second empties the backend's buffer pools
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(sample)
	before := sample[0].Value.Uint64()
	old := debug.SetGCPercent(5)
	stop := heapPeak()
	exec.MustExec(args...)
	peak := stop()
	debug.SetGCPercent(old)
	runtime.GC()
	start := time.Now()
	exec.MustExec(args...)
	return runCost{peakBytes: float64(peak) - float64(before), seconds: time.Since(start).Seconds()}
}

// randomIDs returns [rows, cols] ids below vocab.
func randomIDs(rows, cols, vocab int, seed uint64) [][]int32 {
	rng := rand.New(rand.NewPCG(seed, 1))
	ids := make([][]int32, rows)
	for r := range ids {
		for range cols {
			ids[r] = append(ids[r], int32(rng.IntN(vocab)))
		}
	}
	return ids
}

// BenchmarkLogProbsPeakMemory runs the log-probs, entropies and their gradient
// with respect to the hidden states and the head's weight (vocabulary 151,936,
// hidden size 64, 2 x 128 positions) with the full logits and in chunks of 32
// positions, and reports the peak heap growth of each and their ratio, and the
// ratio of their times, measured in the same run.
//
//	go test ./gomlx_trainer/qwen3 -run XXX -bench LogProbsPeakMemory -benchtime 1x
func BenchmarkLogProbsPeakMemory(b *testing.B) {
	cfg := Config{VocabSize: 151936, Hidden: 64, Intermediate: 64, Layers: 1, Heads: 1, KVHeads: 1, HeadDim: 64,
		RMSNormEps: 1e-6, RopeTheta: 1e6, TieEmbeddings: true, MaxPositions: 512, EOSTokenIDs: []int{2}, DType: "float32"}
	const rows, seq, chunk = 2, 128, 32
	m, err := NewRandom(cfg, dtypes.Float32, 1)
	if err != nil {
		b.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(2, 3))
	hidden := make([][][]float32, rows)
	for r := range hidden {
		hidden[r] = make([][]float32, seq)
		for p := range hidden[r] {
			for range cfg.Hidden {
				hidden[r][p] = append(hidden[r][p], float32(rng.NormFloat64()))
			}
		}
	}
	targets := randomIDs(rows, seq, cfg.VocabSize, 4)
	backend := backendtest.New(b)
	gomlxfix.Install() // matmul gradients for the head, as the learner has
	graph := func(chunk int) *context.Exec {
		return context.MustNewExec(backend, m.Ctx, func(ctx *context.Context, h, tg *Node) []*Node {
			var logp, entropy *Node
			if chunk > 0 {
				logp, entropy = TargetLogProbsChunked(ctx, cfg, h, tg, 1, chunk)
			} else {
				logp, entropy = TargetLogProbs(head(ctx, cfg, h), tg, 1)
			}
			loss := Add(ReduceAllSum(logp), MulScalar(ReduceAllSum(entropy), 0.01))
			return append([]*Node{loss}, Gradient(loss, h, headWeight(ctx, cfg, h.Graph()))...)
		})
	}
	b.ResetTimer()
	for range b.N {
		full := measure(b, graph(0), hidden, targets)
		chunked := measure(b, graph(chunk), hidden, targets)
		b.ReportMetric(full.peakBytes/1e6, "full-peak-MB")
		b.ReportMetric(chunked.peakBytes/1e6, "chunked-peak-MB")
		b.ReportMetric(chunked.peakBytes/full.peakBytes, "chunked/full-peak")
		b.ReportMetric(chunked.seconds/full.seconds, "chunked/full-time")
		b.ReportMetric(float64(rows*seq*cfg.VocabSize*4)/1e6, "logits-MB")
	}
}

// BenchmarkRematPeakMemory runs a training graph (the log-probs of 2 x 256
// tokens and their gradient with respect to every weight) of a 6-layer model
// (hidden 256) with and without rematerialised layers, and reports the peak
// heap growth and the time of each, and their ratios, measured in the same
// run. act-KB/token/layer estimates the activations one layer keeps for the
// backward pass: (peak without - peak with) / (layers - 1) / tokens.
//
//	go test ./gomlx_trainer/qwen3 -run XXX -bench RematPeakMemory -benchtime 1x
func BenchmarkRematPeakMemory(b *testing.B) {
	cfg, err := NamedConfig("small")
	if err != nil {
		b.Fatal(err)
	}
	const rows, seq = 2, 256
	m, err := NewRandom(cfg, dtypes.Float32, 1)
	if err != nil {
		b.Fatal(err)
	}
	ids, targets := randomIDs(rows, seq, cfg.VocabSize, 5), randomIDs(rows, seq, cfg.VocabSize, 6)
	backend := backendtest.New(b)
	graph := func(opts ModelOptions) *context.Exec {
		return context.MustNewExec(backend, m.Ctx, func(ctx *context.Context, ids, tg *Node) []*Node {
			logp, _ := TargetLogProbsOf(ctx, cfg, ids, tg, 1, opts)
			loss := ReduceAllSum(logp)
			var ws []*Node
			for _, spec := range cfg.Tensors() {
				ws = append(ws, weight(ctx, ids.Graph(), spec.Name))
			}
			return append([]*Node{loss}, Gradient(loss, ws...)...)
		})
	}
	b.ResetTimer()
	for range b.N {
		plain := measure(b, graph(ModelOptions{}), ids, targets)
		remat := measure(b, graph(ModelOptions{Remat: true}), ids, targets)
		b.ReportMetric(plain.peakBytes/1e6, "plain-peak-MB")
		b.ReportMetric(remat.peakBytes/1e6, "remat-peak-MB")
		b.ReportMetric(remat.peakBytes/plain.peakBytes, "remat/plain-peak")
		b.ReportMetric(remat.seconds/plain.seconds, "remat/plain-time")
		perLayer := (plain.peakBytes - remat.peakBytes) / float64(cfg.Layers-1) / float64(rows*seq)
		b.ReportMetric(perLayer/1e3, "act-KB/token/layer")
	}
}
