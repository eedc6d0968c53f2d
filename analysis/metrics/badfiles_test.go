package metrics

import (
	"bytes"
	"fmt"
	"io"
	"reflect"
	"strings"
	"testing"

	"github.com/mathrl/mathrl/internal/jsonl"
)

// badLines are malformed second lines for every reader of this package:
// truncated, of the wrong type, out of range, invalid UTF-8, huge.
var badLines = []string{
	`{"version":1,"problem_id":"p","sample_ind`, // a file cut in the middle of a line
	`[1,2]`, `null`, `"line"`, `{}`, `{"step":1} {"step":2}`, `{"step":1}x`,
	`{"score":NaN}`, `{"score":Infinity}`, `{"score":1e400}`, `{"step":1e400}`, `{"step":-1}`, `{"step":1.5}`,
	`{"response":"` + "\xff\xfe" + `"}`, "{\"\xff\":1}",
	`{"response":"` + strings.Repeat("x", 1<<20) + `"`, // a 1 MiB line, cut before its end
}

// TestReadersRefuseBadLines checks each reader on each bad line after a good
// first one: one error naming the file and line 2, and no panic.
func TestReadersRefuseBadLines(t *testing.T) {
	var first bytes.Buffer
	if err := WriteSamples(&first, goodSample()); err != nil {
		t.Fatal(err)
	}
	if err := WriteStepMetrics(&first, goodStep(1)); err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(first.String(), "\n")
	for _, r := range readers {
		good := map[string]string{"samples": lines[0], "steps": lines[1], "evals": `{"step":1,"k":4}` + "\n"}[r.name]
		for i, bad := range badLines {
			t.Run(fmt.Sprintf("%s/%d", r.name, i), func(t *testing.T) {
				file := good + bad + "\n"
				err := r.read(file)
				if err == nil {
					t.Fatalf("no error for line %.80q", bad)
				}
				if e := jsonl.CheckError(err, "metrics: ", "f.jsonl", file); e != nil {
					t.Fatal(e)
				}
				if !strings.HasPrefix(err.Error(), "metrics: f.jsonl:2: ") {
					t.Errorf("error %.200q, want one for line 2", err)
				}
			})
		}
	}
}

// readers reads a file with each reader of this package, and checks that
// what it accepts writes back and reads again as the same values.
var readers = []struct {
	name string
	read func(file string) error
}{
	{"samples", func(file string) error {
		return roundTrip(file, ReadSamples, func(w *bytes.Buffer, s []Sample) error { return WriteSamples(w, s...) })
	}},
	{"steps", func(file string) error {
		return roundTrip(file, ReadStepMetrics, func(w *bytes.Buffer, s []StepMetrics) error { return WriteStepMetrics(w, s...) })
	}},
	{"evals", func(file string) error {
		return roundTrip(file, ReadEvalPoints, func(w *bytes.Buffer, s []EvalPoint) error {
			for _, p := range s {
				if err := jsonl.WriteLine(w, p); err != nil {
					return err
				}
			}
			return nil
		})
	}},
}

// roundTrip reads file, and when it is accepted, writes it, reads it again,
// and panics if the two reads differ (a reader that accepts what its writer
// cannot reproduce).
func roundTrip[T any](file string, read func(r io.Reader, name string) ([]T, error), write func(*bytes.Buffer, []T) error) error {
	got, err := read(strings.NewReader(file), "f.jsonl")
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	if err := write(&buf, got); err != nil {
		panic(fmt.Sprintf("read %d values that do not write back: %v", len(got), err))
	}
	again, err := read(&buf, "again.jsonl")
	if err != nil || !reflect.DeepEqual(got, again) {
		panic(fmt.Sprintf("values change on a round trip: %v\n%+v\n%+v", err, got, again))
	}
	return nil
}

// FuzzReaders runs every reader of this package on arbitrary files: no
// panic, errors name the file and a line, and what is accepted round-trips.
func FuzzReaders(f *testing.F) {
	var good bytes.Buffer
	WriteSamples(&good, goodSample())
	WriteStepMetrics(&good, goodStep(1), goodStep(2))
	good.WriteString(`{"step":3,"rollout":1,"k":4,"avg_at_k":0.5,"pass_at_k":0.75}` + "\n")
	for _, line := range strings.SplitAfter(good.String(), "\n") {
		f.Add(line)
		f.Add(line + line)
	}
	for _, bad := range badLines[:len(badLines)-1] {
		f.Add(bad)
	}
	f.Fuzz(func(t *testing.T, file string) {
		for _, r := range readers {
			if err := r.read(file); err != nil {
				if e := jsonl.CheckError(err, "metrics: ", "f.jsonl", file); e != nil {
					t.Fatal(e)
				}
			}
		}
	})
}
