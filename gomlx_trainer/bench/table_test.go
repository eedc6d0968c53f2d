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
		b, err := json.Marshal(Comparison{Sides: []Side{r.xla, r.torch}})
		if err != nil {
			t.Fatal(err)
		}
		var line map[string]any
		if err := json.Unmarshal(b, &line); err != nil {
			t.Fatal(err)
		}
		line["row"] = r.row
		if b, err = json.Marshal(line); err != nil {
			t.Fatal(err)
		}
		raw.Write(append(b, '\n'))
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
