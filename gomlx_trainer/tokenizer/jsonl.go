package tokenizer

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/mathrl/mathrl/internal/atomicfile"
	"github.com/mathrl/mathrl/internal/jsonl"
)

// Files names the input and output of a JSONL command: a path, or "-" (or "")
// for standard input or output, which the command passes in.
type Files struct {
	In, Out string
	Stdin   io.Reader
	Stdout  io.Writer
}

// run opens the input, runs fill line by line into the output (written
// atomically when it is a file) and closes everything.
func (f Files) run(fill func(r io.Reader, name string, w io.Writer) error) error {
	var r io.Reader = f.Stdin
	name := "-"
	if f.In != "" && f.In != "-" {
		file, err := os.Open(f.In)
		if err != nil {
			return fmt.Errorf("tokenizer: %w", err)
		}
		defer file.Close()
		r, name = file, f.In
	}
	if f.Out == "" || f.Out == "-" {
		w := bufio.NewWriter(f.Stdout)
		if err := fill(r, name, w); err != nil {
			return err
		}
		return w.Flush()
	}
	return atomicfile.Write(f.Out, func(w io.Writer) error {
		bw := bufio.NewWriter(w)
		if err := fill(r, name, bw); err != nil {
			return err
		}
		return bw.Flush()
	})
}

// TokenizeOptions configures TokenizeJSONL.
type TokenizeOptions struct {
	Files
	Tokenizer   string // path of a tokenizer.json; "bytes" for NewBytes()
	Decode      bool   // read "ids", add "text" (else read "text", add "ids")
	SkipSpecial bool   // with Decode: drop special tokens
}

// TokenizeJSONL reads JSON objects, one a line, and writes each back with
// "ids" added (the token ids of its "text") or, with Decode, "text" added (the
// text of its "ids"). Other fields are kept, in order; an existing field of
// the same name is replaced.
func TokenizeJSONL(opts TokenizeOptions) error {
	tok, err := loadNamed(opts.Tokenizer)
	if err != nil {
		return err
	}
	return opts.run(func(r io.Reader, name string, w io.Writer) error {
		return jsonl.Read(r, name, func(_ int, raw []byte) error {
			obj, err := jsonl.Object(raw)
			if err != nil {
				return err
			}
			var field string
			var value []byte
			if opts.Decode {
				ids, err := readIDs(obj, "ids", tok.VocabSize())
				if err != nil {
					return err
				}
				field, value = "text", marshalNoHTML(tok.Decode(ids, opts.SkipSpecial))
			} else {
				text, err := jsonl.String(obj, "text")
				if err != nil {
					return err
				}
				field, value = "ids", marshalNoHTML(tok.Encode(text))
			}
			line, err := setFields(raw, field, value)
			if err != nil {
				return err
			}
			_, err = w.Write(append(line, '\n'))
			return err
		})
	})
}

// ChatRenderOptions configures RenderChatJSONL.
type ChatRenderOptions struct {
	Files
	Tokenizer string // optional: also add "ids" ("bytes" for NewBytes())
}

