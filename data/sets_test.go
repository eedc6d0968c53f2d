package data

import (
	"bytes"
	"context"
	"slices"
	"strconv"
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
	for _, s := range DefaultSets() {
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
	if n := strings.Count(log.String(), "sha256 ok"); n != len(DefaultSets()) {
		t.Errorf("%d files pulled, want %d:\n%s", n, len(DefaultSets()), log.String())
	}
	var files []string
	for _, s := range DefaultSets() {
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
	if got := strings.Join(SetNames(), ","); got != "sample300,math_train,math_test,math500,aime24,aime25,dapo_math_17k" {
		t.Errorf("SetNames() = %s", got)
	}
	var names []string
	for _, s := range DefaultSets() {
		names = append(names, s.Name)
	}
	if got := strings.Join(names, ","); got != "sample300,math_train,math_test,math500,aime24,aime25" {
		t.Errorf("DefaultSets() = %s, want all but dapo_math_17k, pulled only on request", got)
	}
}

// TestDAPOSample reads the built-in sample of dapo_math_17k: 16 problems in
// DAPO's prompt template, each with its label, numbered by line.
func TestDAPOSample(t *testing.T) {
	rows, ok := Sample(DAPOSet)
	if !ok || len(rows) != 16 {
		t.Fatalf("Sample(%s) = %d rows, %v", DAPOSet, len(rows), ok)
	}
	for i, r := range rows {
		if r.ID != strconv.Itoa(i+1) || r.Answer == nil || *r.Answer == "" || r.Source != DAPOSource ||
			!strings.HasPrefix(r.Problem, "Solve the following math problem step by step.") ||
			!strings.HasSuffix(r.Problem, "Remember to put your answer on its own line after \"Answer:\".") {
			t.Errorf("row %d: %+v", i+1, r)
		}
	}
	if _, ok := Sample("math500"); ok {
		t.Error("math500 has a built-in sample")
	}
}

func TestLoadSetMissing(t *testing.T) {
	_, err := LoadSet(t.TempDir(), "aime24")
	if err == nil || !strings.Contains(err.Error(), "set aime24 is not in ") || !strings.Contains(err.Error(), ": run `mathrl data pull --set aime24` to get it") {
		t.Errorf("LoadSet from an empty folder: %v", err)
	}
}
