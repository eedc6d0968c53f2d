package latextext

import (
	"bytes"
	"go/format"
	"os"
	"os/exec"
	"testing"

	"github.com/mathrl/mathrl/internal/testenv"
)

// TestTablesUpToDate regenerates tables.go from the installed pylatexenc and
// requires it to equal the committed file.
func TestTablesUpToDate(t *testing.T) {
	py := testenv.DebianPython(t, "pylatexenc")
	out, err := exec.Command(py, "gen_tables.py").Output()
	if err != nil {
		t.Fatalf("gen_tables.py: %v", err)
	}
	want, err := format.Source(out)
	if err != nil {
		t.Fatal(err)
	}
	have, err := os.ReadFile("tables.go")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(have, want) {
		t.Error("tables.go differs from gen_tables.py's output: run go generate ./analysis/latextext")
	}
}
