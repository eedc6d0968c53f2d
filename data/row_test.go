package data

import (
	"errors"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/mathrl/mathrl/internal/jsonl"
)

func ptr[T any](v T) *T { return &v }

func TestReadFile(t *testing.T) {
	path := filepath.Join("testdata", "rows.jsonl")
	rows, err := ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want := []Row{
		{ID: "test/algebra/1.json", Problem: `How many vertical asymptotes does $y=\frac{2}{x^2+x-6}$ have?`,
			Answer: ptr("2"), Solution: ptr(`It has $\boxed{2}$.`), Level: ptr(3), Subject: ptr("Algebra"), Source: "hendrycks_math/test"},
		{ID: "train/algebra/24014.json", Problem: "Solve $x+1=3$.", Answer: nil, Solution: ptr(`So $\boxed 2$.`),
			Level: nil, Subject: ptr("Algebra"), Source: "hendrycks_math/train"},
		{ID: "aime2025-I-01", Problem: "Find the sum of all integer bases $b>9$ for which $17_b$ is a divisor of $97_b.$", Answer: ptr("70")},
	}
	if !reflect.DeepEqual(rows, want) {
		t.Errorf("ReadFile(%s):\n got %+v\nwant %+v", path, rows, want)
	}
}

func TestReadBadRows(t *testing.T) {
	good := `{"id": "a", "problem": "p", "answer": "1"}` + "\n"
	for _, tc := range []struct {
		name, line, want string
	}{
		{"not json", `{"id": "b",`, `f.jsonl:2: not a JSON object`},
		{"array line", `[1, 2]`, `f.jsonl:2: not a JSON object`},
		{"null line", `null`, `f.jsonl:2: not a JSON object: null`},
		{"missing id", `{"problem": "p", "answer": "1"}`, `f.jsonl:2: field "id": missing`},
		{"numeric id", `{"id": 7, "problem": "p", "answer": "1"}`, `f.jsonl:2: field "id": want a string, got a number`},
		{"empty id", `{"id": "", "problem": "p", "answer": "1"}`, `f.jsonl:2: field "id": empty`},
		{"duplicate id", `{"id": "a", "problem": "p", "answer": "1"}`, `f.jsonl:2: field "id": "a" already used on line 1`},
		{"missing problem", `{"id": "b", "answer": "1"}`, `f.jsonl:2: field "problem": missing`},
		{"null problem", `{"id": "b", "problem": null}`, `f.jsonl:2: field "problem": want a string, got null`},
		{"numeric answer", `{"id": "b", "problem": "p", "answer": 12}`, `f.jsonl:2: field "answer": want a string or null, got 12`},
		{"list answer", `{"id": "b", "problem": "p", "answer": ["1"]}`, `f.jsonl:2: field "answer": want a string or null, got ["1"]`},
		{"string level", `{"id": "b", "problem": "p", "answer": "1", "level": "Level 3"}`, `f.jsonl:2: field "level": want an integer or null, got "Level 3"`},
		{"quoted number level", `{"id": "b", "problem": "p", "answer": "1", "level": "3"}`, `f.jsonl:2: field "level": want an integer or null, got "3"`},
		{"fractional level", `{"id": "b", "problem": "p", "answer": "1", "level": 2.5}`, `f.jsonl:2: field "level": want an integer or null, got 2.5`},
		{"object subject", `{"id": "b", "problem": "p", "answer": "1", "subject": {}}`, `f.jsonl:2: field "subject": want a string or null, got {}`},
		{"numeric solution", `{"id": "b", "problem": "p", "solution": 1}`, `f.jsonl:2: field "solution": want a string or null, got 1`},
		{"null source", `{"id": "b", "problem": "p", "source": null}`, `f.jsonl:2: field "source": want a string, got null`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rows, err := Read(strings.NewReader(good+tc.line+"\n"), "f.jsonl")
			if err == nil {
				t.Fatalf("Read(%q) = %d rows, no error; want %q", tc.line, len(rows), tc.want)
			}
			if rows != nil {
				t.Errorf("Read(%q) returned rows with an error", tc.line)
			}
			if got := err.Error(); got != "data: "+tc.want && !strings.HasPrefix(got, "data: "+tc.want) {
				t.Errorf("Read(%q) error\n got %q\nwant %q", tc.line, got, "data: "+tc.want)
			}
			var je *jsonl.Error
			if !errors.As(err, &je) || je.Line != 2 || je.Name != "f.jsonl" {
				t.Errorf("Read(%q) error %v is not a *jsonl.Error for f.jsonl line 2", tc.line, err)
			}
		})
	}
}

func TestReadLongLine(t *testing.T) {
	// A row longer than bufio.Scanner's 64 KiB default must still be read.
	problem := strings.Repeat("x", 200_000)
	rows, err := Read(strings.NewReader(`{"id": "long", "problem": "`+problem+`", "answer": "1"}`), "long.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1 || rows[0].Problem != problem {
		t.Errorf("long row not read back intact")
	}
}
