package bench

import (
	"context"
	"io"
	"math"
	"math/rand/v2"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"

	"github.com/mathrl/mathrl/gomlx_trainer/backend/backendtest"
	"github.com/mathrl/mathrl/gomlx_trainer/qwen3"
	"github.com/mathrl/mathrl/internal/testenv"
)

// TestBenchModelProductsCount checks ModelProducts' work against the
// model's tensor list: a train step's products are 6 FLOPs per element of
// every projection and of the head per token, a decode step's 2 per sequence,
// and a prefill's 2 per prompt token for the projections and 2 per prompt for
// the head, whether the prompts are read one at a time or together.
func TestBenchModelProductsCount(t *testing.T) {
	for _, name := range []string{"tiny", "qwen3-0.6b-4l"} {
		cfg, err := qwen3.NamedConfig(name)
		if err != nil {
			t.Fatal(err)
		}
		proj := tensorElements(cfg, func(n string) bool { return !strings.HasSuffix(n, "_proj.weight") })
		head := float64(cfg.VocabSize * cfg.Hidden)
		o := Options{Batch: 3, SeqLen: 10, DecodeBatch: 5, PromptLen: 7, Train: true, Decode: true}
		want := map[string]float64{
			PartTrain:        6 * (proj + head) * 30,
			PartDecode:       2 * (proj + head) * 5,
			PartPrefillRow:   2*proj*35 + 2*head*5,
			PartPrefillBatch: 2*proj*35 + 2*head*5,
		}
		got := map[string]float64{}
		for _, p := range ModelProducts(cfg, o) {
			got[p.Part] += float64(p.Count) * p.FLOPs()
		}
		for part, w := range want {
			if math.Abs(got[part]-w) > 1e-12*w {
				t.Errorf("%s: %s products %.6g FLOPs, want %.6g", name, part, got[part], w)
			}
		}
		if len(got) != len(want) {
			t.Errorf("%s: parts %v, want %v", name, got, want)
		}
		o.Decode = false
		for _, p := range ModelProducts(cfg, o) {
			if p.Part != PartTrain {
				t.Errorf("%s: train only, but a %s product", name, p.Part)
			}
		}
	}
}

// TestBenchModelProductsRows checks the rows of each part: a train step's
// tokens, a decode step's sequences, and the prefill's prompt tokens, one
// prompt per product (and its last token at the head) or all of them.
func TestBenchModelProductsRows(t *testing.T) {
	cfg, _ := qwen3.NamedConfig("tiny")
	o := Options{Batch: 3, SeqLen: 10, DecodeBatch: 5, PromptLen: 7, Train: true, Decode: true}
	want := map[string][2]int{ // rows of a projection, of the head
		PartTrain: {30, 30}, PartDecode: {5, 5}, PartPrefillRow: {7, 1}, PartPrefillBatch: {35, 5},
	}
	for _, p := range ModelProducts(cfg, o) {
		w := want[p.Part][0]
		if p.Weight == "head" {
			w = want[p.Part][1]
			if p.In != cfg.Hidden || p.Out != cfg.VocabSize {
				t.Errorf("%s head: [%d out, %d in], want [%d, %d]", p.Part, p.Out, p.In, cfg.VocabSize, cfg.Hidden)
			}
		}
		if p.Rows != w {
			t.Errorf("%s %s %s: %d rows, want %d", p.Part, p.Weight, p.Form, p.Rows, w)
		}
	}
}

// TestBenchProductForms multiplies small matrices in each form on the
// backend and checks every element against the form's definition, summed in
// float64: x·wT (rows, out) = Σ_in x[r, i] w[o, i]; g·w (rows, in) =
// Σ_out g[r, o] w[o, i]; gT·x (out, in) = Σ_rows g[r, o] x[r, i].
func TestBenchProductForms(t *testing.T) {
	b := backendtest.New(t)
	rng := rand.New(rand.NewPCG(1, 2))
	const rows, in, out = 3, 4, 5
	for _, form := range []string{FormForward, FormInputGrad, FormWeightGrad} {
		p := Product{Form: form, Rows: rows, In: in, Out: out}
		ls, rs, _, _ := p.operands()
		x, y := randomMatrix(rng, ls), randomMatrix(rng, rs)
		got := graph.MustExecOnce(b, p.product, tensors.FromValue(x), tensors.FromValue(y)).Value().([][]float32)
		var want [][]float64
		switch form {
		case FormForward:
			want = naive(rows, out, in, func(r, o, i int) float64 { return float64(x[r][i]) * float64(y[o][i]) })
		case FormInputGrad:
			want = naive(rows, in, out, func(r, i, o int) float64 { return float64(x[r][o]) * float64(y[o][i]) })
		case FormWeightGrad:
			want = naive(out, in, rows, func(o, i, r int) float64 { return float64(x[r][o]) * float64(y[r][i]) })
		}
		if len(got) != len(want) || len(got[0]) != len(want[0]) {
			t.Fatalf("%s: result %dx%d, want %dx%d", form, len(got), len(got[0]), len(want), len(want[0]))
		}
		for i := range want {
			for j := range want[i] {
				if math.Abs(float64(got[i][j])-want[i][j]) > 1e-5 {
					t.Errorf("%s [%d, %d] = %g, want %g", form, i, j, got[i][j], want[i][j])
				}
			}
		}
	}
}

