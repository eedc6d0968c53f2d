package jsonl

import (
	"bytes"
	"encoding/json"
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
