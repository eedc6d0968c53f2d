package data

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/mathrl/mathrl/internal/pyjson"
	"github.com/mathrl/mathrl/internal/testenv"
)

// The tests below rebuild each origin, in the format its URL serves, from the
// rows of the published files, serve it over HTTP and convert it back.

// mathTop and mathDir are the layout of a GitHub commit tarball of the MATH origin.
const mathTop = "agents-e8c4e3c2d19739d3dff59e577d1c97090cc15f59/"

// marshalNoHTML is json.Marshal with indent and without escaping <, > and &,
// as Python's json.dump(indent=4) writes the per-problem MATH files.
func marshalNoHTML(t *testing.T, v any) []byte {
	t.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "    ")
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

// mathArchive returns a commit tarball holding the MATH rows as per-problem
// files (problem, level, type, solution), in reverse order, with a pax header
// and files outside the MATH folder as GitHub's tarballs have.
func mathArchive(t *testing.T, rows []Row, extra map[string]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestSpeed)
	if err != nil {
		t.Fatal(err)
	}
	tw := tar.NewWriter(zw)
	add := func(name string, body []byte) {
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(body)), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write(body); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeXGlobalHeader, Name: "pax_global_header",
		PAXRecords: map[string]string{"comment": "e8c4e3c2d19739d3dff59e577d1c97090cc15f59"}}); err != nil {
		t.Fatal(err)
	}
	add(mathTop+"README.md", []byte("# agents\n"))
	add(mathTop+"src/agents/datasets/data/gsm8k/test/1.json", []byte("not MATH"))
	for name, body := range extra {
		add(mathTop+DefaultOrigins.MATH.Dir+name, []byte(body))
	}
	for _, r := range slices.Backward(rows) {
		level := "Level ?"
		if r.Level != nil {
			level = "Level " + strconv.Itoa(*r.Level)
		}
		add(mathTop+DefaultOrigins.MATH.Dir+r.ID, marshalNoHTML(t, struct {
			Problem  string `json:"problem"`
			Level    string `json:"level"`
			Type     string `json:"type"`
			Solution string `json:"solution"`
		}{r.Problem, level, *r.Subject, *r.Solution}))
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// prm800kFile writes MATH-500 rows as PRM800K's math_splits/test.jsonl:
// json.dumps of {problem, solution, answer, subject, level, unique_id}.
func prm800kFile(rows []Row) []byte {
	var b []byte
	for _, r := range rows {
		b = append(b, `{"problem": `+pyjson.Quote(r.Problem)+`, "solution": `+pyjson.Quote(*r.Solution)+
			`, "answer": `+pyjson.Quote(*r.Answer)+`, "subject": `+pyjson.Quote(*r.Subject)+
			`, "level": `+strconv.Itoa(*r.Level)+`, "unique_id": `+pyjson.Quote(r.ID)+"}\n"...)
	}
	return b
}

// jsonLines writes one compact JSON object per line with "/" escaped as "\/",
// as the AIME origins are written, in the order given.
func jsonLines(t *testing.T, objs []any) []byte {
	t.Helper()
	var b []byte
	for _, o := range objs {
		line, err := json.Marshal(o)
		if err != nil {
			t.Fatal(err)
		}
		b = append(b, bytes.ReplaceAll(line, []byte("/"), []byte(`\/`))...)
		b = append(b, '\n')
	}
	return b
}

// aime24File writes AIME 2024 rows as Qwen2.5-Math's test.jsonl, ordered by URL
// (Problem_1, Problem_10, ...) rather than by id.
func aime24File(t *testing.T, rows []Row) []byte {
	t.Helper()
	type src struct {
		ID       int    `json:"id"`
		Problem  string `json:"problem"`
		Solution string `json:"solution"`
		Answer   string `json:"answer"`
		URL      string `json:"url"`
	}
	var objs []src
	for i, r := range rows {
		url := strings.TrimSuffix(strings.TrimPrefix(r.Source, "aime24 ("), ")")
		objs = append(objs, src{60 + i, r.Problem, *r.Solution, *r.Answer, url})
	}
	slices.SortFunc(objs, func(a, b src) int { return strings.Compare(a.URL, b.URL) })
	var anys []any
	for _, o := range objs {
		anys = append(anys, o)
	}
	return jsonLines(t, anys)
}

// aime25File writes AIME 2025 rows as math-evaluation-harness's test.jsonl,
// {answer, problem}, with the source's defect put back in the repaired rows:
// \f and \t written unescaped, so that JSON reads a form feed and a tab.
func aime25File(t *testing.T, rows []Row) []byte {
	t.Helper()
	broken := strings.NewReplacer(`\f`, "\f", `\t`, "\t")
	var objs []any
	for _, r := range rows {
		p := r.Problem
		if r.ID == "aime2025-II-04" || r.ID == "aime2025-II-05" || r.ID == "aime2025-II-13" {
			p = broken.Replace(p)
		}
		objs = append(objs, struct {
			Answer  string `json:"answer"`
			Problem string `json:"problem"`
		}{*r.Answer, p})
	}
	return jsonLines(t, objs)
}

// originServer serves files by path and returns Origins pointing at it; the
// MATH-500 origin's first URL answers 404, so that its second one is used.
func originServer(t *testing.T, files map[string][]byte) (*httptest.Server, Origins) {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, ok := files[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Write(body)
	}))
	t.Cleanup(srv.Close)
	o := DefaultOrigins
	o.MATH.URLs = []string{srv.URL + "/math.tar.gz"}
	o.MATH500.URLs = []string{srv.URL + "/gone/test.jsonl", srv.URL + "/math500.jsonl"}
	o.AIME24.URLs = []string{srv.URL + "/aime24.jsonl"}
	o.AIME25.URLs = []string{srv.URL + "/aime25.jsonl"}
	return srv, o
}

