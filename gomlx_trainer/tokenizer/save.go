package tokenizer

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"

	"github.com/mathrl/mathrl/internal/atomicfile"
)

// qwenAddedTokens are Qwen3's added tokens in id order, with whether each is special.
var qwenAddedTokens = []struct {
	content string
	special bool
}{
	{EndOfText, true}, {IMStart, true}, {IMEnd, true},
	{"<|object_ref_start|>", true}, {"<|object_ref_end|>", true},
	{"<|box_start|>", true}, {"<|box_end|>", true},
	{"<|quad_start|>", true}, {"<|quad_end|>", true},
	{"<|vision_start|>", true}, {"<|vision_end|>", true},
	{"<|vision_pad|>", true}, {"<|image_pad|>", true}, {"<|video_pad|>", true},
	{ToolCallStart, false}, {ToolCallEnd, false},
	{"<|fim_prefix|>", false}, {"<|fim_middle|>", false}, {"<|fim_suffix|>", false}, {"<|fim_pad|>", false},
	{"<|repo_name|>", false}, {"<|file_sep|>", false},
	{ToolResponseStart, false}, {ToolResponseEnd, false},
	{"<think>", false}, {"</think>", false},
}

// NewBytes returns a byte-level tokenizer for tiny models: ids 0-255 are the
// bytes (in their byte-level form), with no merges, followed by Qwen3's 26
// added tokens in Qwen3's order (<|endoftext|> = 256, <|im_start|> = 257,
// <|im_end|> = 258, ..., <tool_call> = 270, </tool_call> = 271, ...), 282 ids
// in all. It normalizes and pre-tokenizes as Qwen3 does, so the chat template
// and the tool protocol work unchanged.
func NewBytes() *Tokenizer {
	vocab := make(map[string]int, 256)
	for b := 0; b < 256; b++ {
		vocab[string(byteToRune[b])] = b
	}
	added := make([]AddedToken, len(qwenAddedTokens))
	for i, a := range qwenAddedTokens {
		added[i] = AddedToken{ID: 256 + i, Content: a.content, Special: a.special}
	}
	t := &Tokenizer{nfc: true}
	if err := t.build(vocab, nil, added); err != nil {
		panic("tokenizer: NewBytes: " + err.Error()) // the tables above are fixed
	}
	return t
}

// Save writes the tokenizer as a Hugging Face tokenizer.json, atomically.
func (t *Tokenizer) Save(path string) error {
	return atomicfile.Write(path, t.WriteJSON)
}

// WriteJSON writes the tokenizer as a Hugging Face tokenizer.json.
func (t *Tokenizer) WriteJSON(w io.Writer) error {
	var b bytes.Buffer
	str := func(s string) {
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		enc.Encode(s)
		b.Truncate(b.Len() - 1) // Encode's newline
	}
	b.WriteString("{\n  \"version\": \"1.0\",\n  \"truncation\": null,\n  \"padding\": null,\n  \"added_tokens\": [")
	for i, a := range t.added {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "\n    {\"id\": %d, \"content\": ", a.ID)
		str(a.Content)
		fmt.Fprintf(&b, ", \"single_word\": false, \"lstrip\": false, \"rstrip\": false, \"normalized\": %v, \"special\": %v}",
			a.Normalized, a.Special)
	}
	b.WriteString("\n  ],\n")
	if t.nfc {
		b.WriteString("  \"normalizer\": {\"type\": \"NFC\"},\n")
	} else {
		b.WriteString("  \"normalizer\": null,\n")
	}
	b.WriteString("  \"pre_tokenizer\": {\"type\": \"Sequence\", \"pretokenizers\": [{\"type\": \"Split\", \"pattern\": {\"Regex\": ")
	str(qwenSplitPattern)
	b.WriteString("}, \"behavior\": \"Isolated\", \"invert\": false}, " +
		"{\"type\": \"ByteLevel\", \"add_prefix_space\": false, \"trim_offsets\": false, \"use_regex\": false}]},\n")
	b.WriteString("  \"post_processor\": {\"type\": \"ByteLevel\", \"add_prefix_space\": false, \"trim_offsets\": false, \"use_regex\": false},\n")
	b.WriteString("  \"decoder\": {\"type\": \"ByteLevel\", \"add_prefix_space\": false, \"trim_offsets\": false, \"use_regex\": false},\n")
	fmt.Fprintf(&b, "  \"model\": {\"type\": \"BPE\", \"dropout\": null, \"unk_token\": null, \"continuing_subword_prefix\": \"\", "+
		"\"end_of_word_suffix\": \"\", \"fuse_unk\": false, \"byte_fallback\": false, \"ignore_merges\": %v,\n    \"vocab\": {", t.ignoreMerges)
	first := true
	for id, tok := range t.vocab {
		if tok == "" {
			continue
		}
		if !first {
			b.WriteString(", ")
		}
		first = false
		str(tok)
		fmt.Fprintf(&b, ": %d", id)
	}
	b.WriteString("},\n    \"merges\": [")
	for i, m := range t.mergeList {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteByte('[')
		str(t.vocab[m[0]])
		b.WriteString(", ")
		str(t.vocab[m[1]])
		b.WriteByte(']')
	}
	b.WriteString("]\n  }\n}\n")
	_, err := w.Write(b.Bytes())
	return err
}
