package grpo

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mathrl/mathrl/data/arith"
	"github.com/mathrl/mathrl/gomlx_trainer/tokenizer"
)

// TestTraceSequenceIsTheTemplate checks that a warm-start trace, built piece by
// piece as a rollout builds it (prompt, sampled call, appended tool turn,
// sampled answer), is the chat template's rendering of the whole conversation,
// and that the mask is 1 exactly on the assistant's own text.
func TestTraceSequenceIsTheTemplate(t *testing.T) {
	cfg := Default()
	cfg.Tokenizer, cfg.UseTools, cfg.OfferToolSpec = "bytes", true, true
	chat, _, err := newProtocol(cfg, 300)
	if err != nil {
		t.Fatal(err)
	}
	tr := arith.WarmStart(arith.New("*", 4821, 37))
	if tr.Code == "" {
		t.Fatal("trace without a tool call")
	}
	seq, err := traceSequence(chat, tr, "178377\n")
	if err != nil {
		t.Fatal(err)
	}
	args := []byte(`{"code": "` + tr.Code + `"}`)
	full, err := tokenizer.RenderChat([]tokenizer.Message{
		{Role: "system", Content: tokenizer.SystemPrompt},
		{Role: "user", Content: tr.Problem},
		{Role: "assistant", ToolCalls: []tokenizer.MessageToolCall{{FunctionCall: tokenizer.FunctionCall{Name: "code_interpreter", Arguments: args}}}},
		{Role: "tool", Content: "178377\n"},
		{Role: "assistant", Content: tr.Final},
	}, []tokenizer.Tool{tokenizer.CodeInterpreterTool}, false)
	if err != nil {
		t.Fatal(err)
	}
	got := chat.Decode(append(slices.Clone(seq.Prompt), seq.Response...)) + "\n"
	if got != full {
		t.Fatalf("trace renders as\n%q\ntemplate gives\n%q", got, full)
	}
	var own string
	for i, id := range seq.Response {
		if seq.Mask[i] == 1 {
			own += chat.Decode([]int{id})
		}
	}
	want := `<tool_call>` + "\n" + `{"name": "code_interpreter", "arguments": {"code": "print(4821*37)"}}` + "\n" + `</tool_call>\boxed{178377}<|im_end|>`
	if own != want {
		t.Errorf("tokens with mask 1:\n%q\nwant\n%q", own, want)
	}
}

// TestToolRunnerReportsNoOutput runs programs in the real sandbox: a clean
// program that prints nothing is flagged NoOutput, one that prints or fails
// is not.
func TestToolRunnerReportsNoOutput(t *testing.T) {
	cfg := Default()
	runner, closeRunner, _, err := newToolRunner(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer closeRunner()
	for _, tc := range []struct {
		code             string
		noOutput, failed bool
	}{
		{"7*8", true, false},
		{"print(7*8)", false, false},
		{"import sys; sys.exit(3)", false, true},
		{"import sys; sys.stderr.write('x')", false, false},
	} {
		out, err := runner.Run(context.Background(), tc.code)
		if err != nil {
			t.Fatalf("%s: %v", tc.code, err)
		}
		if out.NoOutput != tc.noOutput || out.Failed != tc.failed {
			t.Errorf("%s: no output %v, failed %v (response %q); want %v, %v", tc.code, out.NoOutput, out.Failed, out.Text, tc.noOutput, tc.failed)
		}
	}
}

// TestNewPolicyNamesAMissingRelativeFolder checks newPolicy's hf_checkpoint:
// an existing relative folder loads, a missing relative one is named with the
// working directory it was looked for in, and a missing absolute one is left
// to the loader's own error.
func TestNewPolicyNamesAMissingRelativeFolder(t *testing.T) {
	cfg := demoRecipe(t)
	if cfg.TinyModel != "" || filepath.IsAbs(cfg.HFCheckpoint) {
		t.Fatalf("the demo recipe no longer names a relative checkpoint: tiny_model %q, hf_checkpoint %q", cfg.TinyModel, cfg.HFCheckpoint)
	}
	if _, err := newPolicy(cfg); err != nil {
		t.Fatalf("%s: %v", cfg.HFCheckpoint, err)
	}
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	cfg.HFCheckpoint = filepath.Join("configs", "no-such-base")
	_, err = newPolicy(cfg)
	if err == nil || !strings.Contains(err.Error(), `"`+cfg.HFCheckpoint+`": no such folder in `+wd) {
		t.Errorf("missing relative folder: error %v, want one naming it and %s", err, wd)
	}
	cfg.HFCheckpoint = filepath.Join(t.TempDir(), "no-such-base")
	_, err = newPolicy(cfg)
	if err == nil || strings.Contains(err.Error(), "no such folder in") {
		t.Errorf("missing absolute folder: error %v, want the loader's", err)
	}
}
