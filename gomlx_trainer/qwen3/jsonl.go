package qwen3

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/gomlx/compute"
	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/ml/model"

	"github.com/mathrl/mathrl/internal/jsonl"
)

// ForwardJSONL reads JSON lines holding "input_ids" (a list of token ids) from
// r and writes each line back to w with "logits_last" added: the float32 logits
// after its last token. Other fields are kept as they were, in order. Lines are
// run in batches of batchSize, right-padded to a power-of-two length (at least
// 16) so that few graphs are compiled. name is r's name in error messages.
func ForwardJSONL(b compute.Backend, m *Model, r io.Reader, name string, w io.Writer, batchSize int) error {
	if batchSize < 1 {
		return fmt.Errorf("qwen3: batch size %d, want >= 1", batchSize)
	}
	exec, err := model.NewExec(b, m.Store, func(scope *model.Scope, ids, lens *graph.Node) *graph.Node {
		return LastLogits(scope, m.Config, ids, lens)
	})
	if err != nil {
		return fmt.Errorf("qwen3: %w", err)
	}
	exec.SetMaxCache(-1)
	var objs []*jsonl.Ordered
	var rows [][]int
	flush := func() error {
		if len(rows) == 0 {
			return nil
		}
		longest := 0
		for _, r := range rows {
			longest = max(longest, len(r))
		}
		width := 16
		for width < longest {
			width *= 2
		}
		ids := make([][]int32, len(rows))
		lens := make([]int32, len(rows))
		for i, r := range rows {
			ids[i] = make([]int32, width)
			for j, id := range r {
				ids[i][j] = int32(id)
			}
			lens[i] = int32(len(r))
		}
		out, err := exec.Call(ids, lens)
		if err != nil {
			return fmt.Errorf("qwen3: forward: %w", err)
		}
		logits, err := Float32s(out[0])
		if err != nil {
			return err
		}
		vocab := m.Config.VocabSize
		for i, obj := range objs {
			if err := obj.Set("logits_last", logits[i*vocab:(i+1)*vocab]); err != nil {
				return fmt.Errorf("qwen3: %w", err)
			}
			if err := obj.WriteLine(w); err != nil {
				return err
			}
		}
		objs, rows = objs[:0], rows[:0]
		return nil
	}
	err = jsonl.Read(r, name, func(_ int, raw []byte) error {
		obj, err := jsonl.ParseOrdered(raw)
		if err != nil {
			return err
		}
		ids, err := IDsField(obj.Map(), "input_ids", m.Config.VocabSize)
		if err != nil {
			return err
		}
		objs, rows = append(objs, obj), append(rows, ids)
		if len(rows) == batchSize {
			return flush()
		}
		return nil
	})
	if err != nil {
		return err
	}
	return flush()
}

// IDsField reads obj[field] as a non-empty list of token ids below vocab; a
// problem is a *jsonl.FieldError naming the field.
func IDsField(obj map[string]json.RawMessage, field string, vocab int) ([]int, error) {
	raw, ok := obj[field]
	if !ok {
		return nil, &jsonl.FieldError{Field: field, Err: fmt.Errorf("missing")}
	}
	var ids []int
	if err := json.Unmarshal(raw, &ids); err != nil {
		return nil, &jsonl.FieldError{Field: field, Err: fmt.Errorf("want a list of integer token ids")}
	}
	if len(ids) == 0 {
		return nil, &jsonl.FieldError{Field: field, Err: fmt.Errorf("empty")}
	}
	for i, id := range ids {
		if id < 0 || id >= vocab {
			return nil, &jsonl.FieldError{Field: field, Err: fmt.Errorf("token %d is id %d, outside the vocabulary [0, %d)", i, id, vocab)}
		}
	}
	return ids, nil
}
