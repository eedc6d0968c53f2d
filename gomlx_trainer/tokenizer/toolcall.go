package tokenizer

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// Tokens of the chat and tool protocol.
const (
	IMStart           = "<|im_start|>"
	IMEnd             = "<|im_end|>"
	EndOfText         = "<|endoftext|>"
	ToolCallStart     = "<tool_call>"
	ToolCallEnd       = "</tool_call>"
	ToolResponseStart = "<tool_response>"
	ToolResponseEnd   = "</tool_response>"
)

// CodeInterpreterName is the function name of CodeInterpreterTool.
const CodeInterpreterName = "code_interpreter"

// ToolCallErrKind says why a <tool_call> block could not be run. Each kind is
// counted in the metrics; the empty kind means the call is valid.
type ToolCallErrKind string

// The outcomes of a malformed <tool_call> block.
const (
	ErrUnclosed         ToolCallErrKind = "unclosed"          // <tool_call> without </tool_call>
	ErrInvalidJSON      ToolCallErrKind = "invalid_json"      // the block is not one JSON object
	ErrUnknownTool      ToolCallErrKind = "unknown_tool"      // "name" is missing or not code_interpreter
	ErrInvalidArguments ToolCallErrKind = "invalid_arguments" // "arguments" is missing or not an object
	ErrMissingCode      ToolCallErrKind = "missing_code"      // the arguments have no "code"
	ErrInvalidCode      ToolCallErrKind = "invalid_code"      // "code" is not a string
)

// ToolCall is one <tool_call> block found in generated text.
type ToolCall struct {
	// Name is the function name the block asked for ("" if none could be read).
	Name string
	// Code is the Python code to run (valid calls only).
	Code string
	// ErrKind is empty for a valid call; otherwise Err is the message to
	// return to the model as the tool's response instead of running anything.
	ErrKind ToolCallErrKind
	Err     string
	// Start and End locate the block in the text, tags included (End is
	// len(text) for an unclosed block).
	Start, End int
}

// OK reports whether the call is valid and its code can be run.
func (c ToolCall) OK() bool { return c.ErrKind == "" }

// ParseToolCalls returns the <tool_call>...</tool_call> blocks of generated
// text in order. The body of a block must be one JSON object
// {"name": "code_interpreter", "arguments": {"code": "..."}} (arguments may
// also be a JSON string holding that object). Any other block gives a
// ToolCall with an ErrKind and an Err message for the model; a <tool_call>
// never closed gives ErrUnclosed. Text outside blocks is ignored.
func ParseToolCalls(text string) []ToolCall {
	var calls []ToolCall
	for pos := 0; ; {
		i := strings.Index(text[pos:], ToolCallStart)
		if i < 0 {
			return calls
		}
		start := pos + i
		bodyStart := start + len(ToolCallStart)
		j := strings.Index(text[bodyStart:], ToolCallEnd)
		if j < 0 {
			return append(calls, ToolCall{Start: start, End: len(text), ErrKind: ErrUnclosed,
				Err: "Error: the tool call was not closed with </tool_call>, so it was not run."})
		}
		end := bodyStart + j + len(ToolCallEnd)
		c := parseToolCallBody(text[bodyStart : bodyStart+j])
		c.Start, c.End = start, end
		calls = append(calls, c)
		pos = end
	}
}

