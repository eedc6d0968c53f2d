package tokenizer

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mathrl/mathrl/internal/testenv"
)

// chatCase is one conversation for the template test, as raw JSON so that
// Python receives exactly what Go parses.
type chatCase struct {
	Messages            json.RawMessage `json:"messages"`
	Tools               json.RawMessage `json:"tools,omitempty"`
	AddGenerationPrompt bool            `json:"add_generation_prompt"`
}

// referenceRender renders cases with the real template in Jinja2 (render_chat.py).
func referenceRender(t *testing.T, cases []chatCase) []struct{ Rendered, Error string } {
	t.Helper()
	py := testenv.DebianPython(t, "jinja2")
	in, err := json.Marshal(cases)
	if err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(testenv.RepoRoot(t), "gomlx_trainer", "tokenizer", "testdata", "render_chat.py")
	cmd := exec.Command(py, script)
	cmd.Stdin = bytes.NewReader(in)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("render_chat.py: %v\n%s", err, stderr.String())
	}
	var res []struct{ Rendered, Error string }
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatal(err)
	}
	return res
}

// renderCase parses a case as the chat command does and renders it.
func renderCase(c chatCase) (string, error) {
	var msgs []Message
	if err := json.Unmarshal(c.Messages, &msgs); err != nil {
		return "", err
	}
	var tools []Tool
	if len(c.Tools) > 0 && string(c.Tools) != "null" {
		if err := json.Unmarshal(c.Tools, &tools); err != nil {
			return "", err
		}
	}
	return RenderChat(msgs, tools, c.AddGenerationPrompt)
}

const weirdTool = `{"type": "function", "function": {"name": "weird", "description": "Quotes \" back\\slash \n newline \t tab <b>&amp;</b> \u2028 é 中文 😀 \u0001 \u007f", "parameters": {"type": "object", "properties": {"z": {"type": "number", "default": 1.0, "minimum": 1e-7, "maximum": 1e16, "big": 123456789012345678901234567890, "neg": -0.0, "exp": 2.5E+3, "tiny": 5e-324, "list": [1, 2.50, true, false, null, "s", [], {}]}, "a": {"type": "integer"}}, "required": ["z", "a"]}}}`

