package bench

import (
	"io"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/gomlx/compute/dtypes"

	"github.com/mathrl/mathrl/gomlx_trainer/backend/backendtest"
	"github.com/mathrl/mathrl/gomlx_trainer/qwen3"
)

// TestBenchDecodeStepBytes counts the bytes of a decode step apart: the model's
// own variables (what the store holds, at the dtype it holds them), less an
// untied embedding table but the rows looked up, plus a key and a value of
// kvHeads x headDim per layer, position and row.
func TestBenchDecodeStepBytes(t *testing.T) {
	const batch, context = 3, 7
	for _, name := range []string{"tiny", "tiny-wide-heads"} { // tied, untied
		for _, dt := range []dtypes.DType{dtypes.Float32, dtypes.BFloat16} {
			cfg, _ := qwen3.NamedConfig(name)
			m, err := qwen3.NewRandom(cfg, dt, 1)
			if err != nil {
				t.Fatal(err)
			}
			var weights int64
			for v := range m.Store.IterVariables() {
				if !cfg.TieEmbeddings && qwen3.TensorName(v.Path()) == "model.embed_tokens.weight" {
					weights += int64(batch * cfg.Hidden * dt.Size())
					continue
				}
				weights += v.Shape().ByteSize()
			}
			cache := int64(2 * cfg.Layers * batch * cfg.KVHeads * context * cfg.HeadDim * dt.Size())
			if got, want := DecodeStepBytes(cfg, dt, batch, context), float64(weights+cache); got != want {
				t.Errorf("%s %s: DecodeStepBytes = %g, want %g (weights %d, cache %d)", name, dt, got, want, weights, cache)
			}
		}
	}
}

func TestBenchDecodeStepBytesQwen(t *testing.T) {
	// qwen3-0.6b-4l in float32: 218.5M weights (the tied head alone 151936 x
	// 1024, 622 MB) = 874 MB, then 16 rows x 100 positions x 4 layers x 2 x 8
	// kv heads x 128 x 4 bytes = 52.4 MB of cache.
	cfg, _ := qwen3.NamedConfig("qwen3-0.6b-4l")
	got := DecodeStepBytes(cfg, dtypes.Float32, 16, 100)
	if want := 4*float64(cfg.Params()) + 16*100*4*2*8*128*4; got != want || got < 9.26e8 || got > 9.27e8 {
		t.Errorf("DecodeStepBytes = %.4g, want %.4g", got, want)
	}
	// The mean over the timed steps of 8 new tokens after 64: contexts 65 to 71.
	var sum float64
	for c := 65; c <= 71; c++ {
		sum += DecodeStepBytes(cfg, dtypes.Float32, 16, c)
	}
	if got, want := MeanDecodeStepBytes(cfg, dtypes.Float32, 16, 64, 8), sum/7; math.Abs(got-want) > 1e-9*want {
		t.Errorf("MeanDecodeStepBytes = %.10g, want the mean of the 7 steps %.10g", got, want)
	}
}

// tensorElements is the number of elements of cfg's tensors (its tensor list,
// qwen3.Config.Tensors) but those skip names.
func tensorElements(cfg qwen3.Config, skip func(name string) bool) float64 {
	var n float64
	for _, s := range cfg.Tensors() {
		if skip(s.Name) {
			continue
		}
		size := 1
		for _, d := range s.Shape {
			size *= d
		}
		n += float64(size)
	}
	return n
}

// TestBenchPrefillFLOPs counts the prefill's products from the model's tensor
// list: 2 FLOPs per element of every weight for each prompt token but the
// embedding table and the head, the head (vocab x hidden) once per prompt,
// and per layer the scores and the weighted values, each 2 x heads x P x P x
// headDim per prompt.
func TestBenchPrefillFLOPs(t *testing.T) {
	const batch, p = 3, 11
	for _, name := range []string{"tiny", "tiny-wide-heads", "qwen3-0.6b"} {
		cfg, _ := qwen3.NamedConfig(name)
		perToken := 2 * tensorElements(cfg, func(name string) bool {
			return name == "model.embed_tokens.weight" || name == "lm_head.weight"
		})
		attention := float64(cfg.Layers) * 2 * (2 * float64(cfg.Heads*p*p*cfg.HeadDim))
		want := batch * (p*perToken + attention + 2*float64(cfg.VocabSize*cfg.Hidden))
		if got := PrefillFLOPs(cfg, batch, p); math.Abs(got-want) > 1e-12*want {
			t.Errorf("%s: PrefillFLOPs = %.10g, want %.10g", name, got, want)
		}
	}
}

