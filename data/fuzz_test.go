package data

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mathrl/mathrl/internal/jsonl"
)

// FuzzRead runs both dataset readers on arbitrary files: no panic; an error
// is one *jsonl.Error naming the file and one of its lines, its message
// starting "data: NAME:LINE:"; and every row accepted has the required id and
// problem, with no id twice.
func FuzzRead(f *testing.F) {
	for _, name := range []string{"rows.jsonl", "dapo_slime.jsonl", "dapo_verl.jsonl"} {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(b))
		f.Add(string(b[:len(b)/2])) // cut in the middle of a line
	}
	for _, s := range []string{`{"id":"a","problem":"p","answer":NaN}`, `{"id":"a","problem":"p","level":1e400}`,
		"{\"id\":\"\xff\",\"problem\":\"\xfe\"}", `{"id":"a","problem":"p"}` + "\n" + `{"id":"a","problem":"q"}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, file string) {
		for _, read := range []func(r *strings.Reader, name string) ([]Row, error){
			func(r *strings.Reader, name string) ([]Row, error) { return Read(r, name) },
			func(r *strings.Reader, name string) ([]Row, error) { return ReadDAPO(r, name) },
		} {
			rows, err := read(strings.NewReader(file), "f.jsonl")
			if err != nil {
				if e := jsonl.CheckError(err, "data: ", "f.jsonl", file); e != nil {
					t.Fatal(e)
				}
				continue
			}
			seen := map[string]bool{}
			for _, r := range rows {
				if r.ID == "" || r.Problem == "" || seen[r.ID] {
					t.Fatalf("accepted row %+v: empty id or problem, or an id seen before", r)
				}
				seen[r.ID] = true
			}
		}
	})
}
