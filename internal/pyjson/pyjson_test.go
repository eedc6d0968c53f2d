package pyjson

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/mathrl/mathrl/internal/testenv"
)

// pythonDumps runs json.dumps(json.loads(doc), ensure_ascii=False) in Debian's
// Python for each document.
func pythonDumps(t *testing.T, docs []string) []string {
	t.Helper()
	py := testenv.DebianPython(t)
	const script = `import json, sys
docs = json.load(sys.stdin)
json.dump([json.dumps(json.loads(d), ensure_ascii=False) for d in docs], sys.stdout, ensure_ascii=False)`
	in, _ := json.Marshal(docs)
	cmd := exec.Command(py, "-c", script)
	cmd.Stdin = bytes.NewReader(in)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("python: %v\n%s", err, stderr.String())
	}
	var res []string
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatal(err)
	}
	return res
}

func TestDumpsMatchesPython(t *testing.T) {
	docs := []string{
		`{"b": 1, "a": [1.0, 2.5, -0.0, 0.0, 1e-7, 1E+16, 1e16, 1e15, 123456789012345678901234567890, -0, 1e400, -1e400]}`,
		`{"html": "<script>&amp;</script>", "uni": "é中文😀", "ctl": "\u0000\u0001\u001f\u007f\u2028\u2029", "esc": "\"\\\/\b\f\n\r\t"}`,
		`{"dup": 1, "x": 2, "dup": 3}`, `[]`, `{}`, `[[], {}, [{}]]`, `null`, `true`, `"s"`, `0.1`, `100.0`, `1.5e-5`, `0.0001`,
		`{"type": "function", "function": {"name": "code_interpreter", "parameters": {"type": "object", "properties": {"code": {"type": "string"}}, "required": ["code"]}}}`,
		`  {"spaces"  :  [ 1 , 2 ]  }  `, `{"nested": {"deep": {"deeper": [1, {"k": null}]}}}`, `5e-324`, `1.7976931348623157e308`, `2.2250738585072014e-308`,
	}
	rng := rand.New(rand.NewPCG(9, 9))
	for range 2000 {
		var f float64
		switch rng.IntN(4) {
		case 0:
			f = rng.NormFloat64()
		case 1:
			f = math.Float64frombits(rng.Uint64())
		case 2:
			f = float64(rng.IntN(1<<20)) / float64(int(1)<<rng.IntN(30))
		default:
			f = math.Pow(10, float64(rng.IntN(50)-25)) * float64(rng.IntN(1000))
		}
		if math.IsNaN(f) || math.IsInf(f, 0) {
			continue
		}
		fixed := strconv.FormatFloat(f, 'f', -1, 64)
		if !strings.Contains(fixed, ".") {
			fixed += ".0"
		}
		docs = append(docs, strconv.FormatFloat(f, 'e', -1, 64), fixed)
	}
	want := pythonDumps(t, docs)
	bad := 0
	for i, d := range docs {
		got, err := Dumps([]byte(d))
		if err != nil || got != want[i] {
			if bad++; bad <= 10 {
				t.Errorf("Dumps(%s) = %q, %v; want %q", d, got, err, want[i])
			}
		}
	}
	t.Logf("%d of %d documents match Python", len(docs)-bad, len(docs))
}

func TestDumpsErrors(t *testing.T) {
	for _, d := range []string{``, `{`, `{"a": }`, `[1, 2`, `{"a": 1} {"b": 2}`, `nul`} {
		if got, err := Dumps([]byte(d)); err == nil {
			t.Errorf("Dumps(%q) = %q, want an error", d, got)
		}
	}
}

func ExampleDumps() {
	s, _ := Dumps([]byte(`{"name":"f","args":{"x":1.0,"y":1e-7,"s":"é<&>"}}`))
	fmt.Println(s)
	fmt.Println(strings.Contains(Quote("a\nb"), `\n`))
	// Output:
	// {"name": "f", "args": {"x": 1.0, "y": 1e-07, "s": "é<&>"}}
	// true
}
