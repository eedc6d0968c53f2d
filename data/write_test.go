package data

import (
	"bytes"
	"os"
	"testing"

	"github.com/mathrl/mathrl/internal/testenv"
)

func TestAppendJSON(t *testing.T) {
	// The wanted lines are what Python 3.11 prints for
	// json.dumps({"id": ..., ...}, ensure_ascii=False) of the same values.
	for _, tc := range []struct {
		name string
		row  Row
		want string
	}{
		{"nulls", Row{ID: "a", Problem: "p"},
			`{"id": "a", "problem": "p", "answer": null, "solution": null, "level": null, "subject": null, "source": ""}`},
		{"escapes", Row{ID: `x/"1"`, Problem: "a<b & c>d\\frac\n\t\f\b\r\x01\x7f é ∑ 😀 \u2028", Answer: ptr("025"),
			Solution: ptr(`\boxed{025}`), Level: ptr(-3), Subject: ptr("Counting & Probability"), Source: "s"},
			`{"id": "x/\"1\"", "problem": "a<b & c>d\\frac\n\t\f\b\r\u0001` + "\x7f é ∑ 😀 \u2028" +
				`", "answer": "025", "solution": "\\boxed{025}", "level": -3, "subject": "Counting & Probability", "source": "s"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := string(tc.row.AppendJSON(nil)); got != tc.want {
				t.Errorf("AppendJSON:\n got %s\nwant %s", got, tc.want)
			}
		})
	}
}

// TestEncodeRealSets reads every published file of the default sets and
// writes it back: the bytes must be the file's.
func TestEncodeRealSets(t *testing.T) {
	dir := testenv.DataDir(t, "math_train.jsonl")
	for _, s := range DefaultSets() {
		raw, err := os.ReadFile(s.Path(dir))
		if err != nil {
			t.Fatal(err)
		}
		rows, err := Read(bytes.NewReader(raw), s.File)
		if err != nil {
			t.Fatal(err)
		}
		if got := EncodeRows(rows); !bytes.Equal(got, raw) {
			i := firstDiff(got, raw)
			t.Errorf("%s: written back differs at byte %d: %q, want %q", s.File, i, clip(got, i), clip(raw, i))
		}
	}
}

// firstDiff returns the index of the first byte where a and b differ.
func firstDiff(a, b []byte) int {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	return i
}

// clip returns up to 60 bytes of b from i.
func clip(b []byte, i int) []byte { return b[i:min(len(b), i+60)] }