// RenderChatJSONL reads JSON objects with "messages", optional "tools" and
// optional "add_generation_prompt", one a line, and writes each back with
// "rendered" added (RenderChat's text) and, when a tokenizer is given, "ids".
func RenderChatJSONL(opts ChatRenderOptions) error {
	var tok *Tokenizer
	if opts.Tokenizer != "" {
		var err error
		if tok, err = loadNamed(opts.Tokenizer); err != nil {
			return err
		}
	}
	return opts.run(func(r io.Reader, name string, w io.Writer) error {
		return jsonl.Read(r, name, func(_ int, raw []byte) error {
			obj, err := jsonl.Object(raw)
			if err != nil {
				return err
			}
			msgs, err := readMessages(obj)
			if err != nil {
				return err
			}
			var tools []Tool
			if t, ok := obj["tools"]; ok && !isNull(t) {
				if err := json.Unmarshal(t, &tools); err != nil {
					return &jsonl.FieldError{Field: "tools", Err: errors.New("want a list of tool objects")}
				}
			}
			var gen bool
			if g, ok := obj["add_generation_prompt"]; ok && !isNull(g) {
				if err := json.Unmarshal(g, &gen); err != nil {
					return &jsonl.FieldError{Field: "add_generation_prompt", Err: errors.New("want true or false")}
				}
			}
			text, err := RenderChat(msgs, tools, gen)
			if err != nil {
				return &jsonl.FieldError{Field: "messages", Err: err}
			}
			line, err := setFields(raw, "rendered", marshalNoHTML(text))
			if err == nil && tok != nil {
				line, err = setFields(line, "ids", marshalNoHTML(tok.Encode(text)))
			}
			if err != nil {
				return err
			}
			_, err = w.Write(append(line, '\n'))
			return err
		})
	})
}

// readMessages reads the "messages" field: a list of message objects.
func readMessages(obj map[string]json.RawMessage) ([]Message, error) {
	m, ok := obj["messages"]
	if !ok {
		return nil, &jsonl.FieldError{Field: "messages", Err: errors.New("missing")}
	}
	var raws []json.RawMessage
	if err := json.Unmarshal(m, &raws); err != nil || isNull(m) {
		return nil, &jsonl.FieldError{Field: "messages", Err: errors.New("want a list of message objects")}
	}
	msgs := make([]Message, len(raws))
	for i, r := range raws {
		if err := json.Unmarshal(r, &msgs[i]); err != nil {
			return nil, &jsonl.FieldError{Field: fmt.Sprintf("messages[%d]", i), Err: err}
		}
	}
	return msgs, nil
}

// loadNamed loads a tokenizer.json, or NewBytes() for the name "bytes".
func loadNamed(path string) (*Tokenizer, error) {
	switch path {
	case "":
		return nil, errors.New("tokenizer: no tokenizer given")
	case "bytes":
		return NewBytes(), nil
	}
	return Load(path)
}

// readIDs reads a list of token ids in [0, size).
func readIDs(obj map[string]json.RawMessage, field string, size int) ([]int, error) {
	raw, ok := obj[field]
	if !ok {
		return nil, &jsonl.FieldError{Field: field, Err: errors.New("missing")}
	}
	var ids []int
	if err := json.Unmarshal(raw, &ids); err != nil || isNull(raw) {
		return nil, &jsonl.FieldError{Field: field, Err: errors.New("want a list of integer token ids")}
	}
	for i, id := range ids {
		if id < 0 || id >= size {
			return nil, &jsonl.FieldError{Field: field, Err: fmt.Errorf("id %d at index %d is outside the vocabulary [0, %d)", id, i, size)}
		}
	}
	return ids, nil
}

// marshalNoHTML is json.Marshal without escaping <, > and &.
func marshalNoHTML(v any) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(v) // strings and int slices always encode
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

// setFields returns the JSON object raw with field set to value: replaced in
// place if present, else appended; the other fields keep their order and text.
func setFields(raw []byte, field string, value []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, errors.New("not a JSON object")
	}
	var out bytes.Buffer
	out.WriteByte('{')
	found := false
	for dec.More() {
		kt, err := dec.Token()
		if err != nil {
			return nil, err
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		k := kt.(string)
		if out.Len() > 1 {
			out.WriteByte(',')
		}
		out.Write(marshalNoHTML(k))
		out.WriteByte(':')
		if k == field {
			out.Write(value)
			found = true
		} else {
			out.Write(v)
		}
	}
	if !found {
		if out.Len() > 1 {
			out.WriteByte(',')
		}
		out.Write(marshalNoHTML(field))
		out.WriteByte(':')
		out.Write(value)
	}
	out.WriteByte('}')
	return out.Bytes(), nil
}
