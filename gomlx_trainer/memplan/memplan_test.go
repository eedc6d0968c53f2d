package memplan_test

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/gomlx/compute/dtypes"

	"github.com/mathrl/mathrl/gomlx_trainer/memplan"
	"github.com/mathrl/mathrl/gomlx_trainer/precision"
	"github.com/mathrl/mathrl/gomlx_trainer/qwen3"
)

// handConfig is small enough to work every term out by hand: V=10, H=4, I=8,
// 2 layers, 2 query heads and 1 key/value head of width 2 (q = 4, kv = 2).
// Params: V·H + L·(H·q + 2·H·kv + q·H + 3·H·I + 2H + 2·HeadDim) + H
// = 40 + 2·(16 + 16 + 16 + 96 + 8 + 4) + 4 = 356.
func handConfig() qwen3.Config {
	return qwen3.Config{VocabSize: 10, Hidden: 4, Intermediate: 8, Layers: 2, Heads: 2, KVHeads: 1, HeadDim: 2,
		RMSNormEps: 1e-6, RopeTheta: 10000, TieEmbeddings: true}
}

func TestHandConfigParams(t *testing.T) {
	if p := handConfig().Params(); p != 356 {
		t.Fatalf("Params() = %d, want 356: the hand-worked tests below assume it", p)
	}
}

// TestTrainStepByHand works out the XLA terms of 3 rows of 5 tokens in
// float32 (d = 4): N = 15 tokens, 3·2·5·5 = 150 scores per layer.
func TestTrainStepByHand(t *testing.T) {
	cfg := handConfig()
	step := memplan.Step{DType: dtypes.Float32, Rows: 3, SeqLen: 5}
	got := memplan.TrainStep(cfg, step, memplan.XLA)
	want := memplan.Breakdown{Phase: "layer backward", Terms: []memplan.Term{
		{memplan.TermWeights, 4 * 356},
		{memplan.TermAccumulators, 4 * 356},
		{memplan.TermMoments, 8 * 356},
		{memplan.TermLayers, 2 * 15 * (4*4 + 3*4 + 3*2 + 3*8) * 4}, // L·N·(4H + 3q + 3kv + 3I)·d = 6960
		{memplan.TermScores, 2 * 150 * 4},                          // L·scores·4 = 1200
		{memplan.TermLayerBack, 150*(4+2*4) + 15*(4+2*8)*4},        // scores·(4 + 2d) + N·(H + 2I)·d = 3000
	}}
	// The head backward holds 3·5·10·(d + 8) + V·H·d = 1960 < 3000 instead.
	check(t, got, want)
}

// TestTrainStepRecomputeByHand: with RecomputeLayers only the layer inputs
// stay, L·N·H·d = 2·15·4·4 = 480, and the backward of one layer recomputes
// N·layerTokens + scores·4 = 15·232 + 150·4 = 4080.
func TestTrainStepRecomputeByHand(t *testing.T) {
	step := memplan.Step{DType: dtypes.Float32, Rows: 3, SeqLen: 5, RecomputeLayers: true}
	got := memplan.TrainStep(handConfig(), step, memplan.XLA)
	if got.Term(memplan.TermLayerInputs) != 480 || got.Term(memplan.TermRecomputed) != 4080 ||
		got.Term(memplan.TermLayers) != 0 || got.Term(memplan.TermScores) != 0 {
		t.Errorf("recompute: %+v", got)
	}
}

// TestLogProbChunk: the head of 3 rows × chunk 2 × vocab 10 × (d + 8) + V·H·d
// = 720 + 160, against 3·5·10·12 + 160 = 1960 without chunks; on a sequence
// shorter than the chunk, the chunk changes nothing.
func TestLogProbChunk(t *testing.T) {
	cfg := handConfig()
	cfg.VocabSize = 100000 // so that the head is the peak
	for _, tc := range []struct {
		chunk, seq int
		want       int64
	}{
		{0, 5, 3*5*100000*12 + 100000*4*4},
		{2, 5, 3*2*100000*12 + 100000*4*4},
		{8, 5, 3*5*100000*12 + 100000*4*4},
	} {
		step := memplan.Step{DType: dtypes.Float32, Rows: 3, SeqLen: tc.seq, LogProbChunk: tc.chunk}
		if got := memplan.TrainStep(cfg, step, memplan.XLA).Term(memplan.TermHead); got != tc.want {
			t.Errorf("chunk %d of %d positions: head %d bytes, want %d", tc.chunk, tc.seq, got, tc.want)
		}
	}
}

