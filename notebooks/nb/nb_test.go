package nb

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/mathrl/mathrl/data"
)

func TestPathIsTheNotebookFoldersParent(t *testing.T) {
	t.Setenv("GONB_DIR", filepath.Join("repo", "notebooks"))
	if got, want := Path("results", "runs"), filepath.Join("repo", "results", "runs"); got != want {
		t.Errorf("Path = %q, want %q", got, want)
	}
}

func TestMustPanicsWithTheError(t *testing.T) {
	if got := Must(7, nil); got != 7 {
		t.Errorf("Must(7, nil) = %d", got)
	}
	bad := errors.New("bad file")
	defer func() {
		if r := recover(); r != bad {
			t.Errorf("recovered %v, want %v", r, bad)
		}
	}()
	Must(0, bad)
	t.Error("Must did not panic")
}

// TestLabelsPullsAMissingSet pulls AIME 2025 from a mirror folder into an empty
// data folder and reads its 30 labels.
func TestLabelsPullsAMissingSet(t *testing.T) {
	src := os.Getenv(data.DataDirEnv)
	set, _ := data.SetByName("aime25")
	raw, err := os.ReadFile(set.Path(src))
	if src == "" || err != nil {
		t.Skipf("needs $%s with the dataset files: %v", data.DataDirEnv, err)
	}
	mirror, dir := t.TempDir(), t.TempDir()
	if err := os.WriteFile(set.Path(mirror), raw, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv(data.MirrorEnv, mirror)
	t.Setenv(data.DataDirEnv, dir)

	labels := Labels("aime25")
	if len(labels) != 30 || labels[0] != "70" {
		t.Fatalf("got %d labels, first %q; want 30, first \"70\"", len(labels), labels[0])
	}
	if err := set.Check(dir); err != nil {
		t.Errorf("the pulled file: %v", err)
	}
}

func TestDatasetStopsTheCellOnAnUnknownSet(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("no panic for an unknown set")
		}
	}()
	Dataset("no-such-set")
}
