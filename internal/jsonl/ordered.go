package jsonl

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
)

// Ordered is one JSON object split into its fields, in order, each kept as the
// bytes it was read with (name and value), so that a command can add, replace
// or delete fields and write the line back otherwise unchanged: no key sorting,
// no re-escaping of "<" or ">", numbers as they were written.
type Ordered struct {
	keys    [][]byte          // decoded field names
	rawKeys [][]byte          // the names as written, quotes included
	vals    []json.RawMessage // the values as written
}

// ParseOrdered splits the JSON object raw into its fields. A line that is not
// exactly one object is an error; a field whose value is not valid JSON, or a
// name that appears twice, is a *FieldError naming the field. The result does
// not share memory with raw.
func ParseOrdered(raw []byte) (*Ordered, error) {
	o := &Ordered{}
	if err := o.Parse(bytes.Clone(raw)); err != nil {
		return nil, err
	}
	return o, nil
}

// Parse is ParseOrdered into o, reusing o's memory, for a loop over lines: o
// then shares memory with raw, which must not change while o is in use. On
// error o is empty.
func (o *Ordered) Parse(raw []byte) error {
	o.reset()
	if o.scanObject(raw) { // the fast path, scan.go
		return nil
	}
	o.reset()
	if err := o.parseSlow(raw); err != nil {
		o.reset()
		return err
	}
	return nil
}

// reset empties o, keeping its memory.
func (o *Ordered) reset() {
	o.keys, o.rawKeys, o.vals = o.keys[:0], o.rawKeys[:0], o.vals[:0]
}

// parseSlow is Parse with encoding/json's Decoder: it handles every line the
// fast path leaves, and words the errors.
func (o *Ordered) parseSlow(raw []byte) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.Token(); err != nil {
		return fmt.Errorf("not a JSON object: %w", err)
	} else if tok != json.Delim('{') {
		return errors.New("not a JSON object")
	}
	for dec.More() {
		start := dec.InputOffset()
		tok, err := dec.Token()
		if err != nil {
			return fmt.Errorf("not a JSON object: %w", err)
		}
		key, ok := tok.(string)
		if !ok {
			return errors.New("not a JSON object")
		}
		if o.index(key) >= 0 {
			return &FieldError{Field: key, Err: errors.New("repeated")}
		}
		rawKey := bytes.TrimLeft(raw[start:dec.InputOffset()], " \t\r\n,")
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return &FieldError{Field: key, Err: fmt.Errorf("bad JSON value: %w", err)}
		}
		o.keys, o.rawKeys, o.vals = append(o.keys, []byte(key)), append(o.rawKeys, rawKey), append(o.vals, v)
	}
	if _, err := dec.Token(); err != nil {
		return fmt.Errorf("not a JSON object: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("extra data after the JSON object")
	}
	return nil
}

// index returns the position of the field key, or -1.
func (o *Ordered) index(key string) int {
	for i, k := range o.keys {
		if string(k) == key {
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
		m[string(k)] = o.vals[i]
	}
	return m
}

// Set sets the field key to value marshalled as JSON without HTML escaping
// ("<|im_end|>" stays as it is): in place when the field is there, else as a
// new last field. A value that cannot be marshalled (NaN, a channel) is a
// *FieldError naming key, and o is left unchanged.
func (o *Ordered) Set(key string, value any) error {
	raw, err := Marshal(value)
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
	name, plain := quoteName(key)
	decoded := name[1 : len(name)-1]
	if !plain {
		decoded = []byte(key)
	}
	o.keys, o.rawKeys, o.vals = append(o.keys, decoded), append(o.rawKeys, name), append(o.vals, value)
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
func (o *Ordered) Bytes() []byte { return o.AppendTo(nil) }

// AppendTo appends Bytes to dst and returns the extended slice.
func (o *Ordered) AppendTo(dst []byte) []byte {
	n := 2
	for i := range o.keys {
		n += len(o.rawKeys[i]) + len(o.vals[i]) + 2
	}
	dst = slices.Grow(dst, n)
	dst = append(dst, '{')
	for i := range o.keys {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, o.rawKeys[i]...)
		dst = append(dst, ':')
		dst = append(dst, o.vals[i]...)
	}
	return append(dst, '}')
}

// WriteLine writes Bytes and a newline to w.
func (o *Ordered) WriteLine(w io.Writer) error {
	_, err := w.Write(append(o.Bytes(), '\n'))
	return err
}

// quoteName returns key as a JSON string without HTML escaping, and whether
// it needed no escape (then it is key in quotes).
func quoteName(key string) (name []byte, plain bool) {
	for i := 0; i < len(key); i++ {
		if c := key[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' {
			name, _ := Marshal(key) // a string always marshals
			return name, false
		}
	}
	b := make([]byte, 0, len(key)+2)
	return append(append(append(b, '"'), key...), '"'), true
}
