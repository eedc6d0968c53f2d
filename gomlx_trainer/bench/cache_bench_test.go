package bench

import (
	"fmt"
	"testing"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"

	"github.com/mathrl/mathrl/gomlx_trainer/backend/backendtest"
)

// BenchmarkCacheUpdate times what a decode step of qwen3-0.6b-4l at batch 64
// does to its key/value cache, alone: one new position written into each of
// the 8 cache buffers ([64, 8, 128, 128] float32, 33.6 MB each; 4 layers' keys
// and values), with no other work, each call donating the buffers the last
// one returned, as the sampler does. Where the compiled step updates a cache
// buffer in place, this costs almost nothing; where it cannot (XLA through
// go-xla, which compiles no input/output aliasing, so a donated buffer is not
// reused), each buffer is copied whole into a new one every call, and the
// reported cache-GB/s (the cache bytes a call returns, per second) is the
// rate of that copy:
//
//	MATHRL_TEST_BACKEND=xla-cpu go test ./gomlx_trainer/bench -run '^$' -bench CacheUpdate
func BenchmarkCacheUpdate(b *testing.B) {
	be := backendtest.New(b)
	dims := []int{64, 8, 128, 128}
	size := 64 * 8 * 128 * 128
	for _, buffers := range []int{1, 8} {
		b.Run(fmt.Sprintf("buffers=%d", buffers), func(b *testing.B) {
			caches := make([]*tensors.Tensor, buffers)
			for i := range caches {
				caches[i] = tensors.FromFlatDataAndDimensions(make([]float32, size), dims...)
			}
			exec := graph.MustNewExec(be, func(xs []*graph.Node) []*graph.Node {
				out := make([]*graph.Node, len(xs))
				for i, x := range xs {
					g := x.Graph()
					row := graph.Ones(g, x.Shape().Clone())
					row = graph.Slice(row, graph.AxisRange(), graph.AxisRange(), graph.AxisRange(0, 1)) // [64, 8, 1, 128]
					zero, pos := graph.Const(g, int32(0)), graph.Const(g, int32(65))
					out[i] = graph.DynamicUpdateSlice(x, row, []*graph.Node{zero, zero, pos, zero})
				}
				return out
			})
			defer exec.Finalize()
			defer func() {
				for _, c := range caches {
					c.FinalizeAll()
				}
			}()
			// As the sampler steps: each call donates the caches the last one
			// returned.
			call := func() {
				args := make([]any, buffers)
				for i, c := range caches {
					d, err := graph.DonateTensorBuffer(c, be, 0)
					if err != nil {
						b.Fatal(err)
					}
					args[i] = d
				}
				caches = exec.MustExec(args...)
			}
			call() // compiles
			b.ResetTimer()
			for range b.N {
				call()
			}
			bytes := float64(buffers * size * dtypes.Float32.Size())
			b.ReportMetric(bytes*float64(b.N)/b.Elapsed().Seconds()/1e9, "cache-GB/s")
		})
	}
}
