package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mathrl/mathrl/internal/vcs"
)

// TestBuildScriptStampsCommit builds mathrl with scripts/build.sh and Go's own
// VCS stamp off (-buildvcs=false), then runs `mathrl version` outside any git
// checkout: the binary must still name the commit it was built from, as the
// stamp of scripts/build.sh.
func TestBuildScriptStampsCommit(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the mathrl binary")
	}
	root := filepath.Join("..", "..")
	head, err := exec.Command("git", "-C", root, "rev-parse", "HEAD").Output()
	if err != nil {
		t.Skip("not a git checkout:", err)
	}
	status, err := exec.Command("git", "-C", root, "status", "--porcelain", "--untracked-files=no").Output()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "mathrl")
	build := exec.Command("bash", filepath.Join(root, "scripts", "build.sh"), bin)
	build.Env = append(os.Environ(), "GOFLAGS=-buildvcs=false")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("scripts/build.sh: %v\n%s", err, out)
	}
	run := exec.Command(bin, "version")
	run.Dir = t.TempDir() // no checkout here: a run-time lookup would find nothing
	out, err := run.Output()
	if err != nil {
		t.Fatalf("mathrl version: %v", err)
	}
	want := vcs.Stamp{Commit: strings.TrimSpace(string(head)), Dirty: len(strings.TrimSpace(string(status))) > 0, Source: vcs.SourceLinker}
	if got := string(out); !strings.HasPrefix(got, "mathrl "+want.String()+"; ") {
		t.Errorf("mathrl version printed %q, want it to start with %q", got, "mathrl "+want.String()+"; ")
	}
}
