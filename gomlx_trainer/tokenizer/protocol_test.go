package tokenizer

import (
	"slices"
	"testing"
)

// TestProtocolMatchesTemplate checks the protocol's pieces against the chat
// template's rendering of the whole conversation: the prompt, the assistant's
// tool call and the tool's response turn, in that order, are the template's
// text of system + user + assistant(tool call) + tool, plus the generation
// prompt.
func TestProtocolMatchesTemplate(t *testing.T) {
	p, err := NewProtocol(NewBytes(), "", true, true)
	if err != nil {
		t.Fatal(err)
	}
	const code = "x = 3\nprint(x*\"ab\")"
	prompt, err := p.PromptIDs("Compute 3*ab.")
	if err != nil {
		t.Fatal(err)
	}
	call, err := p.ToolCallIDs(code)
	if err != nil {
		t.Fatal(err)
	}
	got := p.Decode(slices.Concat(prompt, call, p.ToolResponseIDs("ababab\n")))
	want, err := RenderChat([]Message{
		{Role: "system", Content: SystemPrompt},
		{Role: "user", Content: "Compute 3*ab."},
		{Role: "assistant", ToolCalls: []MessageToolCall{{FunctionCall: FunctionCall{Name: CodeInterpreterName,
			Arguments: []byte(`{"code": "x = 3\nprint(x*\"ab\")"}`)}}}},
		{Role: "tool", Content: "ababab\n"},
	}, []Tool{CodeInterpreterTool}, true)
	if err != nil {
		t.Fatal(err)
	}
	// the assistant turn's <|im_end|>\n is the first part of the tool-response ids
	if got != want {
		t.Fatalf("protocol renders\n%q\ntemplate gives\n%q", got, want)
	}
	if code2, err := p.ParseToolCall(p.Decode(call)); err != nil || code2 != code {
		t.Errorf("ParseToolCall of the rendered call = %q, %v; want %q", code2, err, code)
	}
}

func TestProtocolWithoutToolsHasNoSpec(t *testing.T) {
	p, err := NewProtocol(NewBytes(), "Be brief.", false, true)
	if err != nil {
		t.Fatal(err)
	}
	ids, err := p.PromptIDs("1+1?")
	if err != nil {
		t.Fatal(err)
	}
	want := "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\n1+1?<|im_end|>\n<|im_start|>assistant\n"
	if got := p.Decode(ids); got != want {
		t.Errorf("prompt %q, want %q", got, want)
	}
}

func TestOpenNamesTheFile(t *testing.T) {
	if _, _, err := Open("no/such/tokenizer.json"); err == nil {
		t.Error("Open of a missing file: no error")
	}
	tok, data, err := Open("bytes")
	if err != nil || tok.VocabSize() < 256 || len(data) == 0 {
		t.Errorf("Open(bytes) = %d ids, %d bytes of JSON, %v", tok.VocabSize(), len(data), err)
	}
}
