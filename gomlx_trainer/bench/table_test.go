package bench

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mathrl/mathrl/internal/testenv"
)

// TestBenchTableScript runs scripts/bench/table.py (stdlib Python only) on
// raw lines as scripts/bench-table.sh writes them, Comparisons in their JSON
// with a row name, and checks the decode rows: each side's fraction is the
// larger of its decode_mbu and decode_mfu, and the limit column names the one
// that binds xla-cpu's step.
func TestBenchTableScript(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not on PATH")
	}
	side := func(name string, ms, mbu, mfu float64) Side {
		return Side{Name: name, Threads: 2, Result: Result{DecodeBatch: 16, PromptLen: 64, NewTokens: 32, DecodeStepMS: ms,
			DecodeMBU: mbu, DecodeMFU: mfu}}
	}
	var raw strings.Builder
	for _, r := range []struct {
		row        string
		xla, torch Side
	}{
		{"decode batch 16", side("xla-cpu", 100, 0.4, 0.2), side(TorchName, 120, 0.3, 0.1)},    // both bound by the bandwidth
		{"decode batch 64", side("xla-cpu", 300, 0.15, 0.35), side(TorchName, 330, 0.2, 0.25)}, // both by the matmul peak
		{"decode batch 32", side("xla-cpu", 200, 0.2, 0.3), side(TorchName, 250, 0.3, 0.2)},    // xla-cpu's limit is the column's
		{"decode batch 8", side("xla-cpu", 100, 0.25, 0.25), side(TorchName, 100, 0.25, 0.25)}, // a tie: the bandwidth, as DecodeBound
	} {
		raw.Write(jsonLine(t, Comparison{Sides: []Side{r.xla, r.torch}}, map[string]any{"row": r.row}))
	}
	path := filepath.Join(t.TempDir(), "raw.jsonl")
	if err := os.WriteFile(path, []byte(raw.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(py, filepath.Join(testenv.RepoRoot(t), "scripts", "bench", "table.py"), path).CombinedOutput()
	if err != nil {
		t.Fatalf("table.py: %v\n%s", err, out)
	}
	want := "| row | part | xla-cpu | PyTorch | xla-cpu vs PyTorch: median (range) | xla-cpu of its limit | PyTorch of its limit | limit |\n" +
		"|---|---|---:|---:|---:|---:|---:|---|\n" +
		"| decode batch 16 | decode | 100.0 ms/step | 120.0 ms/step | **1.20×** (1.20–1.20, 1 runs) | 40.0% | 30.0% | copy bandwidth |\n" +
		"| decode batch 64 | decode | 300.0 ms/step | 330.0 ms/step | **1.10×** (1.10–1.10, 1 runs) | 35.0% | 25.0% | matmul peak |\n" +
		"| decode batch 32 | decode | 200.0 ms/step | 250.0 ms/step | **1.25×** (1.25–1.25, 1 runs) | 30.0% | 30.0% | matmul peak |\n" +
		"| decode batch 8 | decode | 100.0 ms/step | 100.0 ms/step | **1.00×** (1.00–1.00, 1 runs) | 25.0% | 25.0% | copy bandwidth |\n"
	if string(out) != want {
		t.Errorf("table.py:\n%s\nwant:\n%s", out, want)
	}
}

// jsonLine is v's JSON with the extra fields added, and a newline.
func jsonLine(t *testing.T, v any, extra map[string]any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var line map[string]any
	if err := json.Unmarshal(b, &line); err != nil {
		t.Fatal(err)
	}
	for k, x := range extra {
		line[k] = x
	}
	if b, err = json.Marshal(line); err != nil {
		t.Fatal(err)
	}
	return append(b, '\n')
}

// TestBenchTableScriptProducts runs scripts/bench/table.py on step rows and
// two runs of products, as scripts/bench-table.sh writes them, and checks the
// products table worked out by hand: a part's total is Σ count x time (the
// head's apart), its fraction of the 1 GFLOP/s peak, and its share of the
// median step time of its row, each the median over the runs: the train
// step's, the prefill's (both prefill parts) or the decode step's.
func TestBenchTableScriptProducts(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not on PATH")
	}
	dir := t.TempDir()
	var raw, products []byte
	steps := []struct {
		row        string
		xla, torch Result
	}{
		{"train A", Result{TrainStepMS: 20}, Result{TrainStepMS: 40}},
		{"decode B", Result{PrefillMS: 10, DecodeStepMS: 4}, Result{PrefillMS: 5, DecodeStepMS: 2}},
	}
	for _, s := range steps {
		c := Comparison{Sides: []Side{{Name: "xla-cpu", Result: s.xla}, {Name: TorchName, Result: s.torch}}}
		raw = append(raw, jsonLine(t, c, map[string]any{"row": s.row, "run": 1})...)
	}
	for run, xlaQ := range []float64{0.5, 1.5} {
		c := ProductComparison{
			DType: "float32",
			Products: []Product{
				{Part: PartTrain, Weight: "q", Form: FormForward, Rows: 10, In: 100, Out: 50, Count: 4},            // 1e5 FLOPs
				{Part: PartTrain, Weight: "head", Form: FormWeightGrad, Rows: 10, In: 100, Out: 1000, Count: 1},    // 2e6
				{Part: PartDecode, Weight: "head", Form: FormForward, Rows: 2, In: 100, Out: 1000, Count: 1},       // 4e5
				{Part: PartPrefillRow, Weight: "q", Form: FormForward, Rows: 4, In: 100, Out: 50, Count: 2},        // 4e4
				{Part: PartPrefillBatch, Weight: "head", Form: FormForward, Rows: 8, In: 100, Out: 1000, Count: 1}, // 1.6e6
			},
			Sides: []ProductSide{{Name: "xla-cpu", MS: []float64{xlaQ, 4, 2, 1, 5}}, {Name: TorchName, MS: []float64{1, 6, 1, 2, 2}}},
			Roofline: &Roofline{Matmuls: []Matmul{{On: TorchName, DType: "float32", FLOPsPerS: 1e9},
				{On: "xla-cpu", DType: "float32", FLOPsPerS: 5e8}, {On: TorchName, DType: "bfloat16", FLOPsPerS: 9e9}}},
		}
		products = append(products, jsonLine(t, c, map[string]any{"train_row": "train A", "decode_row": "decode B", "run": run + 1})...)
	}
	rawPath, productsPath := filepath.Join(dir, "raw.jsonl"), filepath.Join(dir, "products.jsonl")
	if err := os.WriteFile(rawPath, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(productsPath, products, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(py, filepath.Join(testenv.RepoRoot(t), "scripts", "bench", "table.py"), rawPath, productsPath).CombinedOutput()
	if err != nil {
		t.Fatalf("table.py: %v\n%s", err, out)
	}
	_, table, ok := strings.Cut(string(out), "| step | its products |")
	if !ok {
		t.Fatalf("table.py printed no products table:\n%s", out)
	}
	want := " xla-cpu | PyTorch | xla-cpu vs PyTorch | xla-cpu of peak | PyTorch of peak | share of the step: xla-cpu | PyTorch |\n" +
		"|---|---|---:|---:|---:|---:|---:|---:|---:|\n" +
		// xla-cpu: runs of 6 and 10 ms (2.4e6 FLOPs: 40% and 24%; of a 20 ms step: 30% and 50%)
		"| train A: train step | all | 8.0 ms | 10.0 ms | 1.25× | 32.0% | 24.0% | 40.0% | 25.0% |\n" +
		"| train A: train step | the head's | 4.0 ms | 6.0 ms | 1.50× | 50.0% | 33.3% | 20.0% | 15.0% |\n" +
		// 8e4 FLOPs in 2 and 4 ms, of a prefill of 10 and 5 ms; no head
		"| decode B: prefill, a prompt at a time (the sampler's) | all | 2.0 ms | 4.0 ms | 2.00× | 4.0% | 2.0% | 20.0% | 80.0% |\n" +
		// 1.6e6 FLOPs in 5 and 2 ms, of a prefill of 10 and 5 ms
		"| decode B: prefill, every prompt in one forward (PyTorch's) | all | 5.0 ms | 2.0 ms | 0.40× | 32.0% | 80.0% | 50.0% | 40.0% |\n" +
		"| decode B: prefill, every prompt in one forward (PyTorch's) | the head's | 5.0 ms | 2.0 ms | 0.40× | 32.0% | 80.0% | 50.0% | 40.0% |\n" +
		"| decode B: decode step | all | 2.0 ms | 1.0 ms | 0.50× | 20.0% | 40.0% | 50.0% | 50.0% |\n" +
		"| decode B: decode step | the head's | 2.0 ms | 1.0 ms | 0.50× | 20.0% | 40.0% | 50.0% | 50.0% |\n"
	if table != want {
		t.Errorf("products table:\n%s\nwant:\n%s", table, want)
	}
}
