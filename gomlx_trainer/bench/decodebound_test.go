package bench

import (
	"strings"
	"testing"
)

// TestBenchDecodeBoundTie pins the limit DecodeBound names when the two
// fractions are equal (none measured included): the copy bandwidth, a decode
// step's limit until its products take strictly longer than its reads.
func TestBenchDecodeBoundTie(t *testing.T) {
	roof := &Roofline{CopyBytesPerS: 20e9, Matmuls: []Matmul{{On: "torch", DType: "float32", FLOPsPerS: 250e9}}}
	for _, tc := range []struct {
		name string
		r    Result
		f    float64
	}{
		{"a quarter of each", Result{DecodeBytesPerS: 5e9, DecodeFLOPsPerS: 62.5e9}, 0.25},
		{"no decode measured", Result{}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.r.ApplyRoofline(roof, "float32")
			if tc.r.DecodeMBU != tc.f || tc.r.DecodeMFU != tc.f {
				t.Fatalf("fractions %g, %g; want %g for both", tc.r.DecodeMBU, tc.r.DecodeMFU, tc.f)
			}
			if f, bound := tc.r.DecodeBound(); f != tc.f || bound != "the copy bandwidth" {
				t.Errorf("DecodeBound() = %g, %q; want %g, %q", f, bound, tc.f, "the copy bandwidth")
			}
		})
	}
}

// TestBenchWriteTextMatmulPeakOnly writes a decode measured against a roofline
// that lacks the copy bandwidth (ApplyRoofline leaves DecodeMBU zero): the
// matmul peak still bounds the step, and WriteText says so.
func TestBenchWriteTextMatmulPeakOnly(t *testing.T) {
	r := Result{Params: 300, Batch: 8, SeqLen: 256, DecodeBatch: 8, PromptLen: 256, NewTokens: 2, DecodeCompileS: 1,
		PrefillMS: 4, DecodeStepMS: 5, DecodeTokensPerS: 1600, DecodeBytesPerS: 2e9, DecodeFLOPsPerS: 50e9, PrefillFLOPsPerS: 100e9}
	r.ApplyRoofline(&Roofline{Matmuls: []Matmul{{On: "torch", DType: "float32", FLOPsPerS: 200e9}}}, "float32")
	if f, bound := r.DecodeBound(); r.DecodeMBU != 0 || f != 0.25 || bound != "the matmul peak" {
		t.Fatalf("DecodeMBU %g, DecodeBound() = %g, %q; want 0 and 0.25 of the matmul peak", r.DecodeMBU, f, bound)
	}
	var b strings.Builder
	if err := r.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	want := "params 300, batch 8, len 256, new tokens 2\n" +
		"decode: 5.00 ms/step, 1600 tokens/s, 2.00 GB/s, 50.0 GFLOP/s, 25.0% of the matmul peak; " +
		"prefill 4.0 ms, 100 GFLOP/s, 50.0% of the matmul peak (warm-up 1.0 s)\n" +
		"decode is bound by the matmul peak: 25.0% of its roofline\n"
	if b.String() != want {
		t.Errorf("WriteText:\n%s\nwant:\n%s", b.String(), want)
	}
}
