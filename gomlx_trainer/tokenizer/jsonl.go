package tokenizer

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/mathrl/mathrl/internal/jsonl"
)

// TokenizeOptions configures TokenizeJSONL.
type TokenizeOptions struct {
	jsonl.Files
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
	return opts.Run(func(r io.Reader, name string, w io.Writer) error {
		return jsonl.Read(r, name, func(_ int, raw []byte) error {
			obj, err := jsonl.ParseOrdered(raw)
			if err != nil {
				return err
			}
			if err := tokenizeLine(tok, opts, obj); err != nil {
				return err
			}
			return obj.WriteLine(w)
		})
	})
}

// tokenizeLine adds "ids" (or, with opts.Decode, "text") to one object.
func tokenizeLine(tok *Tokenizer, opts TokenizeOptions, obj *jsonl.Ordered) error {
	if opts.Decode {
		ids, err := readIDs(obj.Map(), "ids", tok.VocabSize())
		if err != nil {
			return err
		}
		return obj.Set("text", tok.Decode(ids, opts.SkipSpecial))
	}
	text, err := jsonl.String(obj.Map(), "text")
	if err != nil {
		return err
	}
	return obj.Set("ids", tok.Encode(text))
}

// ChatRenderOptions configures RenderChatJSONL.
type ChatRenderOptions struct {
	jsonl.Files
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
	return opts.Run(func(r io.Reader, name string, w io.Writer) error {
		return jsonl.Read(r, name, func(_ int, raw []byte) error {
			obj, err := jsonl.ParseOrdered(raw)
			if err != nil {
				return err
			}
			if err := renderLine(tok, obj); err != nil {
				return err
			}
			return obj.WriteLine(w)
		})
	})
}

// renderLine adds "rendered" (and, when tok is not nil, "ids") to one object.
func renderLine(tok *Tokenizer, line *jsonl.Ordered) error {
	obj := line.Map()
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
	if err := line.Set("rendered", text); err != nil || tok == nil {
		return err
	}
	return line.Set("ids", tok.Encode(text))
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
