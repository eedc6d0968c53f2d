package data

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// fakeSet writes content as name into dir and returns the Set describing it.
func fakeSet(t *testing.T, dir, name, content string) Set {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name+".jsonl"), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte(content))
	return Set{Name: name, File: name + ".jsonl", SHA256: hex.EncodeToString(sum[:]), Bytes: int64(len(content)), Rows: strings.Count(content, "\n")}
}

// mirror makes a source folder holding two small sets.
func mirror(t *testing.T) (string, []Set) {
	src := t.TempDir()
	return src, []Set{
		fakeSet(t, src, "one", `{"id": "1", "problem": "1+1", "answer": "2"}`+"\n"),
		fakeSet(t, src, "two", `{"id": "a", "problem": "2+2", "answer": "4"}`+"\n"+`{"id": "b", "problem": "3+3", "answer": null}`+"\n"),
	}
}

// assertFiles checks that dir holds exactly the given file names (no temporary files).
func assertFiles(t *testing.T, dir string, want ...string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var got []string
	for _, e := range entries {
		got = append(got, e.Name())
	}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("folder %s holds %q, want %q", dir, got, want)
	}
}

func assertSameFile(t *testing.T, a, b string) {
	t.Helper()
	x, err := os.ReadFile(a)
	if err != nil {
		t.Fatal(err)
	}
	y, err := os.ReadFile(b)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(x, y) {
		t.Errorf("%s and %s differ", a, b)
	}
}

func TestPullFromFolder(t *testing.T) {
	src, sets := mirror(t)
	dest := filepath.Join(t.TempDir(), "nested", "data")
	var log bytes.Buffer
	if err := pullSets(context.Background(), PullOptions{Progress: &log}, src, dest, sets); err != nil {
		t.Fatal(err)
	}
	assertFiles(t, dest, "one.jsonl", "two.jsonl")
	for _, s := range sets {
		assertSameFile(t, filepath.Join(src, s.File), s.Path(dest))
		if err := s.Check(dest); err != nil {
			t.Errorf("after pull: %v", err)
		}
		if !strings.Contains(log.String(), s.File+": "+strconv.FormatInt(s.Bytes, 10)+" bytes from "+filepath.Join(src, s.File)+", sha256 ok") {
			t.Errorf("progress does not report %s:\n%s", s.File, log.String())
		}
	}
	rows, err := ReadFile(sets[1].Path(dest))
	if err != nil || len(rows) != 2 {
		t.Errorf("pulled file reads as %d rows, %v", len(rows), err)
	}

	// Second pull: nothing to do, even with the source gone.
	log.Reset()
	if err := pullSets(context.Background(), PullOptions{Progress: &log}, filepath.Join(src, "gone"), dest, sets); err != nil {
		t.Fatalf("second pull: %v", err)
	}
	if n := strings.Count(log.String(), "already present, sha256 ok"); n != 2 {
		t.Errorf("second pull: %d files skipped, want 2:\n%s", n, log.String())
	}

	// A damaged file is fetched again.
	if err := os.WriteFile(sets[0].Path(dest), []byte("damaged\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := pullSets(context.Background(), PullOptions{}, src, dest, sets); err != nil {
		t.Fatal(err)
	}
	assertSameFile(t, filepath.Join(src, sets[0].File), sets[0].Path(dest))
}

func TestPullChecksumMismatch(t *testing.T) {
	src, sets := mirror(t)
	bad := sets[0]
	good := bad.SHA256
	bad.SHA256 = strings.Repeat("0", 64) // the file on the mirror no longer matches
	dest := t.TempDir()
	err := pullSets(context.Background(), PullOptions{}, src, dest, []Set{bad, sets[1]})
	if err == nil {
		t.Fatal("pull of a file with the wrong checksum succeeded")
	}
	for _, want := range []string{"data: one.jsonl from ", "sha256 " + good + ", want " + bad.SHA256} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not contain %q", err, want)
		}
	}
	// The bad file left nothing behind; the good one was still pulled.
	assertFiles(t, dest, "two.jsonl")
}

func TestPullMissingSource(t *testing.T) {
	src, sets := mirror(t)
	if err := os.Remove(filepath.Join(src, sets[0].File)); err != nil {
		t.Fatal(err)
	}
	dest := t.TempDir()
	err := pullSets(context.Background(), PullOptions{}, src, dest, sets)
	if err == nil || !strings.Contains(err.Error(), "data: one.jsonl: open "+filepath.Join(src, "one.jsonl")) {
		t.Errorf("pull with a missing source file: error %v", err)
	}
	assertFiles(t, dest, "two.jsonl")
}

func TestPullOverHTTP(t *testing.T) {
	src, sets := mirror(t)
	srv := httptest.NewServer(http.FileServer(http.Dir(src)))
	defer srv.Close()
	for _, base := range []string{srv.URL, srv.URL + "/"} {
		dest := t.TempDir()
		var log bytes.Buffer
		opts := PullOptions{Client: srv.Client(), Progress: &log}
		if err := pullSets(context.Background(), opts, base, dest, sets); err != nil {
			t.Fatalf("pull from %s: %v", base, err)
		}
		assertFiles(t, dest, "one.jsonl", "two.jsonl")
		for _, s := range sets {
			assertSameFile(t, filepath.Join(src, s.File), s.Path(dest))
		}
		if !strings.Contains(log.String(), "from "+srv.URL+"/one.jsonl, sha256 ok") {
			t.Errorf("progress does not name the URL:\n%s", log.String())
		}
	}
}

