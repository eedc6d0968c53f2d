package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mathrl/mathrl/gomlx_trainer/tokenizer"
	"github.com/mathrl/mathrl/internal/jsonl"
)

func TestNewTokenizeCmd(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want tokenizer.TokenizeOptions
		err  string
	}{
		{[]string{"--tokenizer", "t.json"}, tokenizer.TokenizeOptions{Files: jsonl.Files{In: "-", Out: "-"}, Tokenizer: "t.json"}, ""},
		{[]string{"--tokenizer", "bytes", "--in", "a", "--out", "b", "--decode", "--skip-special"},
			tokenizer.TokenizeOptions{Files: jsonl.Files{In: "a", Out: "b"}, Tokenizer: "bytes", Decode: true, SkipSpecial: true}, ""},
		{nil, tokenizer.TokenizeOptions{}, "tokenizer"},
	} {
		var got *tokenizer.TokenizeOptions
		_, _, err := execute(newTokenizeCmd(func(_ context.Context, o *tokenizer.TokenizeOptions) error { got = o; return nil }), "", tc.args...)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("tokenize %q: err = %v, want %q", tc.args, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("tokenize %q: %v", tc.args, err)
		}
		got.Stdin, got.Stdout = nil, nil
		if *got != tc.want {
			t.Errorf("tokenize %q: options %+v, want %+v", tc.args, *got, tc.want)
		}
	}
}

// TestTokenizeAndChatCommands runs the three commands end to end on the byte
// vocabulary, through files and standard streams.
func TestTokenizeAndChatCommands(t *testing.T) {
	dir := t.TempDir()
	tokPath := filepath.Join(dir, "tok.json")
	run := func(stdin string, args ...string) (string, error) {
		out, _, err := runCLI(t, stdin, args...)
		return out, err
	}
	if _, err := run("", "tokenizer", "new", "--bytes", "--out", tokPath); err != nil {
		t.Fatal(err)
	}
	out, err := run(`{"k": 1, "text": "hi<|im_end|>"}`+"\n", "tokenize", "--tokenizer", tokPath)
	if err != nil || out != `{"k":1,"text":"hi<|im_end|>","ids":[104,105,258]}`+"\n" {
		t.Errorf("tokenize: %q, %v", out, err)
	}
	in := filepath.Join(dir, "ids.jsonl")
	os.WriteFile(in, []byte(`{"ids": [257, 104, 105, 258]}`+"\n"), 0o644)
	outPath := filepath.Join(dir, "text.jsonl")
	if _, err := run("", "tokenize", "--tokenizer", "bytes", "--decode", "--skip-special", "--in", in, "--out", outPath); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(outPath); string(b) != `{"ids":[257, 104, 105, 258],"text":"hi"}`+"\n" {
		t.Errorf("tokenize --decode wrote %q", b)
	}
	out, err = run(`{"messages": [{"role": "user", "content": "2+2?"}], "add_generation_prompt": true}`+"\n", "chat", "render", "--tokenizer", "bytes")
	want := `"rendered":"<|im_start|>user\n2+2?<|im_end|>\n<|im_start|>assistant\n","ids":[257,117,115,101,114,10,50,43,50,63,258,10,257,97,115,115,105,115,116,97,110,116,10]}`
	if err != nil || !strings.HasSuffix(out, want+"\n") {
		t.Errorf("chat render: %q, %v", out, err)
	}
	bad := filepath.Join(dir, "bad.jsonl")
	os.WriteFile(bad, []byte(`{"messages": [{"role": "user", "content": "ok"}]}`+"\n"+`{"messages": "nope"}`+"\n"), 0o644)
	badOut := filepath.Join(dir, "never.jsonl")
	if _, err := run("", "chat", "render", "--in", bad, "--out", badOut); err == nil || !strings.Contains(err.Error(), bad+`:2: field "messages"`) {
		t.Errorf("chat render on a bad line: err = %v, want file, line 2 and field", err)
	}
	if _, err := os.Stat(badOut); !os.IsNotExist(err) {
		t.Errorf("a failed run left %s behind", badOut)
	}
}