// TestCPURulesByHand: the CPU keeps more per layer, (6H + 4q + 4kv + 5I)·d =
// 88·4 per token, and 9 bytes per score, plus a transposed copy of every
// weight it multiplies, (V·H + L·(2Hq + 2Hkv + 3HI))·d = (40 + 2·144)·4 (only
// the head's, 40·4, when layers are recomputed); its optimizer step keeps a
// second set of accumulators (4P) beside two float32 copies of the largest
// weight (the embedding, 40 elements).
func TestCPURulesByHand(t *testing.T) {
	cfg := handConfig()
	got := memplan.TrainStep(cfg, memplan.Step{DType: dtypes.Float32, Rows: 3, SeqLen: 5}, memplan.CPU)
	if l, s := got.Term(memplan.TermLayers), got.Term(memplan.TermScores); l != 2*15*88*4 || s != 2*150*9 {
		t.Errorf("layers %d, scores %d bytes; want %d, %d", l, s, 2*15*88*4, 2*150*9)
	}
	if w := got.Term(memplan.TermTransposed); w != (40+2*144)*4 {
		t.Errorf("transposed weights %d bytes, want %d", w, (40+2*144)*4)
	}
	// The Go backend writes the donated buffers in place, with two float32
	// temporaries of the largest weight; under the XLA rules the update runs
	// weight by weight, and holds a fresh copy of the largest weight and its
	// moments (GoMLX declares no aliasing).
	for _, r := range []memplan.Rules{memplan.CPU, memplan.XLA} {
		want := int64(8 * 40)
		if r == memplan.XLA {
			want = 12 * 40
		}
		idle := memplan.TrainStep(cfg, memplan.Step{DType: dtypes.Float32, Rows: 1, SeqLen: 1, RecomputeLayers: true, Devices: 1}, r)
		if up := memplan.OptimizerUpdate(cfg, memplan.Step{DType: dtypes.Float32}, r); up != want {
			t.Errorf("%s rules: the optimizer update holds %d bytes, want %d (%+v)", r, up, want, idle)
		}
	}
}

// TestResidentQwen3_8B: 8,190,735,360 parameters in bfloat16 keep 2 + 4 + 8
// bytes each between steps (weights, float32 accumulators, float32 moments),
// plus 4 for the default float32 master copy (20 with a frozen reference,
// which adds 2), or 2 for the master's 16 low bits; with the optimizer on the
// host only the weights and accumulators stay, 6 bytes each.
func TestResidentQwen3_8B(t *testing.T) {
	cfg, err := qwen3.NamedConfig("qwen3-8b")
	if err != nil {
		t.Fatal(err)
	}
	const p = 8_190_735_360
	if cfg.Params() != p {
		t.Fatalf("qwen3-8b has %d parameters, want %d", cfg.Params(), p)
	}
	b := memplan.Breakdown{Terms: memplan.Resident(cfg, dtypes.BFloat16, true, memplan.State{})}
	if b.Total() != 20*p || b.Term(memplan.TermWeights) != 2*p || b.Term(memplan.TermReference) != 2*p || b.Term(memplan.TermMaster) != 4*p {
		t.Errorf("resident %+v, want 20 bytes per parameter", b)
	}
	remainder := memplan.State{Precision: precision.Optimizer{Master: precision.MasterRemainder}}
	if got := (memplan.Breakdown{Terms: memplan.Resident(cfg, dtypes.BFloat16, false, remainder)}); got.Total() != 16*p {
		t.Errorf("with remainders: %+v, want 16 bytes per parameter", got)
	}
	remainder.OffloadFraction = 1
	if got := (memplan.Breakdown{Terms: memplan.Resident(cfg, dtypes.BFloat16, false, remainder)}); got.Total() != 6*p {
		t.Errorf("with the optimizer on the host: %+v, want 6 bytes per parameter", got)
	}
	if got := memplan.Host(cfg, dtypes.BFloat16, remainder); got != 12*p {
		t.Errorf("host memory %d, want 12 bytes per parameter (the weight, its low bits, the moments)", got)
	}
}