// randomMatrix is a [dims[0], dims[1]] matrix of values in [-1, 1).
func randomMatrix(rng *rand.Rand, dims [2]int) [][]float32 {
	m := make([][]float32, dims[0])
	for i := range m {
		m[i] = make([]float32, dims[1])
		for j := range m[i] {
			m[i][j] = 2*rng.Float32() - 1
		}
	}
	return m
}

// naive is the [n, m] matrix whose element (i, j) is Σ_k term(i, j, k), k < c.
func naive(n, m, c int, term func(i, j, k int) float64) [][]float64 {
	out := make([][]float64, n)
	for i := range out {
		out[i] = make([]float64, m)
		for j := range out[i] {
			for k := range c {
				out[i][j] += term(i, j, k)
			}
		}
	}
	return out
}

// TestBenchMeasureProductsCounts times products with a scripted clock: each
// distinct product compiles once (not counted) and is timed three times, its
// time the fastest; a product of the same form and sizes in another part is
// not timed again but gets the same time, and one that differs from another
// only in its rows, its input width or its output width is timed on its own.
func TestBenchMeasureProductsCounts(t *testing.T) {
	b := backendtest.New(t)
	ms := time.Millisecond
	ps := []Product{
		{Part: PartDecode, Weight: "head", Form: FormForward, Rows: 2, In: 4, Out: 6, Count: 1},
		{Part: PartTrain, Weight: "q", Form: FormWeightGrad, Rows: 3, In: 4, Out: 4, Count: 2},
		{Part: PartPrefillBatch, Weight: "head", Form: FormForward, Rows: 2, In: 4, Out: 6, Count: 1},
		{Part: PartTrain, Weight: "q", Form: FormInputGrad, Rows: 3, In: 4, Out: 4, Count: 2},
		{Part: PartPrefillRow, Weight: "head", Form: FormForward, Rows: 1, In: 4, Out: 6, Count: 5}, // the first's but its rows
		{Part: PartTrain, Weight: "o", Form: FormInputGrad, Rows: 3, In: 6, Out: 4, Count: 1},       // the fourth's but its in
		{Part: PartTrain, Weight: "down", Form: FormInputGrad, Rows: 3, In: 4, Out: 6, Count: 1},    // the fourth's but its out
	}
	spans := []time.Duration{50 * ms, 3 * ms, 2 * ms, 4 * ms, 60 * ms, 7 * ms, 9 * ms, 5 * ms, 70 * ms, 8 * ms, 6 * ms, 7 * ms,
		40 * ms, 9 * ms, 3 * ms, 8 * ms, 30 * ms, 4 * ms, 4 * ms, 9 * ms, 20 * ms, 8 * ms, 1 * ms, 7 * ms}
	read := scriptedClock(t, spans)
	var log strings.Builder
	got, err := MeasureProducts(b, dtypes.Float32, ps, &log)
	if err != nil {
		t.Fatal(err)
	}
	if n := read(); n != len(spans) {
		t.Fatalf("MeasureProducts timed %d calls, want %d (6 distinct products, 4 calls each)", n, len(spans))
	}
	want := []float64{2, 5, 2, 6, 3, 4, 1}
	for i := range want {
		if math.Abs(got[i]-want[i]) > 1e-9 {
			t.Errorf("product %d (%s %s %s): %g ms, want %g", i, ps[i].Part, ps[i].Weight, ps[i].Form, got[i], want[i])
		}
	}
	if n := strings.Count(log.String(), "products: "); n != 6 {
		t.Errorf("log has %d product lines, want 6:\n%s", n, log.String())
	}
}

