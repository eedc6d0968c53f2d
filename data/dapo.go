package data

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/mathrl/mathrl/internal/jsonl"
)

// DAPOSource is the Row.Source given to DAPO rows that carry no data_source.
const DAPOSource = "dapo"

// ReadDAPO reads DAPO-Math-17k rows and converts them to Rows. Two layouts are
// accepted, line by line:
//
//   - slime: {"prompt": [{"role": "user", "content": ...}], "label": ...}
//   - verl:  {"data_source": ..., "prompt": [...], "reward_model": {"ground_truth": ...},
//     "extra_info": {"index": ...}}
//
// Problem is the content of the one user message of prompt (a plain string prompt
// is taken as it is), unchanged: it keeps DAPO's instruction text. Answer is label
// or reward_model.ground_truth, which must be a string. ID is extra_info.index
// (string or integer) when present, else the 1-based line number. Source is
// data_source when present, else DAPOSource. Errors name the stream, the line and
// the field, e.g. "data: dapo.jsonl:7: field \"reward_model.ground_truth\": missing".
func ReadDAPO(r io.Reader, name string) ([]Row, error) {
	return readRows(r, name, "extra_info.index", decodeDAPO)
}

// ReadDAPOFile reads the DAPO-Math-17k JSONL file at path (see ReadDAPO).
func ReadDAPOFile(path string) ([]Row, error) {
	return readFile(path, ReadDAPO)
}

// chatMessage is one element of a DAPO prompt.
type chatMessage struct {
	Role    *string `json:"role"`
	Content *string `json:"content"`
}

// decodeDAPO converts one DAPO line, the line-th of its file, to a Row.
func decodeDAPO(raw []byte, line int) (Row, error) {
	obj, err := jsonl.Object(raw)
	if err != nil {
		return Row{}, err
	}
	row := Row{ID: strconv.Itoa(line), Source: DAPOSource}
	if row.Problem, err = dapoProblem(obj); err != nil {
		return Row{}, err
	}

	_, hasLabel := obj["label"]
	rm, hasRM := obj["reward_model"]
	var answer string
	switch {
	case hasLabel:
		answer, err = nonEmptyString(obj, "label")
	case hasRM:
		answer, err = nestedString(rm, "reward_model", "ground_truth")
	default:
		err = &jsonl.FieldError{Field: "label", Err: errors.New("missing (and no reward_model.ground_truth)")}
	}
	if err != nil {
		return Row{}, err
	}
	row.Answer = &answer

	if _, ok := obj["data_source"]; ok {
		if row.Source, err = nonEmptyString(obj, "data_source"); err != nil {
			return Row{}, err
		}
	}
	if extra, ok := obj["extra_info"]; ok && !isNull(extra) {
		id, err := dapoIndex(extra)
		if err != nil {
			return Row{}, err
		}
		if id != "" {
			row.ID = id
		}
	}
	return row, nil
}

// dapoProblem returns the user message of obj["prompt"].
func dapoProblem(obj map[string]json.RawMessage) (string, error) {
	raw, ok := obj["prompt"]
	if !ok {
		return "", &jsonl.FieldError{Field: "prompt", Err: errors.New("missing")}
	}
	var text string
	if len(raw) > 0 && raw[0] == '"' && json.Unmarshal(raw, &text) == nil {
		if text == "" {
			return "", &jsonl.FieldError{Field: "prompt", Err: errors.New("empty")}
		}
		return text, nil
	}
	var msgs []chatMessage
	if err := json.Unmarshal(raw, &msgs); err != nil {
		return "", &jsonl.FieldError{Field: "prompt", Err: fmt.Errorf("want a list of chat messages or a string, got %s", describe(raw))}
	}
	user := -1
	for i, m := range msgs {
		field := fmt.Sprintf("prompt[%d]", i)
		if m.Role == nil {
			return "", &jsonl.FieldError{Field: field + ".role", Err: errors.New("missing")}
		}
		if m.Content == nil {
			return "", &jsonl.FieldError{Field: field + ".content", Err: errors.New("missing")}
		}
		if *m.Role != "user" {
			continue
		}
		if user >= 0 {
			return "", &jsonl.FieldError{Field: field, Err: fmt.Errorf("a second user message (the first is prompt[%d])", user)}
		}
		if *m.Content == "" {
			return "", &jsonl.FieldError{Field: field + ".content", Err: errors.New("empty")}
		}
		user = i
	}
	if user < 0 {
		return "", &jsonl.FieldError{Field: "prompt", Err: errors.New("no user message")}
	}
	return *msgs[user].Content, nil
}

// nestedString returns the non-empty string raw[key], raw being the object named parent.
func nestedString(raw json.RawMessage, parent, key string) (string, error) {
	field := parent + "." + key
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil || obj == nil {
		return "", &jsonl.FieldError{Field: parent, Err: fmt.Errorf("want an object, got %s", describe(raw))}
	}
	s, err := nonEmptyString(obj, key)
	if err != nil {
		var fe *jsonl.FieldError
		if errors.As(err, &fe) {
			return "", &jsonl.FieldError{Field: field, Err: fe.Err}
		}
		return "", err
	}
	return s, nil
}

// dapoIndex returns extra_info.index as text ("" when absent or null).
func dapoIndex(raw json.RawMessage) (string, error) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil {
		return "", &jsonl.FieldError{Field: "extra_info", Err: fmt.Errorf("want an object, got %s", describe(raw))}
	}
	idx, ok := obj["index"]
	if !ok || isNull(idx) {
		return "", nil
	}
	var s string
	if idx[0] == '"' && json.Unmarshal(idx, &s) == nil {
		if s == "" {
			return "", &jsonl.FieldError{Field: "extra_info.index", Err: errors.New("empty")}
		}
		return s, nil
	}
	var n int64
	if err := json.Unmarshal(idx, &n); err != nil {
		return "", &jsonl.FieldError{Field: "extra_info.index", Err: fmt.Errorf("want a string or an integer, got %s", describe(idx))}
	}
	return strconv.FormatInt(n, 10), nil
}