// TestSamplingByHand: 4 sequences of a 100-token prompt and 60 new tokens
// grow the cache to 256 slots (the sampler's buckets: 64, 128, 256), so the
// cache is 2·L·B·kv·slots·HeadDim·d = 2·2·4·1·256·2·4 bytes at the end and
// 2·2·4·1·128·2·4 while the prompts are read, beside the prefix of the
// prompt being prefilled (its 99 tokens but the last, alone: one row at 128
// slots, 2·2·1·1·128·2·4), read in one chunk of 128 over its 128 slots.
func TestSamplingByHand(t *testing.T) {
	cfg := handConfig()
	s := memplan.Session{DType: dtypes.Float32, Batch: 4, PromptLen: 100, ResponseLen: 60}
	got := memplan.Sampling(cfg, s, memplan.XLA)
	if got.Phase != "prefill" || got.Term(memplan.TermCache) != 2*2*4*128*2*4+2*2*1*128*2*4 {
		t.Errorf("%+v, want the prefill at 128 slots", got)
	}
	// Prefill step, one row: E = 1·2·128·128 scores of 2d + 4 - 4 bytes in
	// float32, the chunk's token tensors 1·128·(2H + q + 2kv)·d, and 3 float32
	// [1, V].
	wantStep := int64(1*2*128*128*8 + 1*128*(8+4+4)*4 + 3*1*4*10)
	if got.Term(memplan.TermStep) != wantStep {
		t.Errorf("prefill step %d bytes, want %d", got.Term(memplan.TermStep), wantStep)
	}
	// Inside training the moments stay (8P); the accumulators exist only
	// inside a step, and offload_train moves the moments to the host too.
	s.Training = true
	if train := memplan.Sampling(cfg, s, memplan.XLA); train.Total()-got.Total() != 8*356 {
		t.Errorf("inside training the moments add %d bytes, want 8P = %d", train.Total()-got.Total(), 8*356)
	}
	s.State.OffloadTrain = true
	if train := memplan.Sampling(cfg, s, memplan.XLA); train.Total() != got.Total() {
		t.Errorf("with offload_train sampling holds %d bytes, want %d, as outside training", train.Total(), got.Total())
	}
}

// TestPlanRows checks the micro-batch a recipe plans for and the largest that
// fits, against limits just above and below the prediction.
func TestPlanRows(t *testing.T) {
	base := memplan.Recipe{DType: dtypes.BFloat16, GlobalBatch: 64, PromptLen: 100, ResponseLen: 400, RolloutSamples: 64}
	for _, tc := range []struct {
		name      string
		edit      func(*memplan.Recipe)
		seq, rows int
	}{
		{"whole global batch", func(*memplan.Recipe) {}, 512, 64},
		{"micro-batch", func(r *memplan.Recipe) { r.MicroBatch = 8 }, 512, 8},
		{"token budget", func(r *memplan.Recipe) { r.MaxTokens = 2000 }, 512, 3},
		{"budget under one sequence", func(r *memplan.Recipe) { r.MaxTokens = 100 }, 512, 1},
		{"short sequences pad to 32", func(r *memplan.Recipe) { r.PromptLen, r.ResponseLen, r.MicroBatch = 10, 20, 2 }, 32, 2},
	} {
		rc := base
		tc.edit(&rc)
		if rc.SeqLen() != tc.seq || rc.Rows() != tc.rows {
			t.Errorf("%s: %d rows of %d tokens, want %d of %d", tc.name, rc.Rows(), rc.SeqLen(), tc.rows, tc.seq)
		}
	}
	cfg, _ := qwen3.NamedConfig("small")
	rc := base
	rc.MicroBatch = 4
	four := memplan.TrainStep(cfg, memplan.Step{DType: rc.DType, Rows: 4, SeqLen: rc.SeqLen()}, memplan.XLA).Total()
	for _, tc := range []struct {
		limit int64
		want  int
	}{{four, 4}, {four - 1, 3}, {1, 0}} {
		rep := memplan.Plan(cfg, rc, tc.limit, memplan.XLA)
		if rep.MaxRows != tc.want {
			t.Errorf("limit %d: largest micro-batch %d, want %d", tc.limit, rep.MaxRows, tc.want)
		}
	}
}