// TestBenchDecodeStepFLOPs counts a decode step's products from the model's
// tensor list, as TestBenchPrefillFLOPs does, for one new token per sequence:
// 2 FLOPs per element of every weight but an untied embedding table (the
// head included), and per layer the scores and the weighted values over the
// context, each 2 x heads x context x headDim. A one-token prefill is such a
// step over a context of 1.
func TestBenchDecodeStepFLOPs(t *testing.T) {
	const batch, context = 3, 11
	for _, name := range []string{"tiny", "tiny-wide-heads", "qwen3-0.6b"} {
		cfg, _ := qwen3.NamedConfig(name)
		weights := 2 * tensorElements(cfg, func(name string) bool {
			return name == "model.embed_tokens.weight" && !cfg.TieEmbeddings
		})
		attention := float64(cfg.Layers) * 2 * (2 * float64(cfg.Heads*context*cfg.HeadDim))
		if got, want := DecodeStepFLOPs(cfg, batch, context), batch*(weights+attention); math.Abs(got-want) > 1e-12*want {
			t.Errorf("%s: DecodeStepFLOPs = %.10g, want %.10g", name, got, want)
		}
		if got, want := DecodeStepFLOPs(cfg, batch, 1), PrefillFLOPs(cfg, batch, 1); math.Abs(got-want) > 1e-12*want {
			t.Errorf("%s: a step over one position %.10g, a one-token prefill %.10g", name, got, want)
		}
		var sum float64 // the timed steps of 8 new tokens after 64: contexts 65 to 71
		for c := 65; c <= 71; c++ {
			sum += DecodeStepFLOPs(cfg, batch, c)
		}
		if got, want := MeanDecodeStepFLOPs(cfg, batch, 64, 8), sum/7; math.Abs(got-want) > 1e-12*want {
			t.Errorf("%s: MeanDecodeStepFLOPs = %.10g, want the mean of the 7 steps %.10g", name, got, want)
		}
	}
}

func TestBenchSetRates(t *testing.T) {
	cfg, _ := qwen3.NamedConfig("tiny")
	r := Result{Batch: 2, SeqLen: 8, DecodeBatch: 3, PromptLen: 4, NewTokens: 5, TrainStepMS: 250, PrefillMS: 2,
		DecodeStepMS: 0.5}
	r.SetRates(cfg, dtypes.BFloat16)
	for _, c := range []struct {
		name      string
		work, got float64
		want      float64
		perS      float64
	}{
		{"train", r.TrainFLOPs, r.TrainFLOPsPerS, TrainFLOPs(cfg, 2, 8), 4},                                        // 250 ms
		{"prefill", r.PrefillFLOPs, r.PrefillFLOPsPerS, PrefillFLOPs(cfg, 3, 4), 500},                              // 2 ms
		{"decode", r.DecodeStepBytes, r.DecodeBytesPerS, MeanDecodeStepBytes(cfg, dtypes.BFloat16, 3, 4, 5), 2000}, // 0.5 ms
		{"decode FLOPs", r.DecodeStepFLOPs, r.DecodeFLOPsPerS, MeanDecodeStepFLOPs(cfg, 3, 4, 5), 2000},
	} {
		if c.work != c.want || math.Abs(c.got-c.perS*c.want) > 1e-12*c.got {
			t.Errorf("%s: work %g, rate %g; want %g and %g times it", c.name, c.work, c.got, c.want, c.perS)
		}
	}
	none := Result{Batch: 2, SeqLen: 8}
	none.SetRates(cfg, dtypes.Float32)
	if none.TrainFLOPs != 0 || none.TrainFLOPsPerS != 0 || none.PrefillFLOPs != 0 || none.DecodeStepBytes != 0 || none.DecodeStepFLOPs != 0 {
		t.Errorf("rates of parts not measured: %+v", none)
	}
}

