package verify

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// corpusCase is one line of testdata/corpus.jsonl: a hand-checked case
// (response, label, verdict, the rule that decides it), built from MATH and
// AIME labels independently of this package's code (testdata/CORPUS.md).
type corpusCase struct {
	ID       string `json:"id"`
	Response string `json:"response"`
	Label    string `json:"label"`
	Correct  bool   `json:"correct"`
	Why      string `json:"why"`
	Source   string `json:"source"`
}

// TestCorpus checks every hand-checked verdict.
func TestCorpus(t *testing.T) {
	f, err := os.Open(filepath.Join("testdata", "corpus.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	n, right := 0, 0
	ids := map[string]bool{}
	for line := 1; sc.Scan(); line++ {
		var c corpusCase
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			t.Fatalf("corpus.jsonl:%d: %v", line, err)
		}
		if c.ID == "" || ids[c.ID] || c.Why == "" {
			t.Fatalf("corpus.jsonl:%d: missing or repeated id, or no why: %q", line, c.ID)
		}
		ids[c.ID] = true
		n++
		v, err := Check(c.Response, c.Label)
		if err != nil || v.Correct != c.Correct {
			t.Errorf("%s: verdict %v (read %q, label %q), %v; want %v: %s", c.ID, v.Correct, v.Answer, v.Label, err, c.Correct, c.Why)
			continue
		}
		if c.Correct {
			right++
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if n < 300 {
		t.Errorf("%d cases, want at least 300", n)
	}
	t.Logf("%d cases, %d correct ones accepted", n, right)
}
