package jsonl

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
)

// Marshal is json.Marshal without escaping <, > and &: the special tokens
// of a chat template (<|im_end|>, <tool_call>) and tracebacks (<module>)
// stay readable. Every JSONL file mathrl writes is written through it.
func Marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// WriteLine writes v as one JSON line (Marshal, then a newline) in a single
// Write, so that a file opened for appending never holds half of it from a
// failed call.
func WriteLine(w io.Writer, v any) error {
	b, err := Marshal(v)
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// Line is a line type that checks itself before it is written.
type Line interface{ Validate() error }

// WriteValid writes each of lines as one JSON line (WriteLine), after
// defaults fills its zero fields (a format version) and Validate accepts it.
// The error of a line names it with name(i, line); nothing after a line
// that fails is written.
func WriteValid[T Line](w io.Writer, lines []T, defaults func(*T), name func(i int, line T) string) error {
	for i, line := range lines {
		defaults(&line)
		if err := line.Validate(); err != nil {
			return fmt.Errorf("%s: %w", name(i, line), err)
		}
		if err := WriteLine(w, line); err != nil {
			return fmt.Errorf("%s: %w", name(i, line), err)
		}
	}
	return nil
}