// parseToolCallBody reads the JSON between the tags.
func parseToolCallBody(body string) ToolCall {
	var call struct {
		Name      json.RawMessage `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	}
	dec := json.NewDecoder(strings.NewReader(body))
	if err := dec.Decode(&call); err != nil || dec.More() || !isObject(body) {
		return ToolCall{ErrKind: ErrInvalidJSON, Err: "Error: the tool call is not valid JSON; write " +
			`{"name": "code_interpreter", "arguments": {"code": "..."}} between <tool_call> and </tool_call>.`}
	}
	var name string
	if json.Unmarshal(call.Name, &name) != nil || name != CodeInterpreterName {
		shown := strings.TrimSpace(string(call.Name))
		if shown == "" {
			shown = "(none)"
		}
		return ToolCall{Name: name, ErrKind: ErrUnknownTool,
			Err: fmt.Sprintf("Error: unknown tool %s; the only tool is code_interpreter.", shown)}
	}
	args := call.Arguments
	var s string
	if isString(args) && json.Unmarshal(args, &s) == nil { // arguments given as a JSON string
		args = json.RawMessage(s)
	}
	var fields map[string]json.RawMessage
	if !isObject(string(args)) || json.Unmarshal(args, &fields) != nil {
		return ToolCall{Name: name, ErrKind: ErrInvalidArguments,
			Err: `Error: the tool call's "arguments" must be an object like {"code": "..."}.`}
	}
	code, ok := fields["code"]
	if !ok {
		return ToolCall{Name: name, ErrKind: ErrMissingCode,
			Err: `Error: the tool call's arguments have no "code" to run.`}
	}
	if !isString(code) || json.Unmarshal(code, &s) != nil {
		return ToolCall{Name: name, ErrKind: ErrInvalidCode,
			Err: `Error: the tool call's "code" must be a string of Python code.`}
	}
	return ToolCall{Name: name, Code: s}
}

// isString reports whether JSON text is a string.
func isString(raw json.RawMessage) bool {
	t := bytes.TrimSpace(raw)
	return len(t) > 0 && t[0] == '"'
}

// isObject reports whether JSON text starts with '{'.
func isObject(s string) bool {
	t := bytes.TrimSpace([]byte(s))
	return len(t) > 0 && t[0] == '{'
}

// SpecialIDs are the ids of the chat and tool protocol tokens, -1 where the
// tokenizer lacks one.
type SpecialIDs struct {
	IMStart, IMEnd, EndOfText                                      int
	ToolCallStart, ToolCallEnd, ToolResponseStart, ToolResponseEnd int
}

// Special returns the ids of the chat and tool protocol tokens.
func (t *Tokenizer) Special() SpecialIDs {
	id := func(s string) int {
		if a := t.addedByStr[s]; a != nil {
			return a.ID
		}
		return -1
	}
	return SpecialIDs{
		IMStart: id(IMStart), IMEnd: id(IMEnd), EndOfText: id(EndOfText),
		ToolCallStart: id(ToolCallStart), ToolCallEnd: id(ToolCallEnd),
		ToolResponseStart: id(ToolResponseStart), ToolResponseEnd: id(ToolResponseEnd),
	}
}

// StopIDs returns the ids that end a sampled assistant turn: </tool_call>
// (run the tool, then continue), <|im_end|> and <|endoftext|> (the answer is
// complete). Tokens the tokenizer lacks are left out.
func (t *Tokenizer) StopIDs() []int {
	var ids []int
	for _, s := range []string{ToolCallEnd, IMEnd, EndOfText} {
		if a := t.addedByStr[s]; a != nil {
			ids = append(ids, a.ID)
		}
	}
	return ids
}

// ToolResponseText is the text appended to a rollout after an assistant turn
// that stopped at </tool_call>: the end of that turn, a user turn holding one
// <tool_response> block per response, and the start of the next assistant
// turn, exactly as the chat template renders tool messages:
//
//	<|im_end|>\n<|im_start|>user\n<tool_response>\nR1\n</tool_response>\n<tool_response>\nR2\n</tool_response><|im_end|>\n<|im_start|>assistant\n
func ToolResponseText(responses []string) string {
	var b strings.Builder
	b.WriteString(IMEnd + "\n" + IMStart + "user")
	for _, r := range responses {
		b.WriteString("\n" + ToolResponseStart + "\n" + r + "\n" + ToolResponseEnd)
	}
	b.WriteString(IMEnd + "\n" + IMStart + "assistant\n")
	return b.String()
}

// ToolResponseIDs returns the token ids of ToolResponseText(responses), to
// append after the sampled ids of a turn that ended with </tool_call>; the
// sampled ids are kept as they are, never re-encoded. Since the text starts
// with the added token <|im_end|>, these ids are exactly what encoding the
// whole rendered conversation gives for this part. If the sampled turn
// already ended with <|im_end|>, drop the first id.
func (t *Tokenizer) ToolResponseIDs(responses []string) []int {
	return t.Encode(ToolResponseText(responses))
}
