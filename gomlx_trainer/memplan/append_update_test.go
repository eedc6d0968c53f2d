package memplan_test

import (
	"testing"

	"github.com/gomlx/compute/dtypes"

	"github.com/mathrl/mathrl/gomlx_trainer/memplan"
	"github.com/mathrl/mathrl/gomlx_trainer/precision"
)

// TestAppendChunkByHand: 4 sequences of a 100-token prompt and 900 new
// tokens with tool outputs appended end at a cache of 1024 slots, and the
// decode step, fed a chunk of c appended tokens there, holds the peak: E =
// 4·c·2·1024 scores of 2d + 4 − 4 bytes in float32, the chunk's token tensors
// 4·c·(2H + q + 2kv)·d and 3 float32 [B, V]. Without AppendChunk c is the
// sampler's default, 64 (not MaxChunk's 512); an explicit AppendChunk is
// bucketed as the sampler does (20 → 32).
func TestAppendChunkByHand(t *testing.T) {
	cfg := handConfig()
	step := func(c int64) int64 { return 4*c*2*1024*8 + 4*c*(8+4+4)*4 + 3*4*4*10 }
	for _, tc := range []struct {
		appendChunk, maxChunk int
		chunk                 int64
	}{{0, 0, 64}, {0, 256, 64}, {64, 0, 64}, {20, 0, 32}, {128, 16, 128}} {
		s := memplan.Session{DType: dtypes.Float32, Batch: 4, PromptLen: 100, ResponseLen: 900,
			MaxChunk: tc.maxChunk, AppendChunk: tc.appendChunk, AppendChunks: true}
		got := memplan.Sampling(cfg, s, memplan.XLA)
		if got.Phase != "decode" || got.Term(memplan.TermCache) != 2*2*4*1024*2*4 {
			t.Errorf("append chunk %d, max chunk %d: %+v, want the decode at 1024 slots", tc.appendChunk, tc.maxChunk, got)
		}
		if want := step(tc.chunk); got.Term(memplan.TermStep) != want {
			t.Errorf("append chunk %d, max chunk %d: decode step %d bytes, want %d (a chunk of %d)",
				tc.appendChunk, tc.maxChunk, got.Term(memplan.TermStep), want, tc.chunk)
		}
	}
}

// TestOptimizerUpdateOnOneDevice: num_devices 1 is one device, as 0 is: the
// update runs weight by weight and holds the fresh state of the largest
// weight (the embedding, 40 elements, bf16 weight 2 + float32 moments 8 +
// float32 master 4 bytes each), not a copy of every parameter's state and
// accumulator.
func TestOptimizerUpdateOnOneDevice(t *testing.T) {
	for _, devices := range []int{0, 1} {
		s := memplan.Step{DType: dtypes.BFloat16, Devices: devices,
			State: memplan.State{Precision: precision.Optimizer{Master: precision.MasterFloat32}}}
		if got := memplan.OptimizerUpdate(handConfig(), s, memplan.XLA); got != 14*40 {
			t.Errorf("%d devices: the update holds %d bytes, want %d", devices, got, 14*40)
		}
	}
}