// productComparison is a comparison of two parts' products on two sides,
// whose totals are worked out by hand in the tests.
func productComparison() ProductComparison {
	return ProductComparison{
		DType: "float32",
		Products: []Product{
			{Part: PartTrain, Weight: "q", Form: FormForward, Rows: 10, In: 100, Out: 50, Count: 4},         // 1e5 FLOPs
			{Part: PartDecode, Weight: "head", Form: FormForward, Rows: 2, In: 100, Out: 1000, Count: 1},    // 4e5
			{Part: PartTrain, Weight: "head", Form: FormWeightGrad, Rows: 10, In: 100, Out: 1000, Count: 1}, // 2e6
		},
		Sides: []ProductSide{
			{Name: "xla-cpu", Threads: 2, MS: []float64{0.5, 2, 4}},
			{Name: TorchName, Threads: 2, MS: []float64{1, 1, 6}},
		},
		Roofline: &Roofline{Matmuls: []Matmul{{On: TorchName, DType: "float32", FLOPsPerS: 1e9},
			{On: TorchName, DType: "bfloat16", FLOPsPerS: 4e9}}},
	}
}

func TestBenchProductTotals(t *testing.T) {
	c := productComparison()
	for i, want := range [][]PartTotal{
		{{PartTrain, 4*0.5 + 4, 4e5 + 2e6}, {PartDecode, 2, 4e5}},
		{{PartTrain, 4*1 + 6, 4e5 + 2e6}, {PartDecode, 1, 4e5}},
	} {
		got := c.Totals(i)
		if len(got) != len(want) {
			t.Fatalf("side %d: totals %+v, want %+v", i, got, want)
		}
		for j := range want {
			if got[j].Part != want[j].Part || math.Abs(got[j].MS-want[j].MS) > 1e-12 || math.Abs(got[j].FLOPs-want[j].FLOPs) > 1e-6 {
				t.Errorf("side %d: total %+v, want %+v", i, got[j], want[j])
			}
		}
	}
	// 2.4e6 FLOPs in 6 ms is 4e8 FLOP/s, 40% of the 1e9 peak.
	if f := c.ofPeak(2.4e6, 6); math.Abs(f-0.4) > 1e-12 {
		t.Errorf("ofPeak = %g, want 0.4", f)
	}
	// In bfloat16 the peak is bfloat16's, 4e9: the same rate is 10% of it.
	c.DType = "bfloat16"
	if f := c.ofPeak(2.4e6, 6); math.Abs(f-0.1) > 1e-12 {
		t.Errorf("ofPeak in bfloat16 = %g, want 0.1", f)
	}
	c.Roofline = nil
	if f := c.ofPeak(2.4e6, 6); f != 0 {
		t.Errorf("ofPeak without a roofline = %g, want 0", f)
	}
}

