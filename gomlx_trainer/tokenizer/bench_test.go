package tokenizer

import (
	"math"
	"os"
	"sync"
	"testing"
	"time"
)

// benchCorpus is the benchmark's text: MATH problems and their solutions.
func benchCorpus(b *testing.B) []string { return mathProblems(b, 1000) }

// hfSpeed is the reference's throughput on the corpus, measured once per run.
var hfSpeed struct {
	once          sync.Once
	single, batch float64 // tokens per second
}

// BenchmarkEncode measures Encode on one goroutine over MATH problems and
// solutions, and in the same run Hugging Face's tokenizers (npm, Rust inside)
// on the same corpus, in its two ways of use: one call per text, and one
// batch call kept on one thread. Each side's fastest pass over the corpus
// counts (the least disturbed by other work on the machine). It reports both
// throughputs and the ratio to the faster of the reference's two ways:
//
//	go test ./gomlx_trainer/tokenizer -run XXX -bench 'Encode$' -benchtime 5x
func BenchmarkEncode(b *testing.B) {
	tok, path := qwen(b)
	corpus := benchCorpus(b)
	hfSpeed.once.Do(func() {
		os.Setenv("RAYON_NUM_THREADS", "1") // the batch path on one core, like Encode here
		var res struct {
			Single, Batch struct{ Seconds, Tokens float64 }
		}
		hfRef(b, "bench", path, corpus, &res, "5")
		hfSpeed.single = res.Single.Tokens / res.Single.Seconds
		hfSpeed.batch = res.Batch.Tokens / res.Batch.Seconds
	})
	best := math.Inf(1)
	tokens := 0
	b.ResetTimer()
	for range b.N {
		start := time.Now()
		tokens = 0
		for _, s := range corpus {
			tokens += len(tok.Encode(s))
		}
		best = min(best, time.Since(start).Seconds())
	}
	speed := float64(tokens) / best
	b.ReportMetric(speed, "tokens/s")
	b.ReportMetric(hfSpeed.single, "hf-single-tokens/s")
	b.ReportMetric(hfSpeed.batch, "hf-batch-tokens/s")
	b.ReportMetric(speed/max(hfSpeed.single, hfSpeed.batch), "x-hf")
}

// BenchmarkLoad measures loading Qwen3's tokenizer.json.
func BenchmarkLoad(b *testing.B) {
	_, path := qwen(b)
	for range b.N {
		if _, err := Load(path); err != nil {
			b.Fatal(err)
		}
	}
}
