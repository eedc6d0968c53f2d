package data

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"

	"github.com/mathrl/mathrl/internal/jsonl"
)

// Row is one problem of a dataset file: one JSON object per line with the fields
// below. id and problem are required non-empty strings; answer, solution and
// subject are strings or null; level is an integer or null; source is a string.
// Fields other than these are ignored.
type Row struct {
	ID       string  `json:"id"`       // stable id, unique within a file
	Problem  string  `json:"problem"`  // problem statement
	Answer   *string `json:"answer"`   // the label; nil where the source has no usable answer
	Solution *string `json:"solution"` // reference solution, if any
	Level    *int    `json:"level"`    // MATH difficulty 1-5, if known
	Subject  *string `json:"subject"`  // MATH subject, if known
	Source   string  `json:"source"`   // origin tag
}

// Read reads and validates the rows of a dataset JSONL stream. name is used in
// errors, which have the form "data: NAME:LINE: field \"F\": what is wrong".
// Blank lines are skipped; an id seen twice is an error.
func Read(r io.Reader, name string) ([]Row, error) {
	return readRows(r, name, "id", decodeRow)
}

// ReadFile reads and validates the dataset JSONL file at path (see Read).
func ReadFile(path string) ([]Row, error) {
	return readFile(path, Read)
}

// readRows decodes each line of r with decode and checks that no ID is used
// twice; idField names the field that held the ID in that error.
func readRows(r io.Reader, name, idField string, decode func(raw []byte, line int) (Row, error)) ([]Row, error) {
	var rows []Row
	seen := map[string]int{}
	err := jsonl.Read(r, name, func(line int, raw []byte) error {
		row, err := decode(raw, line)
		if err != nil {
			return err
		}
		if first, dup := seen[row.ID]; dup {
			return &jsonl.FieldError{Field: idField, Err: fmt.Errorf("%q already used on line %d", row.ID, first)}
		}
		seen[row.ID] = line
		rows = append(rows, row)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("data: %w", err)
	}
	return rows, nil
}

// readFile opens path and reads it with read.
func readFile(path string, read func(r io.Reader, name string) ([]Row, error)) ([]Row, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("data: %w", err)
	}
	defer f.Close()
	return read(f, path)
}

// decodeRow decodes one line of a dataset file; the line number is not used.
func decodeRow(raw []byte, _ int) (Row, error) {
	obj, err := jsonl.Object(raw)
	if err != nil {
		return Row{}, err
	}
	var row Row
	if row.ID, err = nonEmptyString(obj, "id"); err != nil {
		return Row{}, err
	}
	if err := decodeFields(obj, &row); err != nil {
		return Row{}, err
	}
	if _, ok := obj["source"]; ok {
		if row.Source, err = jsonl.String(obj, "source"); err != nil {
			return Row{}, err
		}
	}
	return row, nil
}

// decodeFields reads the fields that dataset rows share with the origins'
// formats: problem (a non-empty string), answer, solution and subject (strings
// or null) and level (an integer or null). An absent field is null.
func decodeFields(obj map[string]json.RawMessage, row *Row) error {
	var err error
	if row.Problem, err = nonEmptyString(obj, "problem"); err != nil {
		return err
	}
	if row.Answer, err = nullableString(obj, "answer"); err != nil {
		return err
	}
	if row.Solution, err = nullableString(obj, "solution"); err != nil {
		return err
	}
	if row.Subject, err = nullableString(obj, "subject"); err != nil {
		return err
	}
	row.Level, err = nullableInt(obj, "level")
	return err
}

// nonEmptyString returns obj[field], which must be a non-empty string.
func nonEmptyString(obj map[string]json.RawMessage, field string) (string, error) {
	s, err := jsonl.String(obj, field)
	if err != nil {
		return "", err
	}
	if s == "" {
		return "", &jsonl.FieldError{Field: field, Err: errors.New("empty")}
	}
	return s, nil
}

// nullableString returns obj[field] as a string, or nil when it is null or absent.
func nullableString(obj map[string]json.RawMessage, field string) (*string, error) {
	raw, ok := obj[field]
	if !ok || isNull(raw) {
		return nil, nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, &jsonl.FieldError{Field: field, Err: fmt.Errorf("want a string or null, got %s", describe(raw))}
	}
	return &s, nil
}

// nullableInt returns obj[field] as an int, or nil when it is null or absent.
func nullableInt(obj map[string]json.RawMessage, field string) (*int, error) {
	raw, ok := obj[field]
	if !ok || isNull(raw) {
		return nil, nil
	}
	var num json.Number
	if raw[0] == '"' || json.Unmarshal(raw, &num) != nil {
		return nil, &jsonl.FieldError{Field: field, Err: fmt.Errorf("want an integer or null, got %s", describe(raw))}
	}
	n, err := strconv.Atoi(num.String())
	if err != nil {
		return nil, &jsonl.FieldError{Field: field, Err: fmt.Errorf("want an integer or null, got %s", num)}
	}
	return &n, nil
}

func isNull(raw json.RawMessage) bool { return string(bytes.TrimSpace(raw)) == "null" }

// describe names a JSON value for an error message: its text when short, else its kind.
func describe(raw json.RawMessage) string {
	if len(raw) <= 40 {
		return string(raw)
	}
	switch raw[0] {
	case '"':
		return "a long string"
	case '{':
		return "an object"
	case '[':
		return "an array"
	}
	return "a long value"
}
