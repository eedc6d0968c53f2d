package data

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/mathrl/mathrl/internal/testenv"
)

// TestRealSets reads every published file: checksums, row counts and null
// answers must be those listed in the data's SOURCES.md.
func TestRealSets(t *testing.T) {
	dir := testenv.DataDir(t, "math_train.jsonl")
	// From SOURCES.md: the only labels without a usable boxed answer.
	wantNull := map[string][]string{
		"math_train": {"train/algebra/24014.json", "train/algebra/25040.json", "train/number_theory/7115.json", "train/number_theory/7117.json"},
	}
	for _, s := range Sets {
		t.Run(s.Name, func(t *testing.T) {
			if err := s.Check(dir); err != nil {
				t.Fatal(err)
			}
			rows, err := LoadSet(dir, s.Name)
			if err != nil {
				t.Fatal(err)
			}
			if len(rows) != s.Rows {
				t.Errorf("%s: %d rows, want %d", s.File, len(rows), s.Rows)
			}
			var null []string
			for _, r := range rows {
				if r.Answer == nil {
					null = append(null, r.ID)
				}
			}
			if got, want := strings.Join(null, " "), strings.Join(wantNull[s.Name], " "); got != want {
				t.Errorf("%s: rows with a null answer: %q, want %q", s.File, got, want)
			}
		})
	}
}

// TestPullRealSets copies the published files from the data folder as a mirror.
func TestPullRealSets(t *testing.T) {
	src := testenv.DataDir(t, "math_train.jsonl")
	dest := t.TempDir()
	var log bytes.Buffer
	if err := Pull(context.Background(), PullOptions{From: src, Dir: dest, Progress: &log}); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(log.String(), "sha256 ok"); n != len(Sets) {
		t.Errorf("%d files pulled, want %d:\n%s", n, len(Sets), log.String())
	}
	var files []string
	for _, s := range Sets {
		files = append(files, s.File)
	}
	slices.Sort(files)
	assertFiles(t, dest, files...)
}

func TestSetByName(t *testing.T) {
	s, err := SetByName("math500")
	if err != nil || s.File != "math500.jsonl" || s.Rows != 500 {
		t.Errorf("SetByName(math500) = %+v, %v", s, err)
	}
	if _, err := SetByName("gsm8k"); err == nil {
		t.Error("SetByName(gsm8k) found a set")
	}
	if got := strings.Join(SetNames(), ","); got != "sample300,math_train,math_test,math500,aime24,aime25" {
		t.Errorf("SetNames() = %s", got)
	}
}

func TestLoadSetMissing(t *testing.T) {
	_, err := LoadSet(t.TempDir(), "aime24")
	if err == nil || !strings.Contains(err.Error(), "set aime24 not found in") {
		t.Errorf("LoadSet from an empty folder: %v", err)
	}
}
