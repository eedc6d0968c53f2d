package scorer

import (
	"compress/gzip"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/mathrl/mathrl/internal/jsonl"
)

// The regexps of slime's normaliser that dropSpacesAfterDash,
// injectMixedNumbers and isFrac match by hand (Go's $ only matches at the
// end, so fracRe spells Python's $ as \n?$).
var (
	dashRe  = regexp.MustCompile(`- *`)
	mixedRe = regexp.MustCompile(`([0-9]) +([0-9])`)
	fracRe  = regexp.MustCompile(`^-?[0-9]+.?/0*[1-9][0-9]*.?\n?$`)
)

// checkRewrites fails when a hand-written matcher and its regexp disagree on s.
func checkRewrites(t *testing.T, s string) {
	t.Helper()
	if got, want := dropSpacesAfterDash(s), dashRe.ReplaceAllString(s, "-"); got != want {
		t.Errorf("dropSpacesAfterDash(%q) = %q, regexp %q", s, got, want)
	}
	if got, want := injectMixedNumbers(s), mixedRe.ReplaceAllString(s, "${1}+${2}"); got != want {
		t.Errorf("injectMixedNumbers(%q) = %q, regexp %q", s, got, want)
	}
	if got, want := isFrac(s), fracRe.MatchString(s); got != want {
		t.Errorf("isFrac(%q) = %v, regexp %v", s, got, want)
	}
}

var rewriteSeeds = []string{"", "-", "- ", "a -  b - c", "--  1", "1 2 3", "7 3/4", "1  2", "x 1 2", "1 x 2",
	"٣ 4", "1/2", "-1/2", "12/34", "1x/2", "1//2", "1/02", "1/0", "1/00", "01/001x", "1/2\n", "1/2x\n",
	"1/2\n\n", "1\n/2", "1/2xy", "--1/2", "/2", "1/", "1é/2", "1/2é", "1/2é\n", "1\xff/2", "1/2\xff"}

// TestRewritesMatchRegexps runs the hand-written matchers and their regexps
// on the seeds and on every distinct dataset label, raw and through Normalize.
func TestRewritesMatchRegexps(t *testing.T) {
	for _, s := range rewriteSeeds {
		checkRewrites(t, s)
	}
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
	err = jsonl.Read(gz, path, func(_ int, raw []byte) error {
		var l slimeLabel
		if err := json.Unmarshal(raw, &l); err != nil {
			return err
		}
		checkRewrites(t, l.Label)
		checkRewrites(t, l.Normalize)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func FuzzRewritesMatchRegexps(f *testing.F) {
	for _, s := range rewriteSeeds {
		f.Add(s)
	}
	f.Fuzz(checkRewrites)
}
