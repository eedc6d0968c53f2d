package scorer

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mathrl/mathrl/internal/jsonl"
)

func TestScoreStream(t *testing.T) {
	in := strings.Join([]string{
		`{"id":"a","response":"<think>x</think>\\boxed{42}","label":"42","extra":[1,{"k":2}]}`,
		``,
		`{"label":"\\frac12","response":"Answer: 1/2","score":7}`,
		`{"response":"\\boxed{0}","label":0,"error":"old"}`,
		`{"response":"Answer: 42","label":42.0,"z":null}`,
	}, "\n")
	for _, tc := range []struct {
		scorer string
		want   []string
	}{
		{Math, []string{
			`{"id":"a","response":"<think>x</think>\\boxed{42}","label":"42","extra":[1,{"k":2}],"score":1}`,
			`{"label":"\\frac12","response":"Answer: 1/2","score":0}`,
			`{"response":"\\boxed{0}","label":0,"score":0}`,
			`{"response":"Answer: 42","label":42.0,"z":null,"score":0}`,
		}},
		{DeepScaler, []string{
			`{"id":"a","response":"<think>x</think>\\boxed{42}","label":"42","extra":[1,{"k":2}],"score":1}`,
			`{"label":"\\frac12","response":"Answer: 1/2","score":0}`,
			`{"response":"\\boxed{0}","label":0,"score":0}`,
			`{"response":"Answer: 42","label":42.0,"z":null,"score":0}`,
		}},
		{Dapo, []string{
			`{"id":"a","response":"<think>x</think>\\boxed{42}","label":"42","extra":[1,{"k":2}],"score":-1}`,
			`{"label":"\\frac12","response":"Answer: 1/2","error":"scorer: dapo: label \"\\\\frac12\" normalises to \"\\\\frac{1}{2}\", which float() rejects: non-numeric label"}`,
			`{"response":"\\boxed{0}","label":0,"score":-1}`,
			`{"response":"Answer: 42","label":42.0,"z":null,"score":1}`,
		}},
	} {
		for _, workers := range []int{1, 3} {
			var out bytes.Buffer
			stats, err := ScoreStream(context.Background(), strings.NewReader(in), &out, StreamOptions{Scorer: tc.scorer, Workers: workers})
			if err != nil {
				t.Fatalf("%s: %v", tc.scorer, err)
			}
			if got, want := out.String(), strings.Join(tc.want, "\n")+"\n"; got != want {
				t.Errorf("%s, %d workers:\ngot\n%s\nwant\n%s", tc.scorer, workers, got, want)
			}
			if stats.Lines != 4 {
				t.Errorf("%s: stats %+v", tc.scorer, stats)
			}
		}
	}
}

// TestScoreStreamParsing covers the lines that jsonl's fast path reads (and
// the one with a non-ASCII name that it leaves to encoding/json): escapes and
// unicode are decoded for scoring but written back as they were read, white
// space between tokens goes, numbers stay labels, a null response reads as "".
// The wanted lines are what the encoding/json reader gave before the fast
// path.
func TestScoreStreamParsing(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"number label, <|im_end|> kept", `{"response":"\\boxed{42} <|im_end|>","label":42}`,
			`{"response":"\\boxed{42} <|im_end|>","label":42,"score":1}`},
		{"escaped backslash, spaces, nested value", `{ "response" : "\u005cboxed{7}" , "label" : "7" , "x" : [ 1 , { "a" : null } ] }`,
			`{"response":"\u005cboxed{7}","label":"7","x":[ 1 , { "a" : null } ],"score":1}`},
		{"unicode as it is", `{"response":"héllo 😀 \\boxed{x}","label":"x","note":"\ud83d\ude00"}`,
			`{"response":"héllo 😀 \\boxed{x}","label":"x","note":"\ud83d\ude00","score":1}`},
		{"surrogate pair and escaped label", `{"response":"\ud83d\ude00 \\boxed{3}\n","label":"\u0033"}`,
			`{"response":"\ud83d\ude00 \\boxed{3}\n","label":"\u0033","score":1}`},
		{"null response", `{"response":null,"label":"1"}`, `{"response":null,"label":"1","score":0}`},
		{"exponent label", `{"response":"\\boxed{100}","label":1e2}`, `{"response":"\\boxed{100}","label":1e2,"score":1}`},
		{"falsy number label", `{"response":"\\boxed{0}","label":0}`, `{"response":"\\boxed{0}","label":0,"score":0}`},
		{"score and error replaced", `{"score":0,"response":"\\boxed{1}","error":"old","label":"1","z":true}`,
			`{"response":"\\boxed{1}","label":"1","z":true,"score":1}`},
		{"non-ASCII name", `{"réponse":1,"response":"\\boxed{1}","label":"1"}`,
			`{"réponse":1,"response":"\\boxed{1}","label":"1","score":1}`},
		{"invalid UTF-8 kept", "{\"response\":\"\xff \\\\boxed{1}\",\"label\":\"1\"}",
			"{\"response\":\"\xff \\\\boxed{1}\",\"label\":\"1\",\"score\":1}"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			if _, err := ScoreStream(context.Background(), strings.NewReader(tc.in+"\n"), &out, StreamOptions{Scorer: Math}); err != nil {
				t.Fatal(err)
			}
			if got := out.String(); got != tc.want+"\n" {
				t.Errorf("%s:\ngot  %s\nwant %s", tc.in, got, tc.want)
			}
		})
	}
}

