package qwen3

import (
	"os"
	"runtime"
	"runtime/metrics"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gomlx/compute/dtypes"
)

// heapPeak samples the Go heap's live object bytes until stop is called and
// returns the largest value seen.
func heapPeak() (stop func() uint64) {
	var peak atomic.Uint64
	done := make(chan struct{})
	finished := make(chan struct{})
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	go func() {
		defer close(finished)
		tick := time.NewTicker(100 * time.Microsecond)
		defer tick.Stop()
		for {
			metrics.Read(sample)
			if v := sample[0].Value.Uint64(); v > peak.Load() {
				peak.Store(v)
			}
			select {
			case <-done:
				return
			case <-tick.C:
			}
		}
	}()
	return func() uint64 {
		close(done)
		<-finished
		return peak.Load()
	}
}

// BenchmarkLoadPeakMemory loads a random checkpoint of Qwen3-0.6B's shapes
// (bf16, 1.2 GB; MATHRL_BENCH_CONFIG names another config) and reports the
// largest growth of the Go heap during Load as a multiple of the weights' own
// size, measured in the same run: 1 means the loader never held more than the
// weights themselves, 2 would be a second copy of the checkpoint.
//
//	go test ./gomlx_trainer/qwen3 -run XXX -bench LoadPeakMemory -benchtime 1x
func BenchmarkLoadPeakMemory(b *testing.B) {
	name := os.Getenv("MATHRL_BENCH_CONFIG")
	if name == "" {
		name = "qwen3-0.6b"
	}
	cfg, err := NamedConfig(name)
	if err != nil {
		b.Fatal(err)
	}
	dir := b.TempDir()
	if err := WriteRandom(cfg, dir, "BF16", 1); err != nil {
		b.Fatal(err)
	}
	weights := float64(cfg.Params()) * 2 // bfloat16
	b.ResetTimer()
	for range b.N {
		runtime.GC()
		before := heapPeak()()
		stop := heapPeak()
		m, err := Load(dir, dtypes.BFloat16)
		peak := stop()
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(peak-before)/weights, "peak-heap/weights")
		b.ReportMetric(weights/1e9, "weights-GB")
		runtime.KeepAlive(m)
	}
}
