package data

import (
	"strconv"

	"github.com/mathrl/mathrl/internal/pyjson"
)

// AppendJSON appends r to b as one line of a dataset file, without the
// newline: the seven fields in the order of Row, null for a nil pointer,
// written as Python's json.dumps(row, ensure_ascii=False) writes them (", "
// and ": " separators, non-ASCII characters as they are, no HTML escaping).
// The published files are exactly this, one row per line.
func (r Row) AppendJSON(b []byte) []byte {
	b = append(b, `{"id": `...)
	b = append(b, pyjson.Quote(r.ID)...)
	b = append(b, `, "problem": `...)
	b = append(b, pyjson.Quote(r.Problem)...)
	b = appendNullable(append(b, `, "answer": `...), r.Answer)
	b = appendNullable(append(b, `, "solution": `...), r.Solution)
	b = append(b, `, "level": `...)
	if r.Level == nil {
		b = append(b, "null"...)
	} else {
		b = strconv.AppendInt(b, int64(*r.Level), 10)
	}
	b = appendNullable(append(b, `, "subject": `...), r.Subject)
	b = append(b, `, "source": `...)
	b = append(b, pyjson.Quote(r.Source)...)
	return append(b, '}')
}

// appendNullable appends s quoted, or null when s is nil.
func appendNullable(b []byte, s *string) []byte {
	if s == nil {
		return append(b, "null"...)
	}
	return append(b, pyjson.Quote(*s)...)
}

// EncodeRows returns rows as the bytes of a dataset file: AppendJSON of each
// row, each followed by a newline.
func EncodeRows(rows []Row) []byte {
	var b []byte
	for _, r := range rows {
		b = append(r.AppendJSON(b), '\n')
	}
	return b
}
