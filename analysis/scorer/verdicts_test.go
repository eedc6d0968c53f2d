package scorer

import (
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/mathrl/mathrl/internal/jsonl"
)

// slimeVerdict is one line of testdata/slime_verdicts.jsonl.gz, written by
// testdata/make_verdicts.py from slime's own scorer files (Python 3.11,
// sympy 1.11.1, pylatexenc 2.10). To regenerate both reference files, with a
// folder holding slime's slime/rollout/rm_hub scorer files:
//
//	/usr/bin/python3 testdata/make_verdicts.py RM_HUB "$MATHRL_DATA_DIR" testdata
type slimeVerdict struct {
	Family     string          `json:"family"` // tp, fp, perturb or number
	Response   string          `json:"response"`
	Label      json.RawMessage `json:"label"` // a string, or a JSON number
	Math       int             `json:"math"`
	DeepScaler int             `json:"deepscaler"`
	Dapo       *int            `json:"dapo"`       // nil when dapo raised
	Pred       *string         `json:"pred"`       // dapo's pred; nil when it raised
	DapoError  *string         `json:"dapo_error"` // ValueError or OverflowError
}

func readVerdicts(t *testing.T) []slimeVerdict {
	t.Helper()
	path := filepath.Join("testdata", "slime_verdicts.jsonl.gz")
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	var out []slimeVerdict
	err = jsonl.Read(gz, path, func(_ int, raw []byte) error {
		var v slimeVerdict
		if err := json.Unmarshal(raw, &v); err != nil {
			return err
		}
		out = append(out, v)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestAgreementWithSlime scores every case of slime_verdicts.jsonl.gz with the
// three Go scorers. Constructed cases (tp, fp) must agree 100%; all cases at
// least 99.5% per scorer. Every disagreement is printed.
func TestAgreementWithSlime(t *testing.T) {
	if testing.Short() {
		t.Skip("70k cases; skipped with -short")
	}
	cases := readVerdicts(t)
	if len(cases) < 10000 {
		t.Fatalf("only %d cases in the reference file", len(cases))
	}
	type tally struct{ n, agree int }
	stats := map[string]map[string]*tally{} // scorer -> family -> tally
	var mismatches []string
	record := func(scorer, family string, ok bool, detail string) {
		if stats[scorer] == nil {
			stats[scorer] = map[string]*tally{}
		}
		s := stats[scorer][family]
		if s == nil {
			s = &tally{}
			stats[scorer][family] = s
		}
		s.n++
		if ok {
			s.agree++
		} else {
			mismatches = append(mismatches, fmt.Sprintf("%s/%s: %s", scorer, family, detail))
		}
	}
	for _, c := range cases {
		label, err := LabelFromJSON(c.Label)
		if err != nil {
			t.Fatalf("label %s: %v", c.Label, err)
		}
		m, _ := MathCorrect(c.Response, label)
		record(Math, c.Family, b2i(m) == c.Math, fmt.Sprintf("response %q label %s: go %d, slime %d", c.Response, c.Label, b2i(m), c.Math))
		d, _ := DeepScalerCorrect(c.Response, label)
		record(DeepScaler, c.Family, b2i(d) == c.DeepScaler, fmt.Sprintf("response %q label %s: go %d, slime %d", c.Response, c.Label, b2i(d), c.DeepScaler))
		r, err := DapoScore(c.Response, label)
		switch {
		case c.Dapo == nil:
			record(Dapo, c.Family, errors.Is(err, ErrNonNumericLabel), fmt.Sprintf("response %q label %s: go %+v %v, slime %s", c.Response, c.Label, r, err, *c.DapoError))
		default:
			ok := err == nil && int(r.Reward) == *c.Dapo && r.Pred == *c.Pred
			record(Dapo, c.Family, ok, fmt.Sprintf("response %q label %s: go %+v %v, slime %d pred %q", c.Response, c.Label, r, err, *c.Dapo, *c.Pred))
		}
	}
	for i, m := range mismatches {
		if i == 200 {
			t.Logf("... %d more", len(mismatches)-200)
			break
		}
		t.Log("mismatch " + m)
	}
	for _, scorer := range Names() {
		total := tally{}
		fams := make([]string, 0, len(stats[scorer]))
		for f := range stats[scorer] {
			fams = append(fams, f)
		}
		sort.Strings(fams)
		for _, f := range fams {
			s := stats[scorer][f]
			total.n += s.n
			total.agree += s.agree
			t.Logf("%-10s %-8s %6d / %6d agree (%.3f%%)", scorer, f, s.agree, s.n, 100*float64(s.agree)/float64(s.n))
			if (f == "tp" || f == "fp") && s.agree != s.n {
				t.Errorf("%s: %d of %d constructed %s cases disagree with slime", scorer, s.n-s.agree, s.n, f)
			}
		}
		rate := float64(total.agree) / float64(total.n)
		t.Logf("%-10s all      %6d / %6d agree (%.3f%%)", scorer, total.agree, total.n, 100*rate)
		if rate < 0.995 {
			t.Errorf("%s: agreement %.3f%% < 99.5%%", scorer, 100*rate)
		}
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
