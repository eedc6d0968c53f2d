package jsonl

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// Ordered is one JSON object split into its fields, in order, each kept as the
// bytes it was read with (name and value), so that a command can add, replace
// or delete fields and write the line back otherwise unchanged: no key sorting,
// no re-escaping of "<" or ">", numbers as they were written.
type Ordered struct {
	keys    []string          // decoded field names
	rawKeys [][]byte          // the names as written, quotes included
	vals    []json.RawMessage // the values as written
}

// ParseOrdered splits the JSON object raw into its fields. A line that is not
// exactly one object is an error; a field whose value is not valid JSON, or a
// name that appears twice, is a *FieldError naming the field.
func ParseOrdered(raw []byte) (*Ordered, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.Token(); err != nil {
		return nil, fmt.Errorf("not a JSON object: %w", err)
	} else if tok != json.Delim('{') {
		return nil, errors.New("not a JSON object")
	}
	o := &Ordered{}
	for dec.More() {
		start := dec.InputOffset()
		tok, err := dec.Token()
		if err != nil {
			return nil, fmt.Errorf("not a JSON object: %w", err)
		}
		key, ok := tok.(string)
		if !ok {
			return nil, errors.New("not a JSON object")
		}
		if o.index(key) >= 0 {
			return nil, &FieldError{Field: key, Err: errors.New("repeated")}
		}
		rawKey := bytes.Clone(bytes.TrimLeft(raw[start:dec.InputOffset()], " \t\r\n,"))
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, &FieldError{Field: key, Err: fmt.Errorf("bad JSON value: %w", err)}
		}
		o.keys, o.rawKeys, o.vals = append(o.keys, key), append(o.rawKeys, rawKey), append(o.vals, v)
	}
	if _, err := dec.Token(); err != nil {
		return nil, fmt.Errorf("not a JSON object: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("extra data after the JSON object")
	}
	return o, nil
}

// index returns the position of the field key, or -1.
func (o *Ordered) index(key string) int {
	for i, k := range o.keys {
		if k == key {
			return i
		}
	}
	return -1
}

// Get returns the raw value of the field key and whether it is there.
func (o *Ordered) Get(key string) (json.RawMessage, bool) {
	if i := o.index(key); i >= 0 {
		return o.vals[i], true
	}
	return nil, false
}

// Map returns the fields as a map from name to raw value, for the readers
// String and the like. The values share memory with o.
func (o *Ordered) Map() map[string]json.RawMessage {
	m := make(map[string]json.RawMessage, len(o.keys))
	for i, k := range o.keys {
		m[k] = o.vals[i]
	}
	return m
}

// Set sets the field key to value marshalled as JSON without HTML escaping
// ("<|im_end|>" stays as it is): in place when the field is there, else as a
// new last field. A value that cannot be marshalled (NaN, a channel) is a
// *FieldError naming key, and o is left unchanged.
func (o *Ordered) Set(key string, value any) error {
	raw, err := marshalNoHTML(value)
	if err != nil {
		return &FieldError{Field: key, Err: err}
	}
	o.SetRaw(key, raw)
	return nil
}

// SetRaw is Set with a value that is already JSON; it must be valid JSON.
func (o *Ordered) SetRaw(key string, value json.RawMessage) {
	if i := o.index(key); i >= 0 {
		o.vals[i] = value
		return
	}
	name, _ := marshalNoHTML(key) // a string always marshals
	o.keys, o.rawKeys, o.vals = append(o.keys, key), append(o.rawKeys, name), append(o.vals, value)
}

// Delete removes the field key, if it is there.
func (o *Ordered) Delete(key string) {
	if i := o.index(key); i >= 0 {
		o.keys = append(o.keys[:i], o.keys[i+1:]...)
		o.rawKeys = append(o.rawKeys[:i], o.rawKeys[i+1:]...)
		o.vals = append(o.vals[:i], o.vals[i+1:]...)
	}
}

// Bytes returns the object on one line: {name:value,...} with the fields in
// order and no space between them.
func (o *Ordered) Bytes() []byte {
	var b bytes.Buffer
	b.WriteByte('{')
	for i := range o.keys {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(o.rawKeys[i])
		b.WriteByte(':')
		b.Write(o.vals[i])
	}
	b.WriteByte('}')
	return b.Bytes()
}

// WriteLine writes Bytes and a newline to w.
func (o *Ordered) WriteLine(w io.Writer) error {
	_, err := w.Write(append(o.Bytes(), '\n'))
	return err
}

// marshalNoHTML is json.Marshal without escaping <, > and &.
func marshalNoHTML(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}