func TestBenchProductsWriteText(t *testing.T) {
	var b strings.Builder
	if err := productComparison().WriteText(&b); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	rows := map[string]bool{}
	for _, line := range strings.Split(out, "\n") {
		rows[strings.Join(strings.Fields(line), " ")] = true
	}
	for _, want := range []string{
		"part weights form rows in out count xla-cpu ms of peak torch ms of peak xla-cpu vs torch",
		"train q x·wT 10 100 50 4 0.50 20.0% 1.00 10.0% 2.00x",
		"decode head x·wT 2 100 1000 1 2.00 20.0% 1.00 40.0% 0.50x",
		"train head gT·x 10 100 1000 1 4.00 50.0% 6.00 33.3% 1.50x",
	} {
		if !rows[want] {
			t.Errorf("output lacks the row %q:\n%s", want, out)
		}
	}
	for _, want := range []string{
		"xla-cpu, a step's products: train 6.0 ms (400 MFLOP/s, 40.0% of peak); decode 2.0 ms (200 MFLOP/s, 20.0% of peak)",
		"torch, a step's products: train 10.0 ms (240 MFLOP/s, 24.0% of peak); decode 1.0 ms (400 MFLOP/s, 40.0% of peak)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

// TestBenchCompareProductsTiny times the tiny model's products on the test
// backend with the roofline measured: every product has a time, and the
// comparison carries the measured roofline (float32 and bfloat16 on the one
// side), not the options' none.
func TestBenchCompareProductsTiny(t *testing.T) {
	b := backendtest.New(t)
	cfg, _ := qwen3.NamedConfig("tiny")
	opts := CompareOptions{Bench: tinyOptions, Backends: []GoMLXSide{{Name: "go", Backend: b}},
		Roofline: &RooflineOptions{CopyBuffer: 4 << 20, MatmulMax: 64}}
	c, err := CompareProducts(context.Background(), cfg, dtypes.Float32, opts, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if c.DType != "float32" || len(c.Products) != len(ModelProducts(cfg, tinyOptions)) || len(c.Sides) != 1 ||
		c.Sides[0].Name != "go" || len(c.Sides[0].MS) != len(c.Products) {
		t.Fatalf("comparison of %d products in %s, sides %+v", len(c.Products), c.DType, c.Sides)
	}
	if r := c.Roofline; r == nil || r.Source != "measured" || len(r.Matmuls) != 2 || r.Matmuls[0].On != "go" {
		t.Fatalf("roofline %+v, want the measured float32 and bfloat16 matmuls of go", r)
	}
}

// TestBenchCompareProductsWithTorch compares the test backend's products with
// PyTorch's, the roofline measured: torch times one per product and its
// matmul peaks at the roofline's largest side, and the roofline has all four
// peaks.
func TestBenchCompareProductsWithTorch(t *testing.T) {
	topts := torchTiny(t)
	b := backendtest.New(t)
	cfg, _ := qwen3.NamedConfig("tiny")
	opts := CompareOptions{Bench: tinyOptions, Backends: []GoMLXSide{{Name: "go", Backend: b}}, Torch: &topts,
		Roofline: &RooflineOptions{CopyBuffer: 4 << 20, MatmulMax: 64}}
	c, err := CompareProducts(context.Background(), cfg, dtypes.Float32, opts, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Sides) != 2 || c.Sides[1].Name != TorchName || c.Sides[1].Threads != 1 || len(c.Sides[1].MS) != len(c.Products) {
		t.Fatalf("sides %+v, want go and torch (1 thread), %d times each", c.Sides, len(c.Products))
	}
	on := map[string]int{}
	for _, m := range c.Roofline.Matmuls {
		if m.N != 64 {
			t.Errorf("matmul %+v, want one at the roofline's largest side, 64", m)
		}
		on[m.On]++
	}
	if len(c.Roofline.Matmuls) != 4 || on["go"] != 2 || on[TorchName] != 2 {
		t.Errorf("roofline matmuls %+v, want float32 and bfloat16 of go and torch", c.Roofline.Matmuls)
	}
}

func TestBenchParseTorchProducts(t *testing.T) {
	ok := `{"torch": "2.15.0", "threads": 2, "products_ms": [1.5, 2], "matmuls": [{"on": "torch", "dtype": "float32", "flops_per_s": 1}, {"on": "torch", "dtype": "bfloat16", "flops_per_s": 2}]}`
	r, err := ParseTorchProducts([]byte("a warning\n"+ok+"\n"), 2, true)
	if err != nil || len(r.MS) != 2 || r.MS[0] != 1.5 || r.Threads != 2 || len(r.Matmuls) != 2 {
		t.Errorf("ParseTorchProducts = %+v, %v", r, err)
	}
	for _, tc := range []struct {
		out   string
		n     int
		peaks bool
		want  string
	}{
		{"", 2, false, "printed nothing"},
		{"{", 2, false, `output "{"`},
		{ok, 3, false, `"products_ms" has 2 times, want 3`},
		{ok, 1, false, `"products_ms" has 2 times, want 1`},
		{`{"products_ms": [1, 0]}`, 2, false, `"products_ms"[1] is 0`},
		{`{"products_ms": [1, 2]}`, 2, true, "0 matmul peaks"},
	} {
		_, err := ParseTorchProducts([]byte(tc.out), tc.n, tc.peaks)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ParseTorchProducts(%q, %d, %v): error %v, want one containing %q", tc.out, tc.n, tc.peaks, err, tc.want)
		}
	}
}

// TestBenchTorchProductsTiny runs the baseline script on the tiny model's
// products: one time per product, and both matmul peaks.
func TestBenchTorchProductsTiny(t *testing.T) {
	topts := torchTiny(t)
	topts.MatmulMax = 64
	cfg, _ := qwen3.NamedConfig("tiny")
	ps := ModelProducts(cfg, tinyOptions)
	var log strings.Builder
	r, err := RunTorchProducts(context.Background(), ps, dtypes.Float32, topts, &log)
	if err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	if len(r.MS) != len(ps) || r.Threads != 1 || r.Torch == "" || len(r.Matmuls) != 2 {
		t.Errorf("result %+v, want %d times, 1 thread, torch's version, 2 peaks", r, len(ps))
	}
	if !strings.Contains(log.String(), "torch: products: train head gT·x") {
		t.Errorf("the script's progress lines did not reach the log:\n%s", log.String())
	}
}

// TestBenchTorchProductForms checks the baseline script's three forms
// against torch.einsum written from the forms' definitions, on a weight
// [5, 4] and 3 rows: shapes and values.
func TestBenchTorchProductForms(t *testing.T) {
	py := testenv.RefPython(t, "torch")
	script := filepath.Join(testenv.RepoRoot(t), TorchScript)
	prog := `
import importlib.util, sys, torch
import torch.nn.functional as F
spec = importlib.util.spec_from_file_location("tq", sys.argv[1])
tq = importlib.util.module_from_spec(spec); spec.loader.exec_module(tq)
p = {"rows": 3, "in": 4, "out": 5}
defs = {"x·wT": ("ri,oi->ro", (3, 5)), "g·w": ("ro,oi->ri", (3, 4)), "gT·x": ("ro,ri->oi", (5, 4))}
torch.manual_seed(0)
for form, (eq, shape) in defs.items():
    lhs, rhs, fn = tq.PRODUCT_FORMS[form]
    a, b = torch.randn(*lhs(p), dtype=torch.float64), torch.randn(*rhs(p), dtype=torch.float64)
    got, want = fn(F, a, b), torch.einsum(eq, a, b)
    assert tuple(got.shape) == shape, (form, tuple(got.shape), shape)
    assert torch.allclose(got, want), form
print("ok")
`
	out, err := exec.Command(py, "-c", prog, script).CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "ok" {
		t.Errorf("%v:\n%s", err, out)
	}
}

// TestBenchTorchProductsTiming checks the baseline script's timing rules, as
// TestBenchMeasureProductsCounts checks MeasureProducts': products_bench
// times each distinct product once (form, rows, in and out; the part and the
// weight do not count), in the file's order, and time_product is the
// fastest of three timed calls, on a scripted clock (5, 2 and 4 ms).
func TestBenchTorchProductsTiming(t *testing.T) {
	py := testenv.RefPython(t, "torch")
	script := filepath.Join(testenv.RepoRoot(t), TorchScript)
	prog := `
import importlib.util, json, math, os, sys, tempfile, types, torch
spec = importlib.util.spec_from_file_location("tq", sys.argv[1])
tq = importlib.util.module_from_spec(spec); spec.loader.exec_module(tq)
ps = [
    {"part": "decode", "weight": "head", "form": "x·wT", "rows": 2, "in": 4, "out": 6},
    {"part": "prefill-batch", "weight": "head", "form": "x·wT", "rows": 2, "in": 4, "out": 6},  # the first's
    {"part": "prefill-row", "weight": "head", "form": "x·wT", "rows": 1, "in": 4, "out": 6},  # but its rows
    {"part": "train", "weight": "o", "form": "x·wT", "rows": 2, "in": 5, "out": 6},  # but its in
    {"part": "train", "weight": "q", "form": "x·wT", "rows": 2, "in": 4, "out": 5},  # but its out
    {"part": "train", "weight": "head", "form": "g·w", "rows": 2, "in": 4, "out": 6},  # but its form
]
timed = []
def fake(torch_, dtype, p):
    timed.append(p)
    return len(timed) / 1000  # the n-th product timed takes n ms
real, tq.time_product = tq.time_product, fake
with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
    json.dump(ps, f)
try:
    got = tq.products_bench(types.SimpleNamespace(products=f.name, dtype="float32"), torch)["products_ms"]
finally:
    os.remove(f.name)
assert len(timed) == 5 and len(got) == 6, (len(timed), got)
assert all(math.isclose(g, w) for g, w in zip(got, [1, 1, 2, 3, 4, 5])), got
reads = iter([0.0, 0.005, 1.0, 1.002, 2.0, 2.004])
n = [0]
def clock():
    n[0] += 1
    return next(reads)
tq.time = types.SimpleNamespace(perf_counter=clock)
s = real(torch, torch.float32, {"form": "g·w", "rows": 3, "in": 4, "out": 5})
assert n[0] == 6 and math.isclose(s, 0.002), (n[0], s)
print("ok")
`
	cmd := exec.Command(py, "-c", prog, script)
	var stderr strings.Builder // the script's progress lines
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil || strings.TrimSpace(string(out)) != "ok" {
		t.Errorf("%v:\n%s%s", err, out, stderr.String())
	}
}
