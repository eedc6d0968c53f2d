package tokenizer

import (
	"bytes"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/mathrl/mathrl/internal/testenv"
)

// hfRef runs testdata/hfref.js (Hugging Face's tokenizers through npm) in the
// given mode on tokenizerPath, with input as JSON on stdin, and decodes its
// JSON output into out.
func hfRef(t testing.TB, mode, tokenizerPath string, input, out any, args ...string) {
	t.Helper()
	modules := testenv.NodeModules(t)
	in, err := json.Marshal(input)
	if err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(testenv.RepoRoot(t), "gomlx_trainer", "tokenizer", "testdata", "hfref.js")
	cmd := exec.Command("node", append([]string{script, mode, tokenizerPath}, args...)...)
	cmd.Env = append(cmd.Environ(), "NODE_PATH="+modules)
	cmd.Stdin = bytes.NewReader(in)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.Output()
	if err != nil {
		t.Fatalf("node hfref.js %s: %v\n%s", mode, err, stderr.String())
	}
	if err := json.Unmarshal(stdout, out); err != nil {
		t.Fatalf("node hfref.js %s: bad output: %v", mode, err)
	}
}

// qwen loads the real Qwen3 tokenizer.json once per test binary.
func qwen(t testing.TB) (*Tokenizer, string) {
	t.Helper()
	path := testenv.QwenTokenizer(t)
	qwenOnce.Do(func() { qwenTok, qwenErr = Load(path) })
	if qwenErr != nil {
		t.Fatal(qwenErr)
	}
	return qwenTok, path
}

var (
	qwenOnce sync.Once
	qwenTok  *Tokenizer
	qwenErr  error
)
