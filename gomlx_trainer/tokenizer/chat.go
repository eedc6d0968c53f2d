package tokenizer

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/mathrl/mathrl/internal/pyjson"
)

// SystemPrompt is the system message of the seed recipes.
const SystemPrompt = "You are a helpful assistant that solves math problems step by step. You may call the " +
	"code_interpreter tool to execute Python code whenever it helps your reasoning; use complete scripts including any " +
	"imports. End your solution with the final answer in \\boxed{...}."

// CodeInterpreterTool is the tool specification offered to the model in the
// seed recipes: one function, code_interpreter, with one required string
// parameter, code.
var CodeInterpreterTool = Tool(`{"type": "function", "function": {"name": "code_interpreter", ` +
	`"description": "Execute a complete Python 3 script and return what it prints to standard output and standard error. ` +
	`Nothing persists between calls, so include all imports and definitions each time; print the values you need.", ` +
	`"parameters": {"type": "object", "properties": {"code": {"type": "string", ` +
	`"description": "The complete Python script to run."}}, "required": ["code"]}}}`)

// Tool is the JSON specification of one tool, kept as written so that it
// renders with its keys in their order (the template's tojson keeps insertion
// order).
type Tool json.RawMessage

// MarshalJSON returns the tool's JSON as written.
func (t Tool) MarshalJSON() ([]byte, error) {
	if len(t) == 0 {
		return []byte("null"), nil
	}
	return t, nil
}

// UnmarshalJSON keeps a copy of the tool's JSON.
func (t *Tool) UnmarshalJSON(b []byte) error {
	*t = append((*t)[:0], b...)
	return nil
}

// Message is one turn of a conversation, in the format of Hugging Face chat
// templates (and of the OpenAI API).
type Message struct {
	// Role is "system", "user", "assistant" or "tool"; the template drops other roles.
	Role string `json:"role"`
	// Content is the text of the turn.
	Content string `json:"content"`
	// ToolCalls are the calls an assistant turn made, rendered after Content.
	ToolCalls []MessageToolCall `json:"tool_calls,omitempty"`

	// contentNotText records that the JSON content was not a string (null, a
	// list of parts) or was missing: the template then renders "" in turns but
	// fails on a leading system message, as Jinja does.
	contentNotText bool
}

// MessageToolCall is one entry of an assistant message's tool_calls, either
// {"type": "function", "function": {"name": ..., "arguments": ...}} or
// {"name": ..., "arguments": ...}.
type MessageToolCall struct {
	// Function holds the name and arguments when the call wraps them.
	Function *FunctionCall `json:"function,omitempty"`
	FunctionCall
}

// FunctionCall is the name and arguments of a tool call. Arguments is JSON: a
// JSON string is rendered verbatim (its text), anything else as tojson.
type FunctionCall struct {
	Name      string          `json:"name,omitempty"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
}

// UnmarshalJSON reads a message; a content that is not a JSON string is
// recorded as such (see Message).
func (m *Message) UnmarshalJSON(b []byte) error {
	var raw struct {
		Role      json.RawMessage `json:"role"`
		Content   json.RawMessage `json:"content"`
		ToolCalls json.RawMessage `json:"tool_calls"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	*m = Message{}
	if !isString(raw.Role) || json.Unmarshal(raw.Role, &m.Role) != nil {
		return errors.New(`"role" must be a string`)
	}
	if isString(raw.Content) {
		if err := json.Unmarshal(raw.Content, &m.Content); err != nil {
			return err
		}
	} else {
		m.contentNotText = true // null, a list of parts, a number, or missing
	}
	if len(raw.ToolCalls) > 0 && !bytes.Equal(bytes.TrimSpace(raw.ToolCalls), []byte("null")) {
		var calls []json.RawMessage
		if err := json.Unmarshal(raw.ToolCalls, &calls); err != nil {
			return errors.New(`"tool_calls" must be a list`)
		}
		for i, c := range calls {
			tc, err := parseMessageToolCall(c)
			if err != nil {
				return fmt.Errorf("tool_calls[%d]: %w", i, err)
			}
			m.ToolCalls = append(m.ToolCalls, tc)
		}
	}
	return nil
}

// parseMessageToolCall reads one tool call. As in the template, a "function"
// field is used only when it is truthy (a non-empty object).
func parseMessageToolCall(b []byte) (MessageToolCall, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(b, &fields); err != nil {
		return MessageToolCall{}, errors.New("want an object")
	}
	var tc MessageToolCall
	inner := fields
	if f, ok := fields["function"]; ok && truthy(f) {
		if err := json.Unmarshal(f, &inner); err != nil {
			return tc, errors.New(`"function" must be an object`)
		}
		tc.Function = &FunctionCall{}
	}
	var fc FunctionCall
	if n, ok := inner["name"]; ok {
		if err := json.Unmarshal(n, &fc.Name); err != nil {
			return tc, errors.New(`"name" must be a string`)
		}
	}
	a, ok := inner["arguments"]
	if !ok {
		return tc, errors.New(`"arguments" is missing`)
	}
	fc.Arguments = a
	if tc.Function != nil {
		*tc.Function = fc
	} else {
		tc.FunctionCall = fc
	}
	return tc, nil
}

