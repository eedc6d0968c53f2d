package qwen3

import (
	"math/rand/v2"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"testing"
	"time"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/shapes"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/ml/model"

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
func measure(b *testing.B, exec *model.Exec, args ...any) runCost {
	b.Helper()
	exec.MustCall(args...)
	runtime.GC()
	runtime.GC() // the second empties the backend's buffer pools
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(sample)
	before := sample[0].Value.Uint64()
	old := debug.SetGCPercent(5)
	stop := heapPeak()
	exec.MustCall(args...)
	peak := stop()
	debug.SetGCPercent(old)
	runtime.GC()
	start := time.Now()
	exec.MustCall(args...)
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
	graph := func(chunk int) *model.Exec {
		return model.MustNewExec(backend, m.Store, func(scope *model.Scope, h, tg *Node) []*Node {
			var logp, entropy *Node
			if chunk > 0 {
				logp, entropy = TargetLogProbsChunked(scope, cfg, h, tg, 1, chunk)
			} else {
				logp, entropy = TargetLogProbs(head(scope, cfg, h), tg, 1)
			}
			loss := Add(ReduceAllSum(logp), MulScalar(ReduceAllSum(entropy), 0.01))
			return append([]*Node{loss}, Gradient(loss, h, headWeight(scope, cfg, h.Graph()))...)
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
// (hidden 256) with and without rematerialised layers, and with GoMLX's own
// gradient checkpointing (Node.Checkpoint at each layer's input) in their
// place, and reports the peak heap growth and the time of each, and their
// ratios, measured in the same run. act-KB/token/layer estimates the
// activations one layer keeps for the backward pass: (peak without - peak
// with) / (layers - 1) / tokens.
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
	graph := func(opts ModelOptions, checkpoint bool) *model.Exec {
		return model.MustNewExec(backend, m.Store, func(scope *model.Scope, ids, tg *Node) []*Node {
			var logp *Node
			if checkpoint {
				logp, _ = TargetLogProbs(head(scope, cfg, checkpointedHidden(scope, cfg, ids)), tg, 1)
			} else {
				logp, _ = TargetLogProbsOf(scope, cfg, ids, tg, 1, opts)
			}
			loss := ReduceAllSum(logp)
			var ws []*Node
			for _, spec := range cfg.Tensors() {
				ws = append(ws, weight(scope, ids.Graph(), spec.Name))
			}
			return append([]*Node{loss}, Gradient(loss, ws...)...)
		})
	}
	b.ResetTimer()
	for range b.N {
		plain := measure(b, graph(ModelOptions{}, false), ids, targets)
		remat := measure(b, graph(ModelOptions{Remat: true}, false), ids, targets)
		checkpointed := measure(b, graph(ModelOptions{}, true), ids, targets)
		b.ReportMetric(plain.peakBytes/1e6, "plain-peak-MB")
		b.ReportMetric(remat.peakBytes/1e6, "remat-peak-MB")
		b.ReportMetric(remat.peakBytes/plain.peakBytes, "remat/plain-peak")
		b.ReportMetric(remat.seconds/plain.seconds, "remat/plain-time")
		b.ReportMetric(checkpointed.peakBytes/1e6, "checkpoint-peak-MB")
		b.ReportMetric(checkpointed.peakBytes/plain.peakBytes, "checkpoint/plain-peak")
		b.ReportMetric(checkpointed.seconds/plain.seconds, "checkpoint/plain-time")
		perLayer := (plain.peakBytes - remat.peakBytes) / float64(cfg.Layers-1) / float64(rows*seq)
		b.ReportMetric(perLayer/1e3, "act-KB/token/layer")
	}
}

// checkpointedHidden is Hidden with GoMLX's gradient checkpointing instead of
// rematerialise: each layer's input is a Node.Checkpoint, so that GoMLX
// recomputes the layer in the backward pass.
func checkpointedHidden(scope *model.Scope, cfg Config, ids *Node) *Node {
	g := ids.Graph()
	b, t := ids.Shape().Dimensions[0], ids.Shape().Dimensions[1]
	emb := weight(scope, g, "model.embed_tokens.weight")
	x := embed(emb, ids)
	cos, sin := ropeTables(cfg, Iota(g, shapes.Make(dtypes.Int32, b, t), 1), emb.DType())
	visible := causal(g, b, t)
	kv := func(_ int, k, v *Node) (*Node, *Node, *Node, bool) { return k, v, visible, false }
	for i := 0; i < cfg.Layers; i++ {
		w := func(name string) *Node { return weight(scope, g, layerWeight(i, name)) }
		x = decoderLayer(cfg, i, x.Checkpoint(), w, cos, sin, kv)
	}
	return rmsNorm(x.StopCheckpoint(), weight(scope, g, "model.norm.weight"), cfg.RMSNormEps)
}