// TestScoreStreamRetoolToolCalls scores with retool: a line's "tool_calls"
// field gives the bonus (-1 + (6-2)/2*0.1 = -0.8); without it the response's
// <tool_call> blocks are counted (none: -1 + (0-2)/2*0.1 = -1.1).
func TestScoreStreamRetoolToolCalls(t *testing.T) {
	in := `{"response":"\\boxed{41}","label":"42","tool_calls":6}` + "\n" + `{"response":"\\boxed{41}","label":"42"}` + "\n" +
		`{"response":"so \\boxed{42}","label":"42","tool_calls":0}` + "\n"
	var out bytes.Buffer
	if _, err := ScoreStream(context.Background(), strings.NewReader(in), &out, StreamOptions{Scorer: Retool}); err != nil {
		t.Fatal(err)
	}
	want := `{"response":"\\boxed{41}","label":"42","tool_calls":6,"score":-0.8}` + "\n" +
		`{"response":"\\boxed{41}","label":"42","score":-1.1}` + "\n" +
		`{"response":"so \\boxed{42}","label":"42","tool_calls":0,"score":1}` + "\n"
	if out.String() != want {
		t.Errorf("got\n%s\nwant\n%s", out.String(), want)
	}
}

// Output order is input order whatever the number of workers.
func TestScoreStreamOrder(t *testing.T) {
	var in strings.Builder
	for i := range 3000 {
		fmt.Fprintf(&in, "{\"i\":%d,\"response\":\"Answer: %d\",\"label\":\"%d\"}\n", i, i%7, i%5)
	}
	var out bytes.Buffer
	stats, err := ScoreStream(context.Background(), strings.NewReader(in.String()), &out, StreamOptions{Scorer: Dapo, Workers: 8})
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) != 3000 || stats.Lines != 3000 {
		t.Fatalf("%d lines, stats %+v", len(lines), stats)
	}
	pos := 0
	for i, l := range lines {
		score := "-1"
		if i%7 == i%5 {
			score, pos = "1", pos+1
		}
		want := fmt.Sprintf("{\"i\":%d,\"response\":\"Answer: %d\",\"label\":\"%d\",\"score\":%s}", i, i%7, i%5, score)
		if l != want {
			t.Fatalf("line %d = %s, want %s", i+1, l, want)
		}
	}
	if stats.Positive != pos {
		t.Errorf("positive = %d, want %d", stats.Positive, pos)
	}
}

