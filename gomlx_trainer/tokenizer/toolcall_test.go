package tokenizer

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

func TestParseToolCalls(t *testing.T) {
	for _, tc := range []struct {
		name string
		text string
		want []ToolCall // Start/End are checked separately
	}{
		{"none", "just text, no tools", nil},
		{"valid", "Let me check.\n<tool_call>\n{\"name\": \"code_interpreter\", \"arguments\": {\"code\": \"print(1+1)\"}}\n</tool_call>",
			[]ToolCall{{Name: "code_interpreter", Code: "print(1+1)"}}},
		{"string arguments", `<tool_call>{"name": "code_interpreter", "arguments": "{\"code\": \"x=1\"}"}</tool_call>`,
			[]ToolCall{{Name: "code_interpreter", Code: "x=1"}}},
		{"two calls", "<tool_call>\n{\"name\": \"code_interpreter\", \"arguments\": {\"code\": \"a\"}}\n</tool_call>\n<tool_call>\n{\"name\": \"code_interpreter\", \"arguments\": {\"code\": \"b\"}}\n</tool_call>",
			[]ToolCall{{Name: "code_interpreter", Code: "a"}, {Name: "code_interpreter", Code: "b"}}},
		{"unclosed", "<tool_call>\n{\"name\": \"code_interpreter\", \"arguments\": {\"code\": \"print(1)\"}}",
			[]ToolCall{{ErrKind: ErrUnclosed}}},
		{"invalid json", "<tool_call>\n{\"name\": \"code_interpreter\", \"arguments\": {\"code\": print(1)}}\n</tool_call>",
			[]ToolCall{{ErrKind: ErrInvalidJSON}}},
		{"two objects", "<tool_call>{\"name\": \"code_interpreter\"} {}</tool_call>", []ToolCall{{ErrKind: ErrInvalidJSON}}},
		{"not an object", "<tool_call>[1, 2]</tool_call>", []ToolCall{{ErrKind: ErrInvalidJSON}}},
		{"empty", "<tool_call></tool_call>", []ToolCall{{ErrKind: ErrInvalidJSON}}},
		{"unknown tool", `<tool_call>{"name": "python", "arguments": {"code": "1"}}</tool_call>`,
			[]ToolCall{{Name: "python", ErrKind: ErrUnknownTool}}},
		{"no name", `<tool_call>{"arguments": {"code": "1"}}</tool_call>`, []ToolCall{{ErrKind: ErrUnknownTool}}},
		{"name not a string", `<tool_call>{"name": 7, "arguments": {"code": "1"}}</tool_call>`, []ToolCall{{ErrKind: ErrUnknownTool}}},
		{"no arguments", `<tool_call>{"name": "code_interpreter"}</tool_call>`,
			[]ToolCall{{Name: "code_interpreter", ErrKind: ErrInvalidArguments}}},
		{"arguments a list", `<tool_call>{"name": "code_interpreter", "arguments": ["print(1)"]}</tool_call>`,
			[]ToolCall{{Name: "code_interpreter", ErrKind: ErrInvalidArguments}}},
		{"missing code", `<tool_call>{"name": "code_interpreter", "arguments": {"script": "print(1)"}}</tool_call>`,
			[]ToolCall{{Name: "code_interpreter", ErrKind: ErrMissingCode}}},
		{"code not a string", `<tool_call>{"name": "code_interpreter", "arguments": {"code": ["print(1)"]}}</tool_call>`,
			[]ToolCall{{Name: "code_interpreter", ErrKind: ErrInvalidCode}}},
		{"code null", `<tool_call>{"name": "code_interpreter", "arguments": {"code": null}}</tool_call>`,
			[]ToolCall{{Name: "code_interpreter", ErrKind: ErrInvalidCode}}},
		{"valid then unclosed", `<tool_call>{"name": "code_interpreter", "arguments": {"code": "a"}}</tool_call> then <tool_call>{`,
			[]ToolCall{{Name: "code_interpreter", Code: "a"}, {ErrKind: ErrUnclosed}}},
		{"stray close", "</tool_call> text", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := ParseToolCalls(tc.text)
			if len(got) != len(tc.want) {
				t.Fatalf("ParseToolCalls(%q) = %+v, want %d calls", tc.text, got, len(tc.want))
			}
			for i, g := range got {
				w := tc.want[i]
				if g.Name != w.Name || g.Code != w.Code || g.ErrKind != w.ErrKind {
					t.Errorf("call %d = {Name %q Code %q ErrKind %q}, want {%q %q %q}", i, g.Name, g.Code, g.ErrKind, w.Name, w.Code, w.ErrKind)
				}
				if (g.ErrKind == "") != (g.Err == "") || g.OK() != (g.ErrKind == "") {
					t.Errorf("call %d: ErrKind %q with Err %q", i, g.ErrKind, g.Err)
				}
				if !strings.HasPrefix(tc.text[g.Start:], ToolCallStart) || (g.ErrKind != ErrUnclosed && !strings.HasSuffix(tc.text[:g.End], ToolCallEnd)) {
					t.Errorf("call %d: span [%d, %d) is not a block", i, g.Start, g.End)
				}
			}
		})
	}
}