// handChats are conversations written to hit each branch of the template.
func handChats() []chatCase {
	ci := string(CodeInterpreterTool)
	call := `{"type": "function", "function": {"name": "code_interpreter", "arguments": {"code": "print(2**10)"}}}`
	var cases []chatCase
	add := func(msgs string, tools string, gen bool) {
		c := chatCase{Messages: json.RawMessage(msgs), AddGenerationPrompt: gen}
		if tools != "" {
			c.Tools = json.RawMessage(tools)
		}
		cases = append(cases, c)
	}
	for _, gen := range []bool{false, true} {
		for _, tools := range []string{"", "[]", "null", "[" + ci + "]", "[" + ci + ", " + weirdTool + "]", `["just a string", 3]`} {
			add(`[{"role": "user", "content": "What is 2+2?"}]`, tools, gen)
			add(`[{"role": "system", "content": "`+strings.ReplaceAll(SystemPrompt, `\`, `\\`)+`"}, {"role": "user", "content": "Solve x^2=4."}]`, tools, gen)
			add(`[{"role": "system", "content": ""}, {"role": "user", "content": ""}]`, tools, gen)
			add(`[{"role": "user", "content": "hi"}, {"role": "assistant", "content": "Let me compute.", "tool_calls": [`+call+`]}, {"role": "tool", "content": "1024"}]`, tools, gen)
			add(`[{"role": "system", "content": "null content follows"}, {"role": "user", "content": null}, {"role": "assistant", "content": null, "tool_calls": [`+call+`, `+call+`]}, {"role": "tool", "content": "a"}, {"role": "tool", "content": "b"}, {"role": "tool", "content": [{"type": "text", "text": "c"}]}, {"role": "assistant", "content": "done"}]`, tools, gen)
			add(`[{"role": "tool", "content": "tool first"}, {"role": "tool", "content": "again"}, {"role": "user", "content": "u"}, {"role": "tool", "content": "last"}]`, tools, gen)
			add(`[{"role": "user", "content": "x"}, {"role": "system", "content": "late system"}, {"role": "developer", "content": "dropped"}, {"role": "function", "content": "dropped"}, {"role": "assistant", "content": "<think>\nkept\n</think>\n\nanswer", "reasoning_content": "ignored"}]`, tools, gen)
			add(`[{"role": "system"}, {"role": "user", "content": "missing system content"}]`, tools, gen)
			add(`[{"role": "system", "content": null}, {"role": "user", "content": "null system content"}]`, tools, gen)
			add(`[{"role": "system", "content": [{"type": "text", "text": "list"}]}, {"role": "user", "content": "list system content"}]`, tools, gen)
			add(`[]`, tools, gen)
			add(`[{"role": "assistant", "content": "", "tool_calls": [{"name": "flat", "arguments": "{\"code\": \"x = 1\"}"}, {"function": {}, "name": "empty function", "arguments": {"k": [1, 1.5, -2, 1e-05, 0.0001]}}, {"type": "function", "function": {"name": "str args", "arguments": "not json at all"}}]}]`, tools, gen)
			add(`[{"role": "assistant", "content": "text", "tool_calls": []}, {"role": "assistant", "content": "text2", "tool_calls": null}]`, tools, gen)
			add(`[{"role": "user", "content": "Unicode: é 中文 😀 \u2028 \u0000 e\u0301 \"quoted\" \\ <|im_end|> <tool_call>"}, {"role": "assistant", "content": "  spaces  \n\n"}]`, tools, gen)
			add(`[{"role": "assistant", "content": "a", "tool_calls": [{"function": {"name": "n", "arguments": {"nested": {"b": {"c": [{"d": null}]}}, "html": "<&>", "uni": "\u00e9\ud83d\ude00"}}}]}]`, tools, gen)
			add(`[{"role": "assistant", "content": "a", "tool_calls": [{"function": {"name": "no args"}}]}]`, tools, gen)
		}
	}
	return cases
}

// randomChats builds seeded random conversations from the template's building blocks.
func randomChats(seed uint64, n int) []chatCase {
	rng := rand.New(rand.NewPCG(seed, 2))
	contents := []string{`"hello"`, `""`, `null`, `"multi\nline\n\n"`, `"$\\frac{1}{2}$"`, `"中文 😀"`, `"<tool_call>\n{}\n</tool_call>"`, `[{"type": "text", "text": "x"}]`, `"  "`}
	args := []string{`{"code": "print(1)"}`, `"{\"code\": \"print(2)\"}"`, `{}`, `{"code": "import math\nprint(math.pi)", "n": 3.0}`, `"raw"`, `[1, 2]`, `1e-07`}
	roles := []string{"system", "user", "assistant", "tool", "tool", "user", "assistant"}
	toolSets := []string{"", "[" + string(CodeInterpreterTool) + "]", "[" + weirdTool + "]", "[" + string(CodeInterpreterTool) + ", " + weirdTool + "]"}
	var cases []chatCase
	for range n {
		var msgs []string
		for k := range 1 + rng.IntN(8) {
			role := roles[rng.IntN(len(roles))]
			if k == 0 && rng.IntN(2) == 0 {
				role = "system"
			}
			content := contents[rng.IntN(len(contents))]
			if role == "system" && k == 0 {
				content = `"sys"`
			}
			m := fmt.Sprintf(`{"role": %q, "content": %s`, role, content)
			if role == "assistant" && rng.IntN(2) == 0 {
				var calls []string
				for range 1 + rng.IntN(3) {
					a := args[rng.IntN(len(args))]
					if rng.IntN(2) == 0 {
						calls = append(calls, `{"type": "function", "function": {"name": "code_interpreter", "arguments": `+a+`}}`)
					} else {
						calls = append(calls, `{"name": "code_interpreter", "arguments": `+a+`}`)
					}
				}
				m += `, "tool_calls": [` + strings.Join(calls, ", ") + `]`
			}
			msgs = append(msgs, m+"}")
		}
		c := chatCase{Messages: json.RawMessage("[" + strings.Join(msgs, ", ") + "]"), AddGenerationPrompt: rng.IntN(2) == 0}
		if ts := toolSets[rng.IntN(len(toolSets))]; ts != "" {
			c.Tools = json.RawMessage(ts)
		}
		cases = append(cases, c)
	}
	return cases
}

// TestRenderChatMatchesJinja renders hand-written and random conversations
// with RenderChat and with the real template in Jinja2, byte for byte.
func TestRenderChatMatchesJinja(t *testing.T) {
	cases := append(handChats(), randomChats(3, 400)...)
	want := referenceRender(t, cases)
	same, errs := 0, 0
	for i, c := range cases {
		got, err := renderCase(c)
		switch {
		case want[i].Error != "" && err != nil:
			same++
			errs++
		case want[i].Error != "":
			t.Errorf("case %d %s: rendered %q, want an error like %q", i, c.Messages, got, want[i].Error)
		case err != nil:
			t.Errorf("case %d %s: error %v, want %q", i, c.Messages, err, want[i].Rendered)
		case got != want[i].Rendered:
			t.Errorf("case %d %s tools %s:\n got %q\nwant %q", i, c.Messages, c.Tools, got, want[i].Rendered)
		default:
			same++
		}
	}
	t.Logf("%d of %d conversations render identically (%d are errors in both)", same, len(cases), errs)
}
