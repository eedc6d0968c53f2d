package tokenizer

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
)

// Protocol is the chat protocol of a rollout: how a problem becomes prompt
// ids, how sampled ids read as text, how a tool call is found in it and how the
// tool's answer goes back to the model. It implements the Protocol interface
// of package toolloop.
type Protocol struct {
	Tok          *Tokenizer
	SystemPrompt string // the system message; "" means SystemPrompt when the tool spec is offered, else none
	UseTools     bool   // the model may call code_interpreter
	OfferSpec    bool   // list the code_interpreter spec in the system turn (with UseTools)
}

// NewProtocol returns the protocol of tok, checking that tok has the special
// tokens it needs: <|im_start|> and <|im_end|>, and </tool_call> with tools.
func NewProtocol(tok *Tokenizer, systemPrompt string, useTools, offerSpec bool) (*Protocol, error) {
	sp := tok.Special()
	if sp.IMEnd < 0 || sp.IMStart < 0 || (useTools && sp.ToolCallEnd < 0) {
		return nil, errors.New("tokenizer: the vocabulary lacks <|im_start|>, <|im_end|> or </tool_call>")
	}
	return &Protocol{Tok: tok, SystemPrompt: systemPrompt, UseTools: useTools, OfferSpec: offerSpec}, nil
}

// Open returns the tokenizer named by spec, "bytes" (the byte-level
// vocabulary) or a tokenizer.json path, with its tokenizer.json bytes (which a
// checkpoint keeps beside its weights).
func Open(spec string) (*Tokenizer, []byte, error) {
	if spec == "bytes" {
		tok := NewBytes()
		var b bytes.Buffer
		if err := tok.WriteJSON(&b); err != nil {
			return nil, nil, fmt.Errorf("tokenizer: %w", err)
		}
		return tok, b.Bytes(), nil
	}
	data, err := os.ReadFile(spec)
	if err != nil {
		return nil, nil, fmt.Errorf("tokenizer: %w", err)
	}
	tok, err := Parse(data)
	if err != nil {
		return nil, nil, fmt.Errorf("tokenizer %s: %w", spec, err)
	}
	return tok, data, nil
}

// PromptIDs renders a problem as the chat prompt (the system turn, with the
// tool spec when offered; the user turn; the generation prompt) and encodes it.
func (p *Protocol) PromptIDs(problem string) ([]int, error) {
	var msgs []Message
	system := p.SystemPrompt
	if system == "" && p.UseTools && p.OfferSpec {
		system = SystemPrompt
	}
	if system != "" {
		msgs = append(msgs, Message{Role: "system", Content: system})
	}
	msgs = append(msgs, Message{Role: "user", Content: problem})
	var tools []Tool
	if p.UseTools && p.OfferSpec {
		tools = []Tool{CodeInterpreterTool}
	}
	ids, err := p.Tok.EncodeChat(msgs, tools, true)
	if err != nil {
		return nil, fmt.Errorf("tokenizer: prompt: %w", err)
	}
	return ids, nil
}

// Decode turns ids into text, special tokens kept.
func (p *Protocol) Decode(ids []int) string { return p.Tok.Decode(ids, false) }

// ParseToolCall returns the code of the last tool call in text, or the
// parser's message for a malformed one.
func (p *Protocol) ParseToolCall(text string) (string, error) {
	calls := ParseToolCalls(text)
	if len(calls) == 0 {
		return "", errors.New("no <tool_call> block found")
	}
	last := calls[len(calls)-1]
	if !last.OK() {
		return "", errors.New(last.Err)
	}
	return last.Code, nil
}

// ToolResponseIDs renders the tool-response turn that follows a call.
func (p *Protocol) ToolResponseIDs(response string) []int {
	return p.Tok.ToolResponseIDs([]string{response})
}

// ToolCallIDs returns the ids an assistant writes to call code_interpreter
// with code: the <tool_call> block as the chat template renders it.
func (p *Protocol) ToolCallIDs(code string) ([]int, error) {
	args, err := json.Marshal(map[string]string{"code": code})
	if err != nil {
		return nil, fmt.Errorf("tokenizer: tool call: %w", err)
	}
	block, err := RenderToolCall(FunctionCall{Name: CodeInterpreterName, Arguments: args})
	if err != nil {
		return nil, fmt.Errorf("tokenizer: tool call: %w", err)
	}
	return p.Tok.Encode(block), nil
}
