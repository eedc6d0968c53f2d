package grpo

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/mathrl/mathrl/internal/testenv"
)

// readReference decodes the committed reference values testdata/name.
func readReference[T any](t *testing.T, name string) T {
	t.Helper()
	var ref T
	raw, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &ref); err != nil {
		t.Fatalf("testdata/%s: %v", name, err)
	}
	return ref
}

// TestReferenceScriptsOutput reruns each plain-Python reference script (the
// standard library only, on Debian's Python) and checks that its committed
// JSON is exactly what it prints.
func TestReferenceScriptsOutput(t *testing.T) {
	py := testenv.DebianPython(t)
	for _, name := range []string{"variants_reference", "distill_reference", "prime_reference"} {
		t.Run(name, func(t *testing.T) {
			cmd := exec.Command(py, name+".py")
			cmd.Dir = "testdata"
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("%s.py: %v", name, err)
			}
			committed, err := os.ReadFile(filepath.Join("testdata", name+".json"))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(out, committed) {
				t.Errorf("testdata/%s.json is not the output of %s.py; regenerate it", name, name)
			}
		})
	}
}