// TestWriteTo checks the report's verdict and names, and ErrDoesNotFit.
func TestWriteTo(t *testing.T) {
	cfg, _ := qwen3.NamedConfig("qwen3-4b")
	rc := memplan.Recipe{DType: dtypes.BFloat16, GlobalBatch: 8, MicroBatch: 1, PromptLen: 1024, ResponseLen: 3072,
		RolloutSamples: 8, SamplingBatch: 8, EvalResponseLen: 4096, RecomputeLayers: true}
	for _, tc := range []struct {
		limit int64
		fits  bool
		lines []string
	}{
		{141 * memplan.GiB, true, []string{"verdict: FITS", "training step: micro-batch of 1 x 4096 tokens", "dominant term: AdamW moments"}},
		{40 * memplan.GiB, false, []string{"verdict: DOES NOT FIT", "over the limit",
			"largest micro-batch at 4096 tokens: 0 (0 tokens); without recompute_layers 0, with it 0\n"}},
	} {
		rep := memplan.Plan(cfg, rc, tc.limit, memplan.XLA)
		var buf bytes.Buffer
		if _, err := rep.WriteTo(&buf); err != nil {
			t.Fatal(err)
		}
		if rep.Fits() != tc.fits {
			t.Errorf("limit %s: fits %v, want %v", memplan.FormatGiB(tc.limit), rep.Fits(), tc.fits)
		}
		for _, l := range tc.lines {
			if !strings.Contains(buf.String(), l) {
				t.Errorf("limit %s: report lacks %q:\n%s", memplan.FormatGiB(tc.limit), l, buf.String())
			}
		}
	}
	rc.RecomputeLayers = false
	if rep := memplan.Plan(cfg, rc, 141*memplan.GiB, memplan.XLA); rep.MaxRows != 0 || rep.MaxRowsRecompute == 0 {
		t.Errorf("without recomputation %d rows fit, with it %d; want none, then some", rep.MaxRows, rep.MaxRowsRecompute)
	}
	if err := fmt.Errorf("plan: %w", memplan.ErrDoesNotFit); !errors.Is(err, memplan.ErrDoesNotFit) {
		t.Error("ErrDoesNotFit does not unwrap")
	}
}

func TestParseSize(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
		ok   bool
	}{
		{"141GiB", 141 << 30, true}, {"80 GB", 80e9, true}, {"512MiB", 512 << 20, true}, {"1.5e9", 1.5e9, true},
		{"2gib", 2 << 30, true}, {"1TB", 1e12, true}, {"", 0, false}, {"GiB", 0, false}, {"-3GiB", 0, false}, {"lots", 0, false},
	} {
		got, err := memplan.ParseSize(tc.in)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d, ok %v", tc.in, got, err, tc.want, tc.ok)
		}
	}
}

func check(t *testing.T, got, want memplan.Breakdown) {
	t.Helper()
	if got.Phase != want.Phase || len(got.Terms) != len(want.Terms) {
		t.Fatalf("got %+v\nwant %+v", got, want)
	}
	for i := range want.Terms {
		if got.Terms[i] != want.Terms[i] {
			t.Errorf("term %d: got %+v, want %+v", i, got.Terms[i], want.Terms[i])
		}
	}
}

func ExampleResident() {
	cfg, _ := qwen3.NamedConfig("qwen3-8b")
	for _, term := range memplan.Resident(cfg, dtypes.BFloat16, false, memplan.State{}) {
		fmt.Printf("%-22s %s\n", term.Name, memplan.FormatGiB(term.Bytes))
	}
	// Output:
	// weights                15.26 GiB
	// gradient accumulators  30.51 GiB
	// AdamW moments          61.03 GiB
	// master weights         30.51 GiB
}

