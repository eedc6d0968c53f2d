package latextext

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/mathrl/mathrl/data"
	"github.com/mathrl/mathrl/internal/jsonl"
	"github.com/mathrl/mathrl/internal/testenv"
)

// referenceCase is one line of testdata/reference.jsonl, written by
// testdata/make_reference.py from pylatexenc 2.10 itself.
type referenceCase struct {
	Set    string  `json:"set"`
	Input  string  `json:"input"`
	Output *string `json:"output"`
	Error  *string `json:"error"`
}

func readReference(t testing.TB) []referenceCase {
	t.Helper()
	path := filepath.Join("testdata", "reference.jsonl")
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var cases []referenceCase
	err = jsonl.Read(f, path, func(_ int, raw []byte) error {
		var c referenceCase
		if err := json.Unmarshal(raw, &c); err != nil {
			return err
		}
		if (c.Output == nil) == (c.Error == nil) {
			return fmt.Errorf("want exactly one of output and error")
		}
		cases = append(cases, c)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return cases
}

// TestReference compares ToText with pylatexenc on every reference input: all
// dataset labels and the spec's examples must agree exactly (same text, or an
// error where pylatexenc raises), and at least 99.5% of all inputs.
func TestReference(t *testing.T) {
	cases := readReference(t)
	if len(cases) < 10000 {
		t.Fatalf("only %d reference cases", len(cases))
	}
	mustAll := map[string]bool{"label": true, "label_pre": true, "spec": true}
	total, same := map[string]int{}, map[string]int{}
	shown := 0
	for _, c := range cases {
		got, err := ToText(c.Input)
		total[c.Set]++
		ok := false
		switch {
		case c.Error != nil:
			ok = err != nil
		case err == nil:
			ok = got == *c.Output
		}
		if ok {
			same[c.Set]++
			continue
		}
		if mustAll[c.Set] || shown < 40 {
			shown++
			want := "error " + fmt.Sprint(deref(c.Error))
			if c.Output != nil {
				want = fmt.Sprintf("%q", *c.Output)
			}
			t.Logf("[%s] ToText(%q) = %q, %v; pylatexenc: %s", c.Set, c.Input, got, err, want)
		}
	}
	var sets []string
	for s := range total {
		sets = append(sets, s)
	}
	sort.Strings(sets)
	all, allSame := 0, 0
	for _, s := range sets {
		t.Logf("%-10s %5d / %5d identical (%.2f%%)", s, same[s], total[s], 100*float64(same[s])/float64(total[s]))
		all += total[s]
		allSame += same[s]
		if mustAll[s] && same[s] != total[s] {
			t.Errorf("set %s: %d of %d differ from pylatexenc, want none", s, total[s]-same[s], total[s])
		}
	}
	rate := float64(allSame) / float64(all)
	t.Logf("overall    %5d / %5d identical (%.2f%%)", allSame, all, 100*rate)
	if rate < 0.995 {
		t.Errorf("overall agreement %.2f%%, want >= 99.5%%", 100*rate)
	}
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// TestReferenceCoversLabels checks that testdata/reference.jsonl is not stale:
// every dataset label containing a backslash is in its "label" set.
func TestReferenceCoversLabels(t *testing.T) {
	dir := testenv.DataDir(t, "math_train.jsonl")
	have := map[string]bool{}
	for _, c := range readReference(t) {
		if c.Set == "label" {
			have[c.Input] = true
		}
	}
	missing := 0
	for _, s := range data.DefaultSets() {
		rows, err := data.LoadSet(dir, s.Name)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rows {
			if r.Answer != nil && strings.Contains(*r.Answer, `\`) && !have[*r.Answer] {
				if missing++; missing <= 10 {
					t.Errorf("%s %s: label %q not in the reference (rerun testdata/make_reference.py)", s.File, r.ID, *r.Answer)
				}
			}
		}
	}
}
