package main

import (
	"context"
	"encoding/json"
	"math"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/mathrl/mathrl/gomlx_trainer/bench"
	"github.com/mathrl/mathrl/internal/testenv"
)

// tinyBench are the flags of a bench run that takes a fraction of a second.
var tinyBench = []string{"bench", "--config", "tiny", "--backend", "cpu", "--batch", "2", "--len", "8",
	"--decode-batch", "3", "--prompt-len", "4", "--new-tokens", "3", "--steps", "1"}

func TestBenchCommandJSON(t *testing.T) {
	out := mustRunCLI(t, append(tinyBench, "--json", "--whole-cache=false")...)
	var r bench.Result
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if r.TrainStepMS <= 0 || r.DecodeStepMS <= 0 || r.DecodeBatch != 3 || r.PromptLen != 4 || r.DecodeWholeCacheStepMS != 0 {
		t.Errorf("result %+v", r)
	}
}

func TestBenchCommandBaselines(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	out := mustRunCLI(t, append(tinyBench, "--baseline", "cpu", "--threads", "1", "--what", "train")...)
	for _, want := range []string{"train ms/step", "cpu vs cpu (", "cpu: mathrl on Go"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

func TestBenchCommandTorchBaseline(t *testing.T) {
	py := testenv.RefPython(t, "torch", "transformers")
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	out := mustRunCLI(t, append(tinyBench, "--baseline", "torch", "--python", py, "--threads", "1", "--json")...)
	var c bench.Comparison
	if err := json.Unmarshal([]byte(out), &c); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if len(c.Sides) != 2 || c.Sides[1].Name != bench.TorchName || c.Sides[1].Threads != 1 || c.Sides[0].Threads != 1 {
		t.Fatalf("sides %+v", c.Sides)
	}
	if len(c.Ratios) != 1 || c.Ratios[0].Train <= 0 || c.Ratios[0].Decode <= 0 {
		t.Errorf("ratios %+v", c.Ratios)
	}
}

func TestBenchCommandProducts(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	out := mustRunCLI(t, append(tinyBench, "--what", "products", "--baseline", "cpu", "--threads", "1", "--json")...)
	var c bench.ProductComparison
	if err := json.Unmarshal([]byte(out), &c); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	parts := map[string]bool{}
	for _, p := range c.Products {
		parts[p.Part] = true
	}
	if len(parts) != 4 || c.DType != "float32" || len(c.Sides) != 2 || c.Sides[0].Name != "cpu" || c.Sides[1].Name != "cpu" {
		t.Fatalf("parts %v, dtype %q, sides %+v", parts, c.DType, c.Sides)
	}
	for _, s := range c.Sides {
		if len(s.MS) != len(c.Products) || slices.ContainsFunc(s.MS, func(ms float64) bool { return !(ms > 0) }) {
			t.Errorf("side %s: times %v, want %d > 0", s.Name, s.MS, len(c.Products))
		}
	}
	// --dtype reaches the products: they are timed, and named, in bfloat16.
	out = mustRunCLI(t, append(tinyBench, "--what", "products", "--dtype", "bf16", "--json")...)
	var bf bench.ProductComparison
	if err := json.Unmarshal([]byte(out), &bf); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if bf.DType != "bfloat16" || len(bf.Sides) != 1 || len(bf.Sides[0].MS) != len(bf.Products) {
		t.Errorf("--dtype bf16: dtype %q, sides %+v, want bfloat16 and one side of %d times", bf.DType, bf.Sides, len(bf.Products))
	}
	text := mustRunCLI(t, append(tinyBench, "--what", "products")...)
	for _, want := range []string{"x·wT", "gT·x", "cpu, a step's products: train "} {
		if !strings.Contains(text, want) {
			t.Errorf("text lacks %q:\n%s", want, text)
		}
	}
}

func TestBenchCommandErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--what", "all"}, `--what "all"`},
		{[]string{"--what", "products", "--model", "/nonexistent/model"}, "/nonexistent/model"},
		{[]string{"--what", "products", "--batch", "0"}, "batch 0"},
		{[]string{"--threads", "-1"}, "--threads"},
		{[]string{"--baseline", "tpu"}, "--baseline tpu"},
		{[]string{"--baseline", "torch", "--python", "/nonexistent/python"}, "/nonexistent/python"},
		{[]string{"--roofline", "--roofline-peaks", "h200"}, "not both"},
		{[]string{"--roofline-peaks", "tpu"}, `--roofline-peaks: bench: roofline peaks "tpu"`},
		{[]string{"--roofline-peaks", "4800,67"}, `"4800,67"`},
		{[]string{"--roofline", "--roofline-copy-mib", "-1"}, "--roofline-copy-mib -1"},
		{[]string{"--roofline", "--roofline-matmul", "0"}, "--roofline-matmul 0"},
	} {
		_, _, err := runCLI(t, "", append(tinyBench, tc.args...)...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("bench %v: error %v, want one containing %q", tc.args, err, tc.want)
		}
	}
}