// loadPublished reads the published rows of the named set.
func loadPublished(t *testing.T, dir, name string) []Row {
	t.Helper()
	rows, err := LoadSet(dir, name)
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

// TestPullFromOrigins rebuilds every origin from the published files, pulls
// all sets from it without a mirror, and checks every file's pinned sha256.
func TestPullFromOrigins(t *testing.T) {
	published := testenv.DataDir(t, "math_train.jsonl")
	math := append(loadPublished(t, published, "math_train"), loadPublished(t, published, "math_test")...)
	math500 := prm800kFile(loadPublished(t, published, "math500"))
	// The rebuilt PRM800K file is the real one: its sha256 is the Git LFS oid.
	if sum := sha256.Sum256(math500); hex.EncodeToString(sum[:]) != DefaultOrigins.MATH500.SHA256 {
		t.Errorf("rebuilt PRM800K test.jsonl: sha256 %x, want the LFS oid %s", sum, DefaultOrigins.MATH500.SHA256)
	}
	srv, origins := originServer(t, map[string][]byte{
		"/math.tar.gz":   mathArchive(t, math, nil),
		"/math500.jsonl": math500,
		"/aime24.jsonl":  aime24File(t, loadPublished(t, published, "aime24")),
		"/aime25.jsonl":  aime25File(t, loadPublished(t, published, "aime25")),
	})
	t.Setenv(MirrorEnv, "")
	dest := t.TempDir()
	var log bytes.Buffer
	err := Pull(context.Background(), PullOptions{Dir: dest, Client: srv.Client(), Origins: &origins, Progress: &log})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range DefaultSets() {
		if err := s.Check(dest); err != nil {
			t.Error(err)
		}
	}
	for _, want := range []string{
		"math_train_sample300.jsonl: 283441 bytes from " + srv.URL + "/math.tar.gz (converted), sha256 ok",
		"math500.jsonl: 473564 bytes from " + srv.URL + "/math500.jsonl (converted), sha256 ok",
		"aime25.jsonl: 18335 bytes from " + srv.URL + "/aime25.jsonl (converted), sha256 ok",
	} {
		if !strings.Contains(log.String(), want) {
			t.Errorf("progress lacks %q:\n%s", want, log.String())
		}
	}
}

// fixtureRows are MATH rows written by hand: a label with nested braces, a
// "Level ?" problem, and the two kinds of missing label.
var fixtureRows = []Row{
	{ID: "test/algebra/2.json", Problem: "p2", Solution: ptr(`so $\boxed{\frac{1}{2}}$`), Level: ptr(2), Subject: ptr("Algebra")},
	{ID: "test/algebra/10.json", Problem: "p10 é", Solution: ptr(`\boxed{1} then \boxed 9`), Level: ptr(5), Subject: ptr("Algebra")},
	{ID: "train/counting_and_probability/7.json", Problem: "p <&>", Solution: ptr(`$\boxed{}$`), Subject: ptr("Counting & Probability")},
	{ID: "test/algebra/9.json", Problem: "p9", Solution: ptr(`\boxed{3}`), Level: ptr(1), Subject: ptr("Algebra")},
}

func TestReadMATHArchive(t *testing.T) {
	got, err := readMATHArchive(bytes.NewReader(mathArchive(t, fixtureRows, map[string]string{"README.md": "x"})), "m.tar.gz", DefaultOrigins.MATH.Dir)
	if err != nil {
		t.Fatal(err)
	}
	// By hand: ordered by subject folder then number (2, 9, 10); answers from the last box.
	want := `{"id": "test/algebra/2.json", "problem": "p2", "answer": "\\frac{1}{2}", "solution": "so $\\boxed{\\frac{1}{2}}$", "level": 2, "subject": "Algebra", "source": "hendrycks_math/test"}
{"id": "test/algebra/9.json", "problem": "p9", "answer": "3", "solution": "\\boxed{3}", "level": 1, "subject": "Algebra", "source": "hendrycks_math/test"}
{"id": "test/algebra/10.json", "problem": "p10 é", "answer": null, "solution": "\\boxed{1} then \\boxed 9", "level": 5, "subject": "Algebra", "source": "hendrycks_math/test"}
`
	if s := string(EncodeRows(got["test"])); s != want {
		t.Errorf("test split:\n got %s\nwant %s", s, want)
	}
	wantTrain := `{"id": "train/counting_and_probability/7.json", "problem": "p <&>", "answer": null, "solution": "$\\boxed{}$", "level": null, "subject": "Counting & Probability", "source": "hendrycks_math/train"}
`
	if s := string(EncodeRows(got["train"])); s != wantTrain {
		t.Errorf("train split:\n got %s\nwant %s", s, wantTrain)
	}
}

func TestOriginErrors(t *testing.T) {
	good := mathArchive(t, fixtureRows[:1], nil)
	for _, tc := range []struct {
		name  string
		set   string
		files map[string][]byte
		want  []string
	}{
		{"math500 changed", "math500", map[string][]byte{"/math500.jsonl": []byte("{}\n")},
			[]string{"/gone/test.jsonl: 404 Not Found", "/math500.jsonl: 3 bytes, sha256 ", "want 446564 bytes, sha256 " + DefaultOrigins.MATH500.SHA256 + ": the published file changed"}},
		{"MATH bad level", "math_test", map[string][]byte{"/math.tar.gz": mathArchive(t, nil, map[string]string{
			"test/algebra/3.json": `{"problem": "p", "level": "Level x", "type": "Algebra", "solution": "s"}`})},
			[]string{"/math.tar.gz: " + mathTop + DefaultOrigins.MATH.Dir + `test/algebra/3.json: field "level": want "Level N" or "Level ?", got "Level x"`}},
		{"MATH not gzip", "math_train", map[string][]byte{"/math.tar.gz": []byte("<html>not found</html>")}, []string{"/math.tar.gz: gzip: invalid header"}},
		{"MATH converted differs", "math_test", map[string][]byte{"/math.tar.gz": good},
			[]string{"data: math_test.jsonl from ", "/math.tar.gz (converted): ", "bytes, want 4506889"}},
		{"aime24 bad url", "aime24", map[string][]byte{"/aime24.jsonl": []byte(`{"problem": "p", "answer": "1", "url": "https://example.com/x"}` + "\n")},
			[]string{`/aime24.jsonl:1: field "url": "https://example.com/x" is not an AoPS AIME problem URL`}},
		{"aime25 short", "aime25", map[string][]byte{"/aime25.jsonl": []byte(`{"answer":"1","problem":"p"}` + "\n")},
			[]string{"/aime25.jsonl: 1 rows, want 30"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, origins := originServer(t, tc.files)
			s, _ := SetByName(tc.set)
			dest := t.TempDir()
			err := pullSets(context.Background(), PullOptions{Client: srv.Client(), Origins: &origins}, "", dest, []Set{s})
			if err == nil {
				t.Fatal("pull succeeded")
			}
			for _, want := range tc.want {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not contain %q", err, want)
				}
			}
			assertFiles(t, dest)
		})
	}
	// A set without a known origin.
	_, sets := mirror(t)
	err := pullSets(context.Background(), PullOptions{}, "", filepath.Join(t.TempDir(), "d"), sets[:1])
	if err == nil || !strings.Contains(err.Error(), `data: one.jsonl: no public origin known for set "one"`) {
		t.Errorf("pull of a set without an origin: %v", err)
	}
}
