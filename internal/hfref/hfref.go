// Package hfref runs transformers, live, as the reference for a Qwen3
// checkpoint folder (scripts/refs/hf_qwen3.py in the references' venv that
// scripts/setup.sh installs). It is for tests only.
package hfref

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/mathrl/mathrl/internal/testenv"
)

// Logits returns transformers' float32 logits [len(ids)][position][vocab] for
// each sequence of ids, from the checkpoint in dir.
func Logits(t testing.TB, dir string, ids [][]int32) [][][]float64 {
	t.Helper()
	var out [][][]float64
	for _, line := range run(t, ids, "logits", dir) {
		var r struct{ Logits [][]float64 }
		if err := json.Unmarshal(line, &r); err != nil {
			t.Fatalf("hfref: logits line %q: %v", line, err)
		}
		out = append(out, r.Logits)
	}
	return out
}

// Greedy returns the n tokens transformers' greedy `generate` appends to each
// prompt (no stop token), from the checkpoint in dir.
func Greedy(t testing.TB, dir string, prompts [][]int32, n int) [][]int32 {
	t.Helper()
	var out [][]int32
	for _, line := range run(t, prompts, "greedy", dir, strconv.Itoa(n)) {
		var r struct {
			OutputIDs []int32 `json:"output_ids"`
		}
		if err := json.Unmarshal(line, &r); err != nil {
			t.Fatalf("hfref: greedy line %q: %v", line, err)
		}
		out = append(out, r.OutputIDs)
	}
	return out
}

// run feeds one {"input_ids": ...} line per sequence to the script and returns
// its output lines, one per sequence.
func run(t testing.TB, seqs [][]int32, args ...string) [][]byte {
	t.Helper()
	py := testenv.RefPython(t, "torch", "transformers")
	script := filepath.Join(testenv.RepoRoot(t), "scripts", "refs", "hf_qwen3.py")
	var in bytes.Buffer
	for _, s := range seqs {
		line, _ := json.Marshal(map[string][]int32{"input_ids": s})
		in.Write(append(line, '\n'))
	}
	cmd := exec.Command(py, append([]string{script}, args...)...)
	cmd.Stdin = &in
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("hfref: %s %v: %v\n%s", script, args, err, stderr.String())
	}
	var lines [][]byte
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<30)
	for sc.Scan() {
		lines = append(lines, append([]byte(nil), sc.Bytes()...))
	}
	if len(lines) != len(seqs) {
		t.Fatalf("hfref: %s %v: %d lines for %d sequences", script, args, len(lines), len(seqs))
	}
	return lines
}
