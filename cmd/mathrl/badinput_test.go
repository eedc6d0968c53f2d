package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mathrl/mathrl/gomlx_trainer/backend/backendtest"
)

// TestBadInputLeavesNoOutput runs each command that reads an input file and
// writes an output file on an input whose first line is good and whose second
// is not: the one error names the input and line 2 (and the field where one
// is at fault), and the output file is not created, nor anything else left in
// its folder, although the streaming commands had processed line 1.
func TestBadInputLeavesNoOutput(t *testing.T) {
	dir := t.TempDir()
	model := filepath.Join(dir, "model")
	mustRunCLI(t, "model", "init", "--config", "tiny", "--out", model, "--seed", "1")
	for _, tc := range []struct {
		name, input string
		args        []string // up to the flag that takes the input file (--in, or --data for eval)
		want        []string // in the error, after "IN:2"
	}{
		{"score", `{"response":"\\boxed{1}","label":"1"}` + "\n" + `{"response":7,"label":"1"}`,
			[]string{"score", "--scorer", "math", "--in"}, []string{"response"}},
		{"score, line cut short", `{"response":"\\boxed{1}","label":"1"}` + "\n" + `{"response":"\\boxed{1}","lab`,
			[]string{"score", "--scorer", "math", "--in"}, nil},
		{"tokenize", `{"text":"a"}` + "\n" + `{"text":["a"]}`, []string{"tokenize", "--tokenizer", "bytes", "--in"}, []string{"text"}},
		{"chat render", `{"messages":[{"role":"user","content":"hi"}]}` + "\n" + `{"messages":"hi"}`,
			[]string{"chat", "render", "--in"}, []string{"messages"}},
		{"forward", `{"input_ids":[1,2]}` + "\n" + `{"input_ids":[1,1e400]}`,
			[]string{"forward", "--model", model, "--backend", backendtest.Kind(), "--in"}, []string{"input_ids"}},
		{"generate", `{"input_ids":[1,2]}` + "\n" + `{"input_ids":[1,999]}`,
			[]string{"generate", "--model", model, "--backend", backendtest.Kind(), "--max-new-tokens", "2", "--stop=", "--in"}, []string{"input_ids"}},
		{"eval", `{"id":"a","problem":"1+1=","answer":"2"}` + "\n" + `{"id":"b","problem":"","answer":"2"}`,
			[]string{"eval", "--model", model, "--tokenizer", "bytes", "--backend", backendtest.Kind(), "--samples", "1", "--max-tokens", "2", "--data"},
			[]string{"problem"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			work := t.TempDir()
			in, out := filepath.Join(work, "in.jsonl"), filepath.Join(work, "out.jsonl")
			if err := os.WriteFile(in, []byte(tc.input+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			args := append(slices.Clone(tc.args), in, "--out", out)
			_, _, err := runCLI(t, "", args...)
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range append([]string{in + ":2"}, tc.want...) {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
			if n := strings.Count(err.Error(), in); n != 1 {
				t.Errorf("error %q names the input %d times, want once", err, n)
			}
			entries, _ := os.ReadDir(work)
			var names []string
			for _, e := range entries {
				names = append(names, e.Name())
			}
			if !slices.Equal(names, []string{"in.jsonl"}) {
				t.Errorf("folder holds %v after the failed run, want only in.jsonl", names)
			}
		})
	}
}