// TestFusedAttentionByHand: with fused attention no score is kept or made.
// Each layer keeps per token the float32 log-sum-exp of its 2 heads and the
// keys and values broadcast from 1 to 2 heads, 4·2 + 2·(4 − 2)·2 = 16 bytes in
// bfloat16, where the decomposed graph keeps 6 bytes a score.
func TestFusedAttentionByHand(t *testing.T) {
	cfg := handConfig()
	step := memplan.Step{DType: dtypes.BFloat16, Rows: 3, SeqLen: 5, FusedAttention: true}
	if !memplan.FusedAttention(dtypes.BFloat16, memplan.XLA) || memplan.FusedAttention(dtypes.Float32, memplan.XLA) ||
		memplan.FusedAttention(dtypes.BFloat16, memplan.CPU) {
		t.Error("fused attention: want it under the xla rules in bfloat16 only")
	}
	got := memplan.TrainStep(cfg, step, memplan.XLA)
	if s, f := got.Term(memplan.TermScores), got.Term(memplan.TermFused); s != 0 || f != 2*15*16 {
		t.Errorf("scores %d, fused attention state %d bytes; want 0, %d", s, f, 2*15*16)
	}
	step.FusedAttention = false
	plain := memplan.TrainStep(cfg, step, memplan.XLA)
	if plain.Term(memplan.TermScores) != 2*150*6 {
		t.Errorf("decomposed scores %d bytes, want %d", plain.Term(memplan.TermScores), 2*150*6)
	}
}

// TestFusedAttentionBackwardByHand works out the layer backward of fused
// attention term by term, in bfloat16 (d = 2) on N = 3·5 tokens, for two
// shapes whose q = Heads·HeadDim, kv and I differ: per token, the residual's
// and gate's and up's gradients (H + 2I)·d, the gradients of the query and
// of the keys and values broadcast to every query head 3q·d, and the
// kernel's float32 accumulator of the query's gradient 4q; nothing per score
// (doubling the tokens doubles it). With RecomputeLayers the recomputed layer
// holds N·((4H + 3q + 3kv + 3I)·d + 4·Heads + 2(q − kv)·d). The log-prob head
// is cut to chunks of 1 position so that the layer backward is the peak.
func TestFusedAttentionBackwardByHand(t *testing.T) {
	wide := handConfig()
	wide.Heads, wide.Intermediate = 4, 16 // q = 8, kv = 2, I = 16
	for _, tc := range []struct {
		name                    string
		cfg                     qwen3.Config
		back, recomputed, seq2x int64
	}{
		// H = 4, I = 8, q = 4, kv = 2, 2 heads: (4 + 16)·2 + 3·4·2 + 4·4 = 80; (16 + 12 + 6 + 24)·2 + 4·2 + 2·2·2 = 132
		{"hand", handConfig(), 15 * 80, 15 * 132, 30 * 80},
		// H = 4, I = 16, q = 8, kv = 2, 4 heads: (4 + 32)·2 + 3·8·2 + 4·8 = 152; (16 + 24 + 6 + 48)·2 + 4·4 + 2·6·2 = 228
		{"wide", wide, 15 * 152, 15 * 228, 30 * 152},
	} {
		cfg := tc.cfg
		step := memplan.Step{DType: dtypes.BFloat16, Rows: 3, SeqLen: 5, LogProbChunk: 1, FusedAttention: true}
		got := memplan.TrainStep(cfg, step, memplan.XLA)
		if got.Phase != "layer backward" || got.Term(memplan.TermLayerBack) != tc.back || got.Term(memplan.TermScores) != 0 {
			t.Errorf("%s: %s, layer backward %d bytes, want the layer backward's %d (%+v)", tc.name, got.Phase, got.Term(memplan.TermLayerBack), tc.back, got)
		}
		step.SeqLen = 10
		if got := memplan.TrainStep(cfg, step, memplan.XLA).Term(memplan.TermLayerBack); got != tc.seq2x {
			t.Errorf("%s, 10 tokens a row: layer backward %d bytes, want %d", tc.name, got, tc.seq2x)
		}
		step.SeqLen, step.RecomputeLayers = 5, true
		re := memplan.TrainStep(cfg, step, memplan.XLA)
		if re.Term(memplan.TermLayerBack) != tc.back || re.Term(memplan.TermRecomputed) != tc.recomputed {
			t.Errorf("%s, recomputed: layer backward %d, recomputed layer %d bytes; want %d and %d (%+v)", tc.name,
				re.Term(memplan.TermLayerBack), re.Term(memplan.TermRecomputed), tc.back, tc.recomputed, re)
		}
	}
}
