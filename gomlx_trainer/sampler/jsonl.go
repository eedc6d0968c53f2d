package sampler

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/mathrl/mathrl/gomlx_trainer/qwen3"
	"github.com/mathrl/mathrl/internal/jsonl"
)

// Tokenizer turns text into ids and back (package tokenizer's *Tokenizer is one).
type Tokenizer interface {
	Encode(text string) []int
	Decode(ids []int, skipSpecial bool) string
}

// GenerateJSONL reads JSON lines holding "input_ids" (token ids) or "prompt"
// (text, encoded with tok) from r, generates a continuation for each, and writes
// each line back to w with "output_ids" (the new tokens only),
// "output_logprobs", "finish_reason" and, when tok is not nil, "text" (the new
// tokens decoded, special tokens skipped) added after its own fields, which are
// kept as they were, in order. Lines run in batches of
// batchSize; batch k uses seed opts.Seed+k, so a file's output is reproducible.
// name is r's name in error messages.
func (s *Sampler) GenerateJSONL(ctx context.Context, r io.Reader, name string, w io.Writer, opts Options, batchSize int, tok Tokenizer) error {
	if batchSize < 1 {
		return fmt.Errorf("sampler: batch size %d, want >= 1", batchSize)
	}
	vocab := s.model.Config.VocabSize
	var objs []*jsonl.Ordered
	var prompts [][]int
	batchIndex := uint64(0)
	flush := func() error {
		if len(prompts) == 0 {
			return nil
		}
		o := opts
		o.Seed = opts.Seed + batchIndex
		batchIndex++
		res, err := s.Generate(ctx, prompts, o)
		if err != nil {
			return err
		}
		for i, obj := range objs {
			if err := setOutput(obj, res[i], tok); err != nil {
				return fmt.Errorf("sampler: %w", err)
			}
			if err := obj.WriteLine(w); err != nil {
				return err
			}
		}
		objs, prompts = objs[:0], prompts[:0]
		return nil
	}
	err := jsonl.Read(r, name, func(_ int, raw []byte) error {
		line, err := jsonl.ParseOrdered(raw)
		if err != nil {
			return err
		}
		obj := line.Map()
		var ids []int
		if _, ok := obj["input_ids"]; ok {
			if ids, err = qwen3.IDsField(obj, "input_ids", vocab); err != nil {
				return err
			}
		} else {
			text, err := jsonl.String(obj, "prompt")
			if err != nil {
				return &jsonl.FieldError{Field: "input_ids", Err: errors.New("missing (and no \"prompt\" text either)")}
			}
			if tok == nil {
				return &jsonl.FieldError{Field: "prompt", Err: errors.New("text prompts need a tokenizer (--tokenizer)")}
			}
			if ids = tok.Encode(text); len(ids) == 0 {
				return &jsonl.FieldError{Field: "prompt", Err: errors.New("encodes to no tokens")}
			}
			for _, id := range ids {
				if id >= vocab {
					return &jsonl.FieldError{Field: "prompt", Err: fmt.Errorf("tokenizer gives id %d, outside the model's vocabulary [0, %d)", id, vocab)}
				}
			}
		}
		objs, prompts = append(objs, line), append(prompts, ids)
		if len(prompts) == batchSize {
			return flush()
		}
		return nil
	})
	if err != nil {
		return err
	}
	return flush()
}

// setOutput adds one generation's fields to its input line, after the line's
// own fields and in this order: output_ids, output_logprobs, finish_reason and,
// when tok is not nil, text.
func setOutput(obj *jsonl.Ordered, res Result, tok Tokenizer) error {
	if err := obj.Set("output_ids", res.IDs); err != nil {
		return err
	}
	if err := obj.Set("output_logprobs", res.LogProbs); err != nil {
		return err
	}
	if err := obj.Set("finish_reason", res.Finish); err != nil || tok == nil {
		return err
	}
	return obj.Set("text", tok.Decode(res.IDs, true))
}