func TestBenchApplyRoofline(t *testing.T) {
	roof := &Roofline{CopyBytesPerS: 20e9, Matmuls: []Matmul{
		{On: "xla-cpu", DType: "float32", FLOPsPerS: 200e9}, {On: "torch", DType: "float32", FLOPsPerS: 250e9},
		{On: "xla-cpu", DType: "bfloat16", FLOPsPerS: 500e9}}}
	if peak, on := roof.Peak("float32"); peak != 250e9 || on != "torch" {
		t.Errorf("Peak(float32) = %g, %q; want torch's 250e9", peak, on)
	}
	for _, tc := range []struct {
		name                             string
		r                                Result
		dtype                            string
		train, prefill, decodeB, decodeF float64
		bound                            string
	}{
		{"float32", Result{TrainFLOPsPerS: 50e9, PrefillFLOPsPerS: 125e9, DecodeBytesPerS: 5e9, DecodeFLOPsPerS: 25e9}, "float32",
			0.2, 0.5, 0.25, 0.1, "the copy bandwidth"},
		{"bfloat16, compute-bound decode", Result{TrainFLOPsPerS: 50e9, DecodeBytesPerS: 3e9, DecodeFLOPsPerS: 200e9}, "bfloat16",
			0.1, 0, 0.15, 0.4, "the matmul peak"},
		{"no peak of the dtype", Result{TrainFLOPsPerS: 50e9, DecodeBytesPerS: 2e9, DecodeFLOPsPerS: 200e9}, "float16",
			0, 0, 0.1, 0, "the copy bandwidth"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.r.ApplyRoofline(roof, tc.dtype)
			if tc.r.TrainMFU != tc.train || tc.r.PrefillMFU != tc.prefill || tc.r.DecodeMBU != tc.decodeB || tc.r.DecodeMFU != tc.decodeF {
				t.Errorf("fractions %g, %g, %g, %g; want %g, %g, %g, %g", tc.r.TrainMFU, tc.r.PrefillMFU, tc.r.DecodeMBU,
					tc.r.DecodeMFU, tc.train, tc.prefill, tc.decodeB, tc.decodeF)
			}
			if f, bound := tc.r.DecodeBound(); f != max(tc.decodeB, tc.decodeF) || bound != tc.bound {
				t.Errorf("DecodeBound() = %g, %q; want %g, %q", f, bound, max(tc.decodeB, tc.decodeF), tc.bound)
			}
		})
	}
	if f := fraction(math.NaN(), 1); f != 0 {
		t.Errorf("fraction(NaN, 1) = %g, want 0", f)
	}
}

func TestBenchParseRoofline(t *testing.T) {
	for _, tc := range []struct {
		spec           string
		bw, f32, bf16  float64
		source, errHas string
	}{
		{"h200", 4.8e12, 67e12, 989e12, "h200", ""},
		{"H200", 4.8e12, 67e12, 989e12, "h200", ""},
		{"3350, 67,989.5", 3.35e12, 67e12, 989.5e12, "given", ""},
		{"tpu", 0, 0, 0, "", "h200"},
		{"1,2", 0, 0, 0, "", `"1,2"`},
		{"1,-2,3", 0, 0, 0, "", `"-2"`},
		{"1,x,3", 0, 0, 0, "", `"x"`},
		{"1,2,inf", 0, 0, 0, "", `"inf"`},
	} {
		r, err := ParseRoofline(tc.spec)
		if tc.errHas != "" {
			if err == nil || !strings.Contains(err.Error(), tc.errHas) {
				t.Errorf("ParseRoofline(%q): error %v, want one containing %s", tc.spec, err, tc.errHas)
			}
			continue
		}
		f32, _ := r.Peak("float32")
		bf16, _ := r.Peak("bfloat16")
		if err != nil || r.Source != tc.source || math.Abs(r.CopyBytesPerS-tc.bw) > 1 || math.Abs(f32-tc.f32) > 1 ||
			math.Abs(bf16-tc.bf16) > 1 {
			t.Errorf("ParseRoofline(%q) = %+v, %v; want %s, %g B/s, %g and %g FLOP/s", tc.spec, r, err, tc.source, tc.bw, tc.f32, tc.bf16)
		}
	}
}