func TestPullHTTPFailures(t *testing.T) {
	src, sets := mirror(t)
	s := sets[1]
	content, err := os.ReadFile(filepath.Join(src, s.File))
	if err != nil {
		t.Fatal(err)
	}
	wrong := bytes.ToUpper(content) // same length, other bytes
	wrongSum := sha256.Sum256(wrong)
	half := content[:len(content)/2]
	halfSum := sha256.Sum256(half)
	for _, tc := range []struct {
		name    string
		handler http.HandlerFunc
		want    []string
	}{
		{"not found", http.NotFound, []string{"data: two.jsonl: GET ", "/two.jsonl: 404 Not Found"}},
		{"server error", func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, "boom", http.StatusInternalServerError)
		}, []string{"500 Internal Server Error"}},
		{"truncated", func(w http.ResponseWriter, r *http.Request) {
			w.Write(half)
		}, []string{"data: two.jsonl from ", strconv.Itoa(len(half)) + " bytes, want " + strconv.Itoa(len(content)),
			"sha256 " + hex.EncodeToString(halfSum[:]) + ", want " + s.SHA256}},
		{"cut connection", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Length", strconv.Itoa(len(content)))
			w.Write(half)
		}, []string{"data: two.jsonl: reading ", "unexpected EOF"}},
		{"wrong bytes", func(w http.ResponseWriter, r *http.Request) {
			w.Write(wrong)
		}, []string{"sha256 " + hex.EncodeToString(wrongSum[:]) + ", want " + s.SHA256}},
		{"longer", func(w http.ResponseWriter, r *http.Request) {
			w.Write(content)
			w.Write([]byte("more\n"))
		}, []string{"longer than " + strconv.Itoa(len(content)) + " bytes", "want " + s.SHA256}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(tc.handler)
			defer srv.Close()
			dest := t.TempDir()
			err := pullSets(context.Background(), PullOptions{Client: srv.Client()}, srv.URL, dest, []Set{s})
			if err == nil {
				t.Fatal("pull succeeded")
			}
			for _, want := range tc.want {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not contain %q", err, want)
				}
			}
			assertFiles(t, dest) // nothing left behind
		})
	}
}

func TestPullCancelled(t *testing.T) {
	src, sets := mirror(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	dest := t.TempDir()
	if err := pullSets(ctx, PullOptions{}, src, dest, sets); err == nil || !strings.Contains(err.Error(), "context canceled") {
		t.Errorf("pull with a cancelled context: error %v", err)
	}
	assertFiles(t, dest)
}

func TestPullOptionsDefaults(t *testing.T) {
	src := t.TempDir()
	t.Setenv(MirrorEnv, src)
	t.Setenv(DataDirEnv, filepath.Join(t.TempDir(), "cache"))
	// The mirror folder is empty: the error must name it, proving it was the source used.
	err := Pull(context.Background(), PullOptions{Sets: []string{"aime25"}})
	if err == nil || !strings.Contains(err.Error(), filepath.Join(src, "aime25.jsonl")) {
		t.Errorf("Pull with $%s set: error %v, want one naming the mirror", MirrorEnv, err)
	}
	if err := Pull(context.Background(), PullOptions{Sets: []string{"aime26"}}); err == nil ||
		!strings.Contains(err.Error(), `data: unknown set "aime26" (known: sample300, math_train, math_test, math500, aime24, aime25, dapo_math_17k)`) {
		t.Errorf("Pull of an unknown set: error %v", err)
	}
}

func TestDefaultDir(t *testing.T) {
	t.Setenv(DataDirEnv, "/some/where")
	if got := DefaultDir(); got != "/some/where" {
		t.Errorf("DefaultDir() with $%s set = %q", DataDirEnv, got)
	}
	t.Setenv(DataDirEnv, "")
	cache, err := os.UserCacheDir()
	if err != nil {
		t.Skip("no user cache folder here:", err)
	}
	if got, want := DefaultDir(), filepath.Join(cache, "mathrl", "data"); got != want {
		t.Errorf("DefaultDir() = %q, want %q", got, want)
	}
}

func TestCheckAndList(t *testing.T) {
	dir := t.TempDir()
	var out bytes.Buffer
	if err := List(&out, dir); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(out.String(), "missing"); n != len(Sets) {
		t.Errorf("List on an empty folder: %d sets missing, want %d:\n%s", n, len(Sets), out.String())
	}
	if err := os.WriteFile(filepath.Join(dir, "aime25.jsonl"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	s, _ := SetByName("aime25")
	err := s.Check(dir)
	if err == nil || !strings.Contains(err.Error(), "1 bytes, sha256 2d711642b726b04401627ca9fbac32f5c8530fb1903cc4db02258717921a4881; want 18335 bytes") {
		t.Errorf("Check of a wrong file: %v", err)
	}
	out.Reset()
	List(&out, dir)
	if !strings.Contains(out.String(), "aime25.jsonl") || !regexp.MustCompile(`(?m)^aime25 +aime25.jsonl +30 +18335 +BAD: `).MatchString(out.String()) {
		t.Errorf("List does not flag the wrong file:\n%s", out.String())
	}
}
