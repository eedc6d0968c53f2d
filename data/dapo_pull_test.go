package data

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
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