// TestScoreStreamBadInput checks that each bad record gets one error naming
// the file, the line and the field; encoding/json's own words after it are
// not checked (they change between Go releases).
func TestScoreStreamBadInput(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"{\"response\":\"x\",\"label\":\"1\"}\n{\"response\":3,\"label\":\"1\"}\n", `in.jsonl:2: field "response": want a string`},
		{"{\"response\":\"x\"}\n", `in.jsonl:1: field "label": missing`},
		{"\n\n{\"label\":\"1\"}\n", `in.jsonl:3: field "response": missing`},
		{"{\"response\":\"x\",\"label\":[1]}\n", `in.jsonl:1: field "label": want a string or a number`},
		{"{\"response\":\"x\",\"label\":null}\n", `in.jsonl:1: field "label": want a string or a number`},
		{"[1,2]\n", `in.jsonl:1: not a JSON object`},
		{"{\"response\":\"x\",\"label\":\"1\"} {}\n", `in.jsonl:1: extra data`},
		{"{\"response\":\"x\",\n", `in.jsonl:1: not a JSON object`},
		{"{\"response\":\"x\",\"label\":\"1\",\"tool_calls\":-1}\n", `in.jsonl:1: field "tool_calls": want a non-negative integer`},
		{"{\"response\":true,\"label\":\"1\"}\n", `in.jsonl:1: field "response": want a string`},
		{"{\"response\":{\"a\":\"x\"},\"label\":\"1\"}\n", `in.jsonl:1: field "response": want a string`},
		{"{\"response\":[\"x\"],\"label\":\"1\"}\n", `in.jsonl:1: field "response": want a string`},
		{"{\"response\":\"x\",\"label\":false}\n", `in.jsonl:1: field "label": want a string or a number`},
		{"{\"response\":\"a\\qb\",\"label\":\"1\"}\n", `in.jsonl:1: field "response": bad JSON value: `},
		{"{\"response\":\"a\tb\",\"label\":\"1\"}\n", `in.jsonl:1: field "response": bad JSON value: `},
		{"{\"response\":\"x\",\"label\":01}\n", `in.jsonl:1: not a JSON object: `},
		{"{\"response\":\"x\",\"label\":1.}\n", `in.jsonl:1: field "label": bad JSON value: `},
		{"{\"response\":\"x\",\"label\":\"1\",}\n", `in.jsonl:1: not a JSON object: `},
		{"{\"response\":\"x\",\"\\u0072esponse\":\"y\",\"label\":\"1\"}\n", `in.jsonl:1: field "response": repeated`},
		{"{\"réponse\":1,\"réponse\":2}\n", `in.jsonl:1: field "réponse": repeated`},
		{"{\"response\":\"x\",\"label\":\"1\"}\n{\"response\":\"x\" \"label\":\"1\"}\n", `in.jsonl:2: not a JSON object: `},
	} {
		var out bytes.Buffer
		_, err := ScoreStream(context.Background(), strings.NewReader(tc.in), &out, StreamOptions{Scorer: Math, Name: "in.jsonl"})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("input %q: err = %v, want it to contain %q", tc.in, err, tc.want)
		}
	}
	if _, err := ScoreStream(context.Background(), strings.NewReader(""), &bytes.Buffer{}, StreamOptions{Scorer: "nope"}); err == nil {
		t.Error("unknown scorer accepted")
	}
}

// A failing run leaves an existing output file untouched.
func TestScoreFilesAtomic(t *testing.T) {
	dir := t.TempDir()
	in, out := filepath.Join(dir, "in.jsonl"), filepath.Join(dir, "out.jsonl")
	os.WriteFile(out, []byte("old\n"), 0o644)
	os.WriteFile(in, []byte("{\"response\":\"\\\\boxed{1}\",\"label\":\"1\"}\n{\"response\":1}\n"), 0o644)
	if _, err := ScoreFiles(context.Background(), jsonl.Files{In: in, Out: out}, StreamOptions{Scorer: Math}); err == nil || !strings.Contains(err.Error(), in+":2") {
		t.Fatalf("err = %v, want one naming %s:2", err, in)
	}
	if b, _ := os.ReadFile(out); string(b) != "old\n" {
		t.Errorf("output changed to %q", b)
	}
	os.WriteFile(in, []byte("{\"response\":\"\\\\boxed{1}\",\"label\":\"1\"}\n"), 0o644)
	if _, err := ScoreFiles(context.Background(), jsonl.Files{In: in, Out: out}, StreamOptions{Scorer: Math}); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(out); string(b) != "{\"response\":\"\\\\boxed{1}\",\"label\":\"1\",\"score\":1}\n" {
		t.Errorf("output %q", b)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 2 {
		t.Errorf("leftover files: %v", entries)
	}
}

// A cancelled context stops the stream with the context's error.
func TestScoreStreamCancel(t *testing.T) {
	var in strings.Builder
	for range 20000 {
		in.WriteString("{\"response\":\"\\\\boxed{1}\",\"label\":\"1\"}\n")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := ScoreStream(ctx, strings.NewReader(in.String()), &bytes.Buffer{}, StreamOptions{Scorer: Math, Workers: 2})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
}