// TestToolResponseIDsMatchTemplate checks the appended turn against the chat
// template: the rendered conversation up to the assistant's tool call, then
// the sampled text, then ToolResponseText, must be what the template renders
// for the whole conversation, and the ids of the parts must concatenate to the
// ids of the whole (so sampled ids never need re-encoding).
func TestToolResponseIDsMatchTemplate(t *testing.T) {
	tok, _ := qwen(t)
	for _, tk := range []*Tokenizer{tok, NewBytes()} {
		for _, tc := range []struct {
			content   string
			code      []string
			responses []string
		}{
			{"Let me compute this.", []string{"print(2**10)"}, []string{"1024"}},
			{"", []string{"import sympy\nprint(sympy.factorint(360))"}, []string{"{2: 3, 3: 2, 5: 1}\n"}},
			{"Two checks.", []string{"print(1)", "print('é 中文')"}, []string{"1", "é 中文\n\n"}},
			{"Error case", []string{"1/0"}, []string{"Traceback (most recent call last):\n  File \"<stdin>\", line 1\nZeroDivisionError: division by zero"}},
			{"", []string{"x"}, []string{""}},
		} {
			var calls []string
			sampled := tc.content
			for k, code := range tc.code {
				args, _ := json.Marshal(map[string]string{"code": code})
				calls = append(calls, fmt.Sprintf(`{"type": "function", "function": {"name": "code_interpreter", "arguments": %s}}`, args))
				if k > 0 || tc.content != "" {
					sampled += "\n"
				}
				// The model writes the call as the template renders it (json.dumps form).
				codeJSON, _ := json.Marshal(code)
				sampled += "<tool_call>\n{\"name\": \"code_interpreter\", \"arguments\": {\"code\": " + string(codeJSON) + "}}\n</tool_call>"
			}
			prefix := []Message{{Role: "system", Content: SystemPrompt}, {Role: "user", Content: "Compute."}}
			var full []Message
			if err := json.Unmarshal([]byte(fmt.Sprintf(`[{"role": "assistant", "content": %q, "tool_calls": [%s]}]`, tc.content, strings.Join(calls, ", "))), &full); err != nil {
				t.Fatal(err)
			}
			full = append(append([]Message{}, prefix...), full...)
			for _, r := range tc.responses {
				full = append(full, Message{Role: "tool", Content: r})
			}
			tools := []Tool{CodeInterpreterTool}
			promptText, err := RenderChat(prefix, tools, true)
			if err != nil {
				t.Fatal(err)
			}
			fullText, err := RenderChat(full, tools, true)
			if err != nil {
				t.Fatal(err)
			}
			if got := promptText + sampled + ToolResponseText(tc.responses); got != fullText {
				t.Errorf("prompt + sampled + ToolResponseText =\n%q\nwant the template's\n%q", got, fullText)
			}
			ids := append(append(tk.Encode(promptText), tk.Encode(sampled)...), tk.ToolResponseIDs(tc.responses)...)
			if want := tk.Encode(fullText); fmt.Sprint(ids) != fmt.Sprint(want) {
				t.Errorf("ids of the parts differ from the ids of the whole (vocab %d)", tk.VocabSize())
			}
			if s := tk.Special(); tk.ToolResponseIDs(tc.responses)[0] != s.IMEnd || tk.Encode(sampled)[len(tk.Encode(sampled))-1] != s.ToolCallEnd {
				t.Errorf("the turn must end with </tool_call> and the response start with <|im_end|>")
			}
		}
	}
}

func TestStopIDs(t *testing.T) {
	tok, _ := qwen(t)
	if got := fmt.Sprint(tok.StopIDs()); got != "[151658 151645 151643]" {
		t.Errorf("Qwen3 StopIDs() = %s, want [151658 151645 151643]", got)
	}
	if got := fmt.Sprint(NewBytes().StopIDs()); got != "[271 258 256]" {
		t.Errorf("NewBytes().StopIDs() = %s, want [271 258 256]", got)
	}
}
