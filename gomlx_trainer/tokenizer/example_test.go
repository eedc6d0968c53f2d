package tokenizer_test

import (
	"fmt"

	"github.com/mathrl/mathrl/gomlx_trainer/tokenizer"
)

func ExampleRenderChat() {
	text, err := tokenizer.RenderChat([]tokenizer.Message{
		{Role: "system", Content: "Be brief."},
		{Role: "user", Content: "What is 2+2?"},
	}, nil, true)
	if err != nil {
		panic(err)
	}
	fmt.Printf("%q\n", text)
	// Output:
	// "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nWhat is 2+2?<|im_end|>\n<|im_start|>assistant\n"
}

func ExampleParseToolCalls() {
	text := "Let me check.\n<tool_call>\n{\"name\": \"code_interpreter\", \"arguments\": {\"code\": \"print(2**10)\"}}\n</tool_call>"
	for _, c := range tokenizer.ParseToolCalls(text) {
		fmt.Printf("ok=%v code=%q\n", c.OK(), c.Code)
	}
	for _, c := range tokenizer.ParseToolCalls("<tool_call>\n{\"name\": \"code_interpreter\"}\n</tool_call>") {
		fmt.Printf("ok=%v kind=%s\n", c.OK(), c.ErrKind)
	}
	// Output:
	// ok=true code="print(2**10)"
	// ok=false kind=invalid_arguments
}

func ExampleNewBytes() {
	tok := tokenizer.NewBytes()
	ids := tok.Encode("<|im_start|>user\nhi<|im_end|>")
	fmt.Println(tok.VocabSize(), ids)
	fmt.Printf("%q\n", tok.Decode(ids, true))
	fmt.Println(tok.ToolResponseIDs([]string{"4"}))
	// Output:
	// 282 [257 117 115 101 114 10 104 105 258]
	// "user\nhi"
	// [258 10 257 117 115 101 114 10 278 10 52 10 279 258 10 257 97 115 115 105 115 116 97 110 116 10]
}

// A rollout's prompt: the seed's system prompt and tool, one problem, and the
// start of the assistant turn.
func ExampleTokenizer_EncodeChat() {
	tok := tokenizer.NewBytes()
	ids, err := tok.EncodeChat([]tokenizer.Message{
		{Role: "system", Content: tokenizer.SystemPrompt},
		{Role: "user", Content: "What is 2+2?"},
	}, []tokenizer.Tool{tokenizer.CodeInterpreterTool}, true)
	if err != nil {
		panic(err)
	}
	fmt.Println(ids[:2], ids[len(ids)-3:])
	// Output:
	// [257 115] [110 116 10]
}