func TestBenchParseCacheSize(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
	}{{"491520K", 491520 << 10}, {"4M", 4 << 20}, {"1G", 1 << 30}, {"512", 512}, {"", -1}, {"12X", -1}, {"-3K", -1}} {
		got, err := parseCacheSize(tc.in)
		if tc.want < 0 {
			if err == nil {
				t.Errorf("parseCacheSize(%q) = %d, want an error", tc.in, got)
			}
		} else if err != nil || got != tc.want {
			t.Errorf("parseCacheSize(%q) = %d, %v; want %d", tc.in, got, err, tc.want)
		}
	}
	if DefaultCopyBuffer() < 256<<20 || DefaultCopyBuffer() < lastLevelCache() {
		t.Errorf("DefaultCopyBuffer = %d, want at least 256 MiB and the last-level cache %d", DefaultCopyBuffer(), lastLevelCache())
	}
}

// TestBenchMeasureRooflineTiny measures small: buffers of 4 MiB, matmuls of
// 64. The rates are not checked against anything but being rates.
func TestBenchMeasureRooflineTiny(t *testing.T) {
	b := backendtest.New(t)
	r, err := MeasureRoofline([]GoMLXSide{{Name: "first", Backend: b}}, RooflineOptions{Threads: 2, CopyBuffer: 4 << 20,
		MatmulMax: 64}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	positive := func(v float64) bool { return v > 0 && !math.IsInf(v, 0) }
	if r.Source != "measured" || !positive(r.CopyBytesPerS) || r.CopyThreads != 2 || r.CopyBuffer != 4<<20 || len(r.Matmuls) != 2 {
		t.Fatalf("roofline %+v", r)
	}
	for i, dt := range []string{"float32", "bfloat16"} {
		m := r.Matmuls[i]
		if m.On != "first" || m.DType != dt || m.N != 64 || !positive(m.FLOPsPerS) {
			t.Errorf("matmul %d = %+v, want first's %s at n 64", i, m, dt)
		}
	}
	if _, err := MeasureRoofline(nil, RooflineOptions{Threads: -1}, io.Discard); err == nil || !strings.Contains(err.Error(), "threads -1") {
		t.Errorf("threads -1: error %v", err)
	}
}

func TestBenchRooflineWriteText(t *testing.T) {
	r := Roofline{Source: "measured", CopyBytesPerS: 18.46e9, CopyThreads: 2, CopyBuffer: 480 << 20, Matmuls: []Matmul{
		{On: "xla-cpu", DType: "float32", N: 1024, FLOPsPerS: 255.5e9}, {On: "xla-cpu", DType: "bfloat16", N: 2048, FLOPsPerS: 552e9},
		{On: "torch", DType: "float32", N: 2048, FLOPsPerS: 301e9}, {On: "torch", DType: "bfloat16", N: 2048, FLOPsPerS: 12.5e9}}}
	var b strings.Builder
	if err := r.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	want := "roofline (measured): copy bandwidth 18.5 GB/s (2 threads, 2 buffers of 480 MiB)\n" +
		"roofline matmul peaks: float32 torch 301 GFLOP/s (n 2048), xla-cpu 256 GFLOP/s (n 1024); " +
		"bfloat16 xla-cpu 552 GFLOP/s (n 2048), torch 12.5 GFLOP/s (n 2048)\n"
	if b.String() != want {
		t.Errorf("WriteText:\n%s\nwant:\n%s", b.String(), want)
	}
}

func TestBenchRate(t *testing.T) {
	for _, tc := range []struct {
		v    float64
		want string
	}{{0, "-"}, {math.NaN(), "-"}, {12, "12.0 B/s"}, {999.7, "1000 B/s"}, {1e3, "1.00 kB/s"}, {4.523e9, "4.52 GB/s"},
		{989e12, "989 TB/s"}, {2e15, "2.00 PB/s"}} {
		if got := rate(tc.v, "B"); got != tc.want {
			t.Errorf("rate(%g) = %q, want %q", tc.v, got, tc.want)
		}
	}
}

func TestBenchPercent(t *testing.T) {
	for _, tc := range []struct {
		f    float64
		want string
	}{{0, "-"}, {math.NaN(), "-"}, {0.3125, "31.2%"}, {1.5, "150.0%"}, {1.234e-5, "0.0012%"}} {
		if got := percent(tc.f); got != tc.want {
			t.Errorf("percent(%g) = %q, want %q", tc.f, got, tc.want)
		}
	}
}

// scriptedClock replaces now with a clock that reads start then end of each
// timed span in turn, span i lasting spans[i], and returns how many spans
// were read; it puts the real clock back when t ends.
func scriptedClock(t *testing.T, spans []time.Duration) (read func() int) {
	t.Helper()
	reads := 0
	base := time.Unix(1e9, 0)
	now = func() time.Time {
		i := reads
		reads++
		if i%2 == 0 || i/2 >= len(spans) {
			return base
		}
		return base.Add(spans[i/2])
	}
	t.Cleanup(func() { now = time.Now })
	return func() int { return (reads + 1) / 2 }
}

// TestBenchMeasureCopyCounts times MeasureCopy's passes with a scripted
// clock: the rate is STREAM's, bytes read plus written (twice the buffer)
// over the fastest timed pass, the first pass (page faults) left out however
// fast it was.
func TestBenchMeasureCopyCounts(t *testing.T) {
	const size = 3 << 20
	ms := time.Millisecond
	spans := []time.Duration{ms / 2, 4 * ms, 2 * ms, 3 * ms, 5 * ms} // the first: faulting the pages in
	read := scriptedClock(t, spans)
	got := MeasureCopy(3, size)
	if n := read(); n != len(spans) {
		t.Fatalf("MeasureCopy timed %d passes, want %d (one untimed, then %d)", n, len(spans), len(spans)-1)
	}
	if want := 2 * float64(size) / 0.002; math.Abs(got-want) > 1e-9*want {
		t.Errorf("MeasureCopy = %g B/s, want 2 x %d bytes over the fastest timed pass, 2 ms: %g", got, size, want)
	}
}

// TestBenchMeasureMatmulCounts times MeasureMatmul's products with a
// scripted clock: at each side one product compiles (not counted) and three
// are timed; the rate of a side is 2n³ FLOPs over its fastest product; the
// sides double from 256 until a product takes 100 ms or the next side passes
// maxN; the best side's rate is the result.
func TestBenchMeasureMatmulCounts(t *testing.T) {
	b := backendtest.New(t)
	ms := time.Millisecond
	for _, tc := range []struct {
		name  string
		maxN  int
		spans []time.Duration // 4 per side: the compiling product, then the timed ones
		n     int
		secs  float64 // the best side's fastest product
	}{
		{"the smaller side faster, the larger one long enough to stop at", 1024,
			[]time.Duration{ms, 10 * ms, 8 * ms, 9 * ms, 1000 * ms, 120 * ms, 100 * ms, 110 * ms}, 256, 0.008},
		{"the larger side faster, maxN reached", 512,
			[]time.Duration{ms, 10 * ms, 8 * ms, 9 * ms, 1000 * ms, 40 * ms, 30 * ms, 50 * ms}, 512, 0.030},
	} {
		t.Run(tc.name, func(t *testing.T) {
			read := scriptedClock(t, tc.spans)
			m, err := MeasureMatmul(b, dtypes.Float32, tc.maxN)
			if err != nil {
				t.Fatal(err)
			}
			if n := read(); n != len(tc.spans) {
				t.Fatalf("MeasureMatmul timed %d products, want %d", n, len(tc.spans))
			}
			want := 2 * math.Pow(float64(tc.n), 3) / tc.secs
			if m.DType != "float32" || m.N != tc.n || math.Abs(m.FLOPsPerS-want) > 1e-9*want {
				t.Errorf("MeasureMatmul = %+v, want float32 at n %d, 2 x %d³ FLOPs in %g s: %g FLOP/s", m, tc.n, tc.n, tc.secs, want)
			}
		})
	}
}

// TestBenchParseRooflineOwnCopy changes a parsed device's matmuls, which are
// the caller's: the device's figures must stay as they were.
func TestBenchParseRooflineOwnCopy(t *testing.T) {
	r, err := ParseRoofline("h200")
	if err != nil {
		t.Fatal(err)
	}
	r.Matmuls[0].FLOPsPerS, r.Matmuls[1].FLOPsPerS = 1, 1
	again, _ := ParseRoofline("h200")
	f32, _ := again.Peak("float32")
	bf16, _ := again.Peak("bfloat16")
	if f32 != 67e12 || bf16 != 989e12 {
		t.Errorf("h200 after a caller changed its copy: float32 %g, bfloat16 %g FLOP/s; want 67e12 and 989e12", f32, bf16)
	}
}
