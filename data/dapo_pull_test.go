package data

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/mathrl/mathrl/internal/pyjson"
)

// dapoOrigin writes problems and labels as the origin's JSONL does, in slime's
// layout: {"prompt": [{"role": "user", "content": ...}], "label": ...}.
func dapoOrigin(problems, labels []string) []byte {
	var b []byte
	for i, p := range problems {
		b = append(b, `{"prompt": [{"role": "user", "content": `+pyjson.Quote(p)+`}], "label": `+pyjson.Quote(labels[i])+"}\n"...)
	}
	return b
}

// TestPullDAPOFromOrigin serves a file in the layout of dapo_math_17k's origin
// over HTTP and pulls it: converted to rows, its sha256 recorded at the first
// download, and every later download and check held to that record.
func TestPullDAPOFromOrigin(t *testing.T) {
	original := dapoOrigin([]string{"What is $1+1$? é", `Find $\frac{x}{2}=3$.`}, []string{"2", "6"})
	files := map[string][]byte{"/dapo-math-17k.jsonl": original}
	srv, origins := originServer(t, files)
	origins.DAPO.URLs = []string{srv.URL + "/dapo-math-17k.jsonl"}
	s, err := SetByName(DAPOSet)
	if err != nil {
		t.Fatal(err)
	}
	dest := t.TempDir()
	t.Setenv(MirrorEnv, "")
	pull := func() (string, error) {
		var log bytes.Buffer
		err := Pull(context.Background(), PullOptions{Dir: dest, Sets: []string{DAPOSet}, Client: srv.Client(), Origins: &origins, Progress: &log})
		return log.String(), err
	}

	// First download: converted, and its sha256 recorded.
	log, err := pull()
	if err != nil {
		t.Fatalf("%v\n%s", err, log)
	}
	// By hand: ids are line numbers, the problem is the user message unchanged.
	want := `{"id": "1", "problem": "What is $1+1$? é", "answer": "2", "solution": null, "level": null, "subject": null, "source": "dapo"}
{"id": "2", "problem": "Find $\\frac{x}{2}=3$.", "answer": "6", "solution": null, "level": null, "subject": null, "source": "dapo"}
`
	got, err := os.ReadFile(s.Path(dest))
	if err != nil || string(got) != want {
		t.Fatalf("converted file (%v):\n got %s\nwant %s", err, got, want)
	}
	sum := sha256.Sum256([]byte(want))
	hexSum := hex.EncodeToString(sum[:])
	if rec, err := os.ReadFile(s.Path(dest) + ".sha256"); err != nil || string(rec) != hexSum+"  dapo_math_17k.jsonl\n" {
		t.Errorf("recorded sha256 (%v): %q, want the converted file's, %s", err, rec, hexSum)
	}
	if !strings.Contains(log, "dapo_math_17k.jsonl: "+strconv.Itoa(len(want))+" bytes from "+srv.URL+"/dapo-math-17k.jsonl (converted), sha256 "+hexSum+" recorded in ") {
		t.Errorf("progress does not say the sha256 was recorded:\n%s", log)
	}
	if err := s.Check(dest); err != nil {
		t.Errorf("Check after the first download: %v", err)
	}

	// The origin changes: a new download is refused, naming both checksums, and nothing is left behind.
	os.Remove(s.Path(dest))
	files["/dapo-math-17k.jsonl"] = dapoOrigin([]string{"What is $1+1$? é", `Find $\frac{x}{2}=3$.`}, []string{"2", "7"})
	if log, err := pull(); err == nil || !strings.Contains(err.Error(), "but "+s.Path(dest)+".sha256 recorded "+hexSum+" at the first download: the file changed") {
		t.Errorf("pull of a changed origin: %v\n%s", err, log)
	}
	assertFiles(t, dest, "dapo_math_17k.jsonl.sha256")

	// The origin as it was: accepted as recorded.
	files["/dapo-math-17k.jsonl"] = original
	if log, err := pull(); err != nil || !strings.Contains(log, "sha256 ok (as recorded at the first download)") {
		t.Errorf("pull of the recorded file: %v\n%s", err, log)
	}

	// A damaged file fails its check, against the record.
	if err := os.WriteFile(s.Path(dest), []byte("damaged\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := s.Check(dest); err == nil || !strings.Contains(err.Error(), "recorded "+hexSum+" at the first download") {
		t.Errorf("Check of a damaged file: %v", err)
	}
}

// TestMalformedRecord checks that a <file>.sha256 record that is not one
// line of a hex sha256, two spaces and the set's file name fails a pull and
// a check with one error naming the record, and that the pull leaves the
// record as it was and writes no data file; and that an upper-case record
// (sha256sum accepts one) holds the download to its sum.
func TestMalformedRecord(t *testing.T) {
	body := dapoOrigin([]string{"What is $1+1$?"}, []string{"2"})
	srv, origins := originServer(t, map[string][]byte{"/dapo.jsonl": body})
	origins.DAPO.URLs = []string{srv.URL + "/dapo.jsonl"}
	s, err := SetByName(DAPOSet)
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv(MirrorEnv, "")
	sum := strings.Repeat("ab", 32)
	for _, record := range []string{
		sum[:62] + "  " + s.File + "\n",                  // one byte short
		sum + "ab  " + s.File + "\n",                     // one byte long
		sum + sum + "  " + s.File + "\n",                 // a sha512sum line
		strings.Repeat("g", 64) + "  " + s.File + "\n",   // not hex
		sum + " " + s.File + "\n",                        // one space between them
		sum + "  other.jsonl\n",                          // another file's
		sum + "\n",                                       // no name
		sum + "  " + s.File + "\n" + sum + "  " + s.File, // two lines
		"",
	} {
		dest := t.TempDir()
		rec := s.Path(dest) + ".sha256"
		if err := os.WriteFile(rec, []byte(record), 0o644); err != nil {
			t.Fatal(err)
		}
		want := "data: " + rec + ": want one line"
		if _, err := s.Recorded(dest); err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("Recorded of %q: %v, want %q…", record, err, want)
		}
		err := Pull(context.Background(), PullOptions{Dir: dest, Sets: []string{DAPOSet}, Client: srv.Client(), Origins: &origins, Progress: io.Discard})
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Pull with the record %q: %v, want %q…", record, err, want)
		}
		if got, _ := os.ReadFile(rec); string(got) != record {
			t.Errorf("Pull rewrote the record %q into %q", record, got)
		}
		assertFiles(t, dest, s.File+".sha256")
	}

	converted, err := convertedDAPO(t, srv, origins)
	if err != nil {
		t.Fatal(err)
	}
	upper := sha256.Sum256(converted)
	dest := t.TempDir()
	if err := os.WriteFile(s.Path(dest)+".sha256", []byte(strings.ToUpper(hex.EncodeToString(upper[:]))+"  "+s.File+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Pull(context.Background(), PullOptions{Dir: dest, Sets: []string{DAPOSet}, Client: srv.Client(), Origins: &origins, Progress: io.Discard}); err != nil {
		t.Errorf("Pull held to an upper-case record of its own sum: %v", err)
	}
	if err := s.Check(dest); err != nil {
		t.Errorf("Check against an upper-case record: %v", err)
	}
}

// convertedDAPO pulls the origin of srv into a fresh folder and returns the
// converted file.
func convertedDAPO(t *testing.T, srv *httptest.Server, origins Origins) ([]byte, error) {
	dest := t.TempDir()
	if err := Pull(context.Background(), PullOptions{Dir: dest, Sets: []string{DAPOSet}, Client: srv.Client(), Origins: &origins, Progress: io.Discard}); err != nil {
		return nil, err
	}
	s, _ := SetByName(DAPOSet)
	return os.ReadFile(s.Path(dest))
}
