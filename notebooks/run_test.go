package notebooks

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestRunReal executes testdata/pass.ipynb and testdata/fail.ipynb with the
// real Jupyter and GoNB kernel (installed by scripts/setup-notebooks.sh): the
// failing one must be named with its cell, and nothing published.
func TestRunReal(t *testing.T) {
	if testing.Short() {
		t.Skip("runs Jupyter and compiles Go cells (about a minute)")
	}
	bin, _ := filepath.Abs(filepath.Join("..", ".cache", "bin"))
	if _, err := os.Stat("/usr/bin/jupyter"); err != nil {
		t.Skip("no /usr/bin/jupyter (scripts/setup.sh installs it)")
	}
	if _, err := os.Stat(filepath.Join(bin, "gonb")); err != nil {
		if _, err := exec.LookPath("gonb"); err != nil {
			t.Skip("no gonb (scripts/setup-notebooks.sh installs it)")
		}
	}
	out := t.TempDir()
	opts := Options{Dir: "testdata", Out: out, Path: []string{bin}}
	_, err := Run(context.Background(), opts)
	if err == nil {
		t.Fatal("Run passed although fail.ipynb panics")
	}
	if msg := err.Error(); !strings.Contains(msg, "fail.ipynb: cell 4") || !strings.Contains(msg, "runtime panic") ||
		strings.Contains(msg, "pass.ipynb") {
		t.Errorf("error does not name fail.ipynb cell 4 alone:\n%v", err)
	}
	if entries, _ := os.ReadDir(out); len(entries) != 0 {
		t.Errorf("published %d files although a notebook failed", len(entries))
	}

	opts.Only = []string{"pass"}
	results, err := Run(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{results[0].Executed, results[0].HTML} {
		data, err := os.ReadFile(p)
		if err != nil || !strings.Contains(string(data), "image/png") {
			t.Errorf("%s: %v, or no image in it", p, err)
		}
	}
}
