package scorer

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"strconv"
	"strings"

	"github.com/mathrl/mathrl/internal/jsonl"
)

// LabelKind says which Python type a label has when slime receives it.
type LabelKind int

const (
	// StringLabel is a Python str (the usual case).
	StringLabel LabelKind = iota
	// IntLabel is a Python int (a JSON number without fraction or exponent).
	IntLabel
	// FloatLabel is a Python float (a JSON number with a fraction or exponent).
	FloatLabel
)

// Label is a reference answer as slime sees it. The kind matters in two places:
// the math scorer gives 0 for every falsy label (the empty string, int 0,
// float 0.0), deepscaler only for the empty string; and a number is turned into
// text with Python's str() (42.0 -> "42.0", 1e16 -> "1e+16").
type Label struct {
	Text string    // str(label) in Python
	Kind LabelKind // the label's Python type
}

// TextLabel is a string label.
func TextLabel(s string) Label { return Label{Text: s, Kind: StringLabel} }

// NumberLabel is the label a JSON number literal (e.g. `42`, `42.0`, `1e3`)
// becomes when Python's json module reads it.
func NumberLabel(literal string) (Label, error) {
	lit := strings.TrimSpace(literal)
	if !json.Valid([]byte(lit)) || lit == "" || !(lit[0] == '-' || lit[0] >= '0' && lit[0] <= '9') {
		return Label{}, fmt.Errorf("scorer: %q is not a JSON number", literal)
	}
	if strings.ContainsAny(lit, ".eE") {
		x, err := strconv.ParseFloat(lit, 64)
		if err != nil && !errors.Is(err, strconv.ErrRange) {
			return Label{}, fmt.Errorf("scorer: %q: %w", literal, err)
		}
		return Label{Text: pyFloatRepr(x), Kind: FloatLabel}, nil
	}
	n, ok := new(big.Int).SetString(lit, 10)
	if !ok {
		return Label{}, fmt.Errorf("scorer: %q is not a JSON integer", literal)
	}
	return Label{Text: n.String(), Kind: IntLabel}, nil
}

// LabelFromJSON reads a label given as a JSON string or number.
func LabelFromJSON(raw json.RawMessage) (Label, error) {
	t := bytes.TrimSpace(raw)
	if len(t) > 0 && t[0] == '"' {
		if s, ok := jsonl.DecodeString(t); ok {
			return TextLabel(s), nil
		}
		var s string
		if err := json.Unmarshal(t, &s); err != nil {
			return Label{}, fmt.Errorf("scorer: label: %w", err)
		}
		return TextLabel(s), nil
	}
	if len(t) > 0 && (t[0] == '-' || t[0] >= '0' && t[0] <= '9') {
		return NumberLabel(string(t))
	}
	return Label{}, errors.New("scorer: label: want a string or a number")
}

// falsy is Python's `not label`.
func (l Label) falsy() bool {
	switch l.Kind {
	case IntLabel:
		return l.Text == "0"
	case FloatLabel:
		x, _ := strconv.ParseFloat(l.Text, 64)
		return x == 0
	}
	return l.Text == ""
}
