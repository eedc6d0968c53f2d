package jsonl

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
)

// Error reports a bad line: the file (or stream) name, the 1-based line and, when
// known, the field that was wrong.
type Error struct {
	Name  string // file name, or "-" for standard input
	Line  int
	Field string // empty when the line as a whole is bad
	Err   error
}

// Error formats the error as "NAME:LINE: field \"F\": why", or "NAME:LINE: why"
// when no field is known.
func (e *Error) Error() string {
	if e.Field != "" {
		return fmt.Sprintf("%s:%d: field %q: %v", e.Name, e.Line, e.Field, e.Err)
	}
	return fmt.Sprintf("%s:%d: %v", e.Name, e.Line, e.Err)
}

// Unwrap returns the underlying error.
func (e *Error) Unwrap() error { return e.Err }

// FieldError is returned by a Read callback to say which field of the line was
// wrong; Read turns it into an *Error carrying the name and line.
type FieldError struct {
	Field string
	Err   error
}

// Error formats the error as "field \"F\": why".
func (e *FieldError) Error() string { return fmt.Sprintf("field %q: %v", e.Field, e.Err) }

// Unwrap returns the underlying error.
func (e *FieldError) Unwrap() error { return e.Err }

// Read calls fn for each non-blank line of r with its 1-based number and raw
// bytes (valid JSON is not checked here; decode in fn). Any error from fn is
// wrapped as an *Error naming name and the line.
func Read(r io.Reader, name string, fn func(line int, raw []byte) error) error {
	br := bufio.NewReaderSize(r, 1<<16)
	for n := 1; ; n++ {
		raw, err := br.ReadBytes('\n')
		if len(raw) > 0 {
			if trimmed := bytes.TrimSpace(raw); len(trimmed) > 0 {
				if ferr := fn(n, trimmed); ferr != nil {
					var fe *FieldError
					if errors.As(ferr, &fe) {
						return &Error{Name: name, Line: n, Field: fe.Field, Err: fe.Err}
					}
					var je *Error
					if errors.As(ferr, &je) {
						return ferr
					}
					return &Error{Name: name, Line: n, Err: ferr}
				}
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return &Error{Name: name, Line: n, Err: err}
		}
	}
}

// Object decodes one line into a map that keeps every field as raw JSON, so a
// command can add fields and write the line back without losing any.
func Object(raw []byte) (map[string]json.RawMessage, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("not a JSON object: %w", err)
	}
	if m == nil {
		return nil, errors.New("not a JSON object: null")
	}
	return m, nil
}

// String returns obj[field] as a string; a missing field or another JSON type is a *FieldError.
func String(obj map[string]json.RawMessage, field string) (string, error) {
	raw, ok := obj[field]
	if !ok {
		return "", &FieldError{Field: field, Err: errors.New("missing")}
	}
	var s string
	if t := bytes.TrimSpace(raw); len(t) == 0 || t[0] != '"' || json.Unmarshal(t, &s) != nil {
		return "", &FieldError{Field: field, Err: fmt.Errorf("want a string, got %s", kind(raw))}
	}
	return s, nil
}

func kind(raw json.RawMessage) string {
	switch t := bytes.TrimSpace(raw); {
	case len(t) == 0:
		return "nothing"
	case t[0] == '"':
		return "a string"
	case t[0] == '{':
		return "an object"
	case t[0] == '[':
		return "an array"
	case bytes.Equal(t, []byte("null")):
		return "null"
	case bytes.Equal(t, []byte("true")), bytes.Equal(t, []byte("false")):
		return "a boolean"
	default:
		return "a number"
	}
}

// DecodeStrict decodes one JSON object into v, refusing unknown fields, a
// missing required field, null for a required field, and values of the wrong
// type, each as a *jsonl.FieldError.
func DecodeStrict(raw []byte, required []string, v any) error {
	obj, err := Object(raw)
	if err != nil {
		return err
	}
	for _, f := range required {
		val, ok := obj[f]
		if !ok {
			return &FieldError{Field: f, Err: errors.New("missing")}
		}
		if bytes.Equal(bytes.TrimSpace(val), []byte("null")) {
			return &FieldError{Field: f, Err: errors.New("null")}
		}
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return &FieldError{Field: te.Field, Err: fmt.Errorf("want %s, got a JSON %s", te.Type, te.Value)}
		}
		if msg := err.Error(); strings.HasPrefix(msg, "json: unknown field ") {
			field := strings.Trim(strings.TrimPrefix(msg, "json: unknown field "), `"`)
			return &FieldError{Field: field, Err: errors.New("unknown field")}
		}
		return err
	}
	return nil
}