func TestBenchCommandRooflineFlags(t *testing.T) {
	for _, tc := range []struct {
		args     []string
		measure  bool
		peaks    string
		copyMiB  int64
		matmulTo int
	}{
		{nil, false, "", 0, bench.DefaultMatmulMax},
		{[]string{"--roofline"}, true, "", 0, bench.DefaultMatmulMax},
		{[]string{"--roofline", "--roofline-copy-mib", "512", "--roofline-matmul", "4096"}, true, "", 512, 4096},
		{[]string{"--roofline-peaks", "h200"}, false, "h200", 0, bench.DefaultMatmulMax},
		{[]string{"--roofline-peaks", "3350,67,989"}, false, "3350,67,989", 0, bench.DefaultMatmulMax},
	} {
		var got *benchOptions
		cmd := newBenchCmd(func(_ context.Context, o *benchOptions) error { got = o; return nil })
		if _, _, err := execute(cmd, "", tc.args...); err != nil {
			t.Fatalf("bench %q: %v", tc.args, err)
		}
		if got.Roofline != tc.measure || got.RooflinePeaks != tc.peaks || got.RooflineCopyMiB != tc.copyMiB ||
			got.RooflineMatmul != tc.matmulTo {
			t.Errorf("bench %q: roofline %v, peaks %q, copy %d MiB, matmul to %d; want %v, %q, %d, %d", tc.args,
				got.Roofline, got.RooflinePeaks, got.RooflineCopyMiB, got.RooflineMatmul, tc.measure, tc.peaks, tc.copyMiB, tc.matmulTo)
		}
	}
}

// smallRoofline measures the roofline small: buffers of 8 MiB, matmuls up to 64.
var smallRoofline = []string{"--roofline", "--roofline-copy-mib", "8", "--roofline-matmul", "64"}

// TestBenchCommandRoofline runs a real --roofline bench of the tiny model and
// checks that every rate and every fraction is there and a rate: positive and
// finite (not how fast, which depends on the machine).
func TestBenchCommandRoofline(t *testing.T) {
	out := mustRunCLI(t, append(append(tinyBench, smallRoofline...), "--json", "--whole-cache=false")...)
	var r bench.Result
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if r.Roofline == nil || r.Roofline.Source != "measured" || len(r.Roofline.Matmuls) != 2 {
		t.Fatalf("roofline %+v", r.Roofline)
	}
	for name, v := range map[string]float64{"copy_bytes_per_s": r.Roofline.CopyBytesPerS, "train_flops": r.TrainFLOPs,
		"train_flops_per_s": r.TrainFLOPsPerS, "train_mfu": r.TrainMFU, "prefill_flops": r.PrefillFLOPs,
		"prefill_flops_per_s": r.PrefillFLOPsPerS, "prefill_mfu": r.PrefillMFU, "decode_step_bytes": r.DecodeStepBytes,
		"decode_bytes_per_s": r.DecodeBytesPerS, "decode_mbu": r.DecodeMBU, "decode_step_flops": r.DecodeStepFLOPs,
		"decode_flops_per_s": r.DecodeFLOPsPerS, "decode_mfu": r.DecodeMFU} {
		if !(v > 0) || math.IsInf(v, 0) {
			t.Errorf("%s = %g, want a positive finite number", name, v)
		}
	}
	if peak, _ := r.Roofline.Peak("float32"); math.Abs(r.TrainMFU-r.TrainFLOPsPerS/peak) > 1e-12 ||
		math.Abs(r.DecodeMBU-r.DecodeBytesPerS/r.Roofline.CopyBytesPerS) > 1e-12 || math.Abs(r.DecodeMFU-r.DecodeFLOPsPerS/peak) > 1e-12 {
		t.Errorf("fractions %g, %g, %g; want the rates over the float32 peak %g and the bandwidth %g", r.TrainMFU, r.DecodeMBU,
			r.DecodeMFU, peak, r.Roofline.CopyBytesPerS)
	}

}

