package scorer

import (
	"compress/gzip"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/mathrl/mathrl/internal/jsonl"
)

// slimeLabel is one line of testdata/slime_labels.jsonl.gz, written by
// testdata/make_verdicts.py: slime's normalised forms of one distinct MATH or
// AIME label.
type slimeLabel struct {
	Label     string  `json:"label"`
	Mathd     string  `json:"mathd"`     // mathd_normalize_answer
	Normalize string  `json:"normalize"` // _normalize (the sympy-path normaliser)
	Minerva   string  `json:"minerva"`   // normalize_final_answer
	DapoGT    *string `json:"dapo_gt"`   // str(int(float(minerva))); nil where Python raises
}

// TestLabelsNormaliseLikeSlime runs the three normalisers and dapo's label
// conversion on every distinct label of the datasets and compares with slime.
func TestLabelsNormaliseLikeSlime(t *testing.T) {
	path := filepath.Join("testdata", "slime_labels.jsonl.gz")
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	var n int
	bad := map[string]int{}
	report := func(what string, l slimeLabel, got, want string) {
		bad[what]++
		if bad[what] <= 30 {
			t.Errorf("%s(%q) = %q, slime %q", what, l.Label, got, want)
		}
	}
	err = jsonl.Read(gz, path, func(_ int, raw []byte) error {
		var l slimeLabel
		if err := json.Unmarshal(raw, &l); err != nil {
			return err
		}
		n++
		if got := MathdNormalize(l.Label); got != l.Mathd {
			report("MathdNormalize", l, got, l.Mathd)
		}
		if got := Normalize(l.Label); got != l.Normalize {
			report("Normalize", l, got, l.Normalize)
		}
		if got := MinervaNormalize(l.Label); got != l.Minerva {
			report("MinervaNormalize", l, got, l.Minerva)
		}
		gt, err := DapoTruth(l.Label)
		switch {
		case l.DapoGT == nil && !errors.Is(err, ErrNonNumericLabel):
			report("DapoTruth", l, gt, "<ValueError>")
		case l.DapoGT != nil && (err != nil || gt != *l.DapoGT):
			report("DapoTruth", l, gt, *l.DapoGT)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n < 4000 {
		t.Fatalf("only %d labels in %s", n, path)
	}
	for what, k := range bad {
		t.Logf("%s: %d of %d labels differ", what, k, n)
	}
}
