package jsonl

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
)

func TestReadLongLinesAndNumbers(t *testing.T) {
	long := strings.Repeat("x", 200000)
	in := `{"text":"a"}` + "\n\n" + `{"text":"` + long + `"}` + "\n" + `{"text":"c"}`
	var lines []int
	var texts []string
	err := Read(strings.NewReader(in), "in.jsonl", func(line int, raw []byte) error {
		obj, err := Object(raw)
		if err != nil {
			return err
		}
		s, err := String(obj, "text")
		if err != nil {
			return err
		}
		lines = append(lines, line)
		texts = append(texts, s)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(lines) != 3 || lines[0] != 1 || lines[1] != 3 || lines[2] != 4 {
		t.Fatalf("lines = %v, want [1 3 4]", lines)
	}
	if len(texts[1]) != len(long) {
		t.Fatalf("long line length %d, want %d", len(texts[1]), len(long))
	}
}

func TestReadErrorNamesFileLineField(t *testing.T) {
	in := `{"text":"a"}` + "\n" + `{"text":3}` + "\n"
	err := Read(strings.NewReader(in), "in.jsonl", func(line int, raw []byte) error {
		obj, err := Object(raw)
		if err != nil {
			return err
		}
		_, err = String(obj, "text")
		return err
	})
	var je *Error
	if !errors.As(err, &je) || je.Line != 2 || je.Field != "text" || je.Name != "in.jsonl" {
		t.Fatalf("err = %v, want in.jsonl line 2 field text", err)
	}
	if want := `in.jsonl:2: field "text": want a string, got a number`; err.Error() != want {
		t.Fatalf("err = %q, want %q", err.Error(), want)
	}
	_, err = String(map[string]json.RawMessage{"text": json.RawMessage("null")}, "text")
	if err == nil || err.Error() != `field "text": want a string, got null` {
		t.Fatalf("String(null) err = %v, want a type error", err)
	}
	err = Read(strings.NewReader("[1]\n"), "x", func(line int, raw []byte) error { _, err := Object(raw); return err })
	if err == nil || !strings.HasPrefix(err.Error(), "x:1: not a JSON object") {
		t.Fatalf("err = %v", err)
	}
}

func TestCheckError(t *testing.T) {
	const text = "{}\n{}\n"
	good := &Error{Name: "f", Line: 2, Err: errors.New("bad")}
	for _, tc := range []struct {
		name string
		err  error
		ok   bool
	}{
		{"right", fmt.Errorf("pkg: %w", good), true},
		{"not an *Error", errors.New("pkg: f:2: bad"), false},
		{"other name", fmt.Errorf("pkg: %w", &Error{Name: "g", Line: 2, Err: good.Err}), false},
		{"line past the end", fmt.Errorf("pkg: %w", &Error{Name: "f", Line: 4, Err: good.Err}), false},
		{"line 0", fmt.Errorf("pkg: %w", &Error{Name: "f", Line: 0, Err: good.Err}), false},
		{"other prefix", fmt.Errorf("other: %w", good), false},
	} {
		if got := CheckError(tc.err, "pkg: ", "f", text); (got == nil) != tc.ok {
			t.Errorf("%s: CheckError(%v) = %v, want ok %v", tc.name, tc.err, got, tc.ok)
		}
	}
}