// TestBenchCommandRooflineTable runs a --roofline comparison of the pure Go
// backend with itself and reads the text: the roofline, the columns of the
// rates table, and a rate and a fraction in every cell of its rows.
func TestBenchCommandRooflineTable(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	out := mustRunCLI(t, append(append(tinyBench, smallRoofline...), "--baseline", "cpu", "--threads", "1",
		"--whole-cache=false")...)
	header := "train FLOP/s  of matmul peak  prefill FLOP/s  of matmul peak  decode bytes/s  of copy bandwidth"
	for _, want := range []string{"roofline (measured): copy bandwidth ", "(1 threads, 2 buffers of 8 MiB)",
		"roofline matmul peaks: float32 cpu ", "bfloat16 cpu ", header} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	lines := strings.Split(out, "\n")
	rows := 0
	for i, l := range lines {
		if !strings.Contains(l, header) {
			continue
		}
		for _, row := range lines[i+1 : i+3] {
			f := strings.Fields(row)
			// cpu, then a rate (number and unit) and a percentage for each part.
			if len(f) != 13 || f[0] != "cpu" || !strings.HasSuffix(f[2], "FLOP/s") || !strings.HasSuffix(f[3], "%") ||
				!strings.HasSuffix(f[5], "FLOP/s") || !strings.HasSuffix(f[6], "%") || !strings.HasSuffix(f[8], "B/s") ||
				!strings.HasSuffix(f[9], "%") || !strings.HasSuffix(f[11], "FLOP/s") || !strings.HasSuffix(f[12], "%") {
				t.Errorf("rates row %q, want cpu and a rate and a percentage for train, prefill, decode's bytes and decode's FLOPs", row)
			}
			rows++
		}
	}
	if rows != 2 {
		t.Errorf("%d rows of rates, want 2:\n%s", rows, out)
	}
}

// TestBenchCommandRooflinePeaksCompared gives the limits of a comparison
// (--roofline-peaks with --baseline): its roofline is the given one, and
// every side's fractions are its rates over them.
func TestBenchCommandRooflinePeaksCompared(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	out := mustRunCLI(t, append(tinyBench, "--baseline", "cpu", "--threads", "1", "--whole-cache=false",
		"--roofline-peaks", "2,0.003,0.005", "--json")...)
	var c bench.Comparison
	if err := json.Unmarshal([]byte(out), &c); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if c.Roofline == nil || c.Roofline.Source != "given" || c.Roofline.CopyBytesPerS != 2e9 {
		t.Fatalf("roofline %+v, want the given 2 GB/s", c.Roofline)
	}
	const f32 = 0.003e12 // the model is float32
	for _, s := range c.Sides {
		if !(s.TrainFLOPsPerS > 0) || !(s.PrefillFLOPsPerS > 0) || !(s.DecodeBytesPerS > 0) ||
			math.Abs(s.TrainMFU-s.TrainFLOPsPerS/f32) > 1e-12*s.TrainMFU ||
			math.Abs(s.PrefillMFU-s.PrefillFLOPsPerS/f32) > 1e-12*s.PrefillMFU || math.Abs(s.DecodeMBU-s.DecodeBytesPerS/2e9) > 1e-12*s.DecodeMBU {
			t.Errorf("%s: rates %g, %g FLOP/s, %g B/s, fractions %g, %g, %g; want the rates over 3 GFLOP/s and 2 GB/s", s.Name,
				s.TrainFLOPsPerS, s.PrefillFLOPsPerS, s.DecodeBytesPerS, s.TrainMFU, s.PrefillMFU, s.DecodeMBU)
		}
	}
}