// truthy reports whether a JSON value is true in Jinja's sense.
func truthy(raw json.RawMessage) bool {
	switch t := string(bytes.TrimSpace(raw)); t {
	case "null", "false", "0", "0.0", `""`, "[]", "{}":
		return false
	default:
		if strings.HasPrefix(t, "{") || strings.HasPrefix(t, "[") {
			var v any
			if json.Unmarshal(raw, &v) == nil {
				switch x := v.(type) {
				case map[string]any:
					return len(x) > 0
				case []any:
					return len(x) > 0
				}
			}
		}
		return true
	}
}

// RenderChat renders a conversation with the chat template of
// Qwen3-4B-Instruct-2507 (no thinking), byte for byte as Hugging Face's
// apply_chat_template(messages, tools=tools, add_generation_prompt=...,
// tokenize=False) does. Tools, when given, go into the system turn; tool
// messages become <tool_response> blocks of a user turn. It fails where the
// template fails: no messages, a leading system message whose content is not
// text, or tool call arguments that are not JSON.
func RenderChat(msgs []Message, tools []Tool, addGenerationPrompt bool) (string, error) {
	if len(msgs) == 0 {
		return "", errors.New("tokenizer: chat template: no messages")
	}
	var b strings.Builder
	first := msgs[0]
	if first.Role == "system" && first.contentNotText {
		return "", errors.New("tokenizer: chat template: the system message's content must be a string")
	}
	if len(tools) > 0 {
		b.WriteString("<|im_start|>system\n")
		if first.Role == "system" {
			b.WriteString(first.Content + "\n\n")
		}
		b.WriteString("# Tools\n\nYou may call one or more functions to assist with the user query.\n\n" +
			"You are provided with function signatures within <tools></tools> XML tags:\n<tools>")
		for i, t := range tools {
			js, err := pyjson.Dumps(t)
			if err != nil {
				return "", fmt.Errorf("tokenizer: chat template: tools[%d]: %w", i, err)
			}
			b.WriteString("\n" + js)
		}
		b.WriteString("\n</tools>\n\nFor each function call, return a json object with function name and arguments " +
			"within <tool_call></tool_call> XML tags:\n<tool_call>\n{\"name\": <function-name>, \"arguments\": " +
			"<args-json-object>}\n</tool_call><|im_end|>\n")
	} else if first.Role == "system" {
		b.WriteString("<|im_start|>system\n" + first.Content + "<|im_end|>\n")
	}
	for i, m := range msgs {
		switch {
		case m.Role == "user" || (m.Role == "system" && i > 0):
			b.WriteString("<|im_start|>" + m.Role + "\n" + m.Content + "<|im_end|>\n")
		case m.Role == "assistant":
			b.WriteString("<|im_start|>assistant\n" + m.Content)
			for k, tc := range m.ToolCalls {
				if k > 0 || m.Content != "" {
					b.WriteString("\n")
				}
				fc := tc.FunctionCall
				if tc.Function != nil {
					fc = *tc.Function
				}
				block, err := RenderToolCall(fc)
				if err != nil {
					return "", fmt.Errorf("tokenizer: chat template: message %d: tool call %d: %w", i, k, err)
				}
				b.WriteString(block)
			}
			b.WriteString("<|im_end|>\n")
		case m.Role == "tool":
			if i == 0 || msgs[i-1].Role != "tool" {
				b.WriteString("<|im_start|>user")
			}
			b.WriteString("\n<tool_response>\n" + m.Content + "\n</tool_response>")
			if i == len(msgs)-1 || msgs[i+1].Role != "tool" {
				b.WriteString("<|im_end|>\n")
			}
		}
	}
	if addGenerationPrompt {
		b.WriteString("<|im_start|>assistant\n")
	}
	return b.String(), nil
}

// RenderToolCall renders one tool call as the template writes it inside an
// assistant turn: <tool_call>\n{"name": ..., "arguments": ...}\n</tool_call>.
// An assistant turn that holds only tool calls is these blocks joined by "\n".
func RenderToolCall(fc FunctionCall) (string, error) {
	args, err := renderArguments(fc.Arguments)
	if err != nil {
		return "", err
	}
	return ToolCallStart + "\n{\"name\": \"" + fc.Name + "\", \"arguments\": " + args + "}\n" + ToolCallEnd, nil
}

// renderArguments renders tool call arguments: a JSON string as its text,
// anything else through tojson.
func renderArguments(raw json.RawMessage) (string, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return "", errors.New("arguments are missing")
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, nil
	}
	return pyjson.Dumps(raw)
}

// EncodeChat renders a conversation with RenderChat and returns its token ids.
func (t *Tokenizer) EncodeChat(msgs []Message, tools []Tool, addGenerationPrompt bool) ([]int, error) {
	text, err := RenderChat(msgs, tools, addGenerationPrompt)
	if err != nil {
		return nil, err
	}
	return t.Encode(text), nil
}
