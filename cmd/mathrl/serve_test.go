package main

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/mathrl/mathrl/gomlx_trainer/qwen3"
)

// TestServeFlags: the defaults listen on loopback, and --model is required.
func TestServeFlags(t *testing.T) {
	t.Setenv(apiKeyEnv, "")
	var got *serveOptions
	keep := func(_ context.Context, o *serveOptions) error { got = o; return nil }
	if _, _, err := execute(newServeCmd(keep), "", "--model", "m"); err != nil {
		t.Fatal(err)
	}
	if got.Model != "m" || got.Host != "127.0.0.1" || got.Port != 30000 || got.MaxBatch != 16 || got.PrefixCacheBytes != 1<<30 {
		t.Errorf("defaults: %+v; want model m on 127.0.0.1:30000, 16 a batch, a prompt cache of 1 GiB", got)
	}
	if _, _, err := execute(newServeCmd(keep), "", "--model", "m", "--host", "0.0.0.0", "--port", "8000", "--max-batch", "4",
		"--api-key", "k", "--weights-root", "w", "--prefix-cache-bytes", "0"); err != nil ||
		got.Host != "0.0.0.0" || got.Port != 8000 || got.MaxBatch != 4 || got.APIKey != "k" || got.WeightsRoot != "w" || got.PrefixCacheBytes != 0 {
		t.Errorf("flags: %+v, %v", got, err)
	}
	if _, _, err := execute(newServeCmd(keep), ""); err == nil || !strings.Contains(err.Error(), `"model" not set`) {
		t.Errorf("without --model: %v", err)
	}
}

// TestServeCommandServes runs `mathrl serve --api-key` on a free loopback
// port, asks /health and /generate (401 without the key, which the log never
// shows), has /update_weights_from_disk refuse a folder outside --weights-root,
// and ends it through its context (as SIGTERM does).
func TestServeCommandServes(t *testing.T) {
	cfg, err := qwen3.NamedConfig("tiny")
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "tiny")
	if err := qwen3.WriteRandom(cfg, dir, "F32", 1); err != nil {
		t.Fatal(err)
	}
	logR, logW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	cmd := newRootCmd()
	cmd.SetArgs([]string{"serve", "--model", dir, "--port", "0", "--backend", "cpu", "--api-key", "k3y-Zq", "--weights-root", t.TempDir()})
	cmd.SetErr(logW)
	done := make(chan error, 1)
	go func() {
		err := cmd.ExecuteContext(ctx)
		logW.Close()
		done <- err
	}()
	lines := bufio.NewScanner(logR)
	url := ""
	for url == "" && lines.Scan() {
		if strings.Contains(lines.Text(), "k3y-Zq") {
			t.Errorf("the log shows the API key: %s", lines.Text())
		}
		if m := regexp.MustCompile(`on (http://127\.0\.0\.1:\d+)`).FindStringSubmatch(lines.Text()); m != nil {
			url = m[1]
		}
	}
	go func() { _, _ = io.Copy(io.Discard, logR) }()
	if url == "" {
		t.Fatalf("no serving line; the command returned %v", <-done)
	}
	resp, err := http.Get(url + "/health")
	if err != nil || resp.StatusCode != 200 {
		t.Errorf("/health: %v %v", resp, err)
	}
	gen := `{"input_ids": [1, 2], "sampling_params": {"max_new_tokens": 3}}`
	resp, err = http.Post(url+"/generate", "application/json", strings.NewReader(gen))
	if err != nil || resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("/generate without the API key: %v %v, want 401", resp, err)
	}
	req, _ := http.NewRequest("POST", url+"/generate", strings.NewReader(gen))
	req.Header.Set("Authorization", "Bearer k3y-Zq")
	resp, err = http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != 200 {
		t.Errorf("/generate: %v %v", resp, err)
	}
	// --weights-root reaches the server: the model's own folder lies outside it.
	req, _ = http.NewRequest("POST", url+"/update_weights_from_disk", strings.NewReader(`{"model_path": "`+dir+`", "weight_version": "2"}`))
	req.Header.Set("Authorization", "Bearer k3y-Zq")
	if resp, err = http.DefaultClient.Do(req); err != nil {
		t.Errorf("/update_weights_from_disk: %v", err)
	} else {
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(body), "outside the weights root") {
			t.Errorf("/update_weights_from_disk from outside --weights-root: %d %s, want 400", resp.StatusCode, body)
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("serve ended with %v", err)
	}
}

// TestServeExposure: on a --host other than loopback, serve wants an API key
// (--api-key or $MATHRL_ROLLOUT_API_KEY) unless --allow-unauthenticated, which
// it warns of loudly, and a --weights-root either way; on loopback neither.
func TestServeExposure(t *testing.T) {
	t.Setenv(apiKeyEnv, "")
	var got *serveOptions
	keep := func(_ context.Context, o *serveOptions) error { got = o; return nil }
	root := t.TempDir()
	for _, c := range []struct {
		args      []string
		err, warn string
	}{
		{[]string{"--host", "0.0.0.0"}, "set --api-key (or $MATHRL_ROLLOUT_API_KEY), or pass --allow-unauthenticated", ""},
		{[]string{"--host", "10.1.2.3", "--weights-root", root}, "set --api-key", ""},
		{[]string{"--host", "", "--weights-root", root}, "set --api-key", ""},
		{[]string{"--host", "0.0.0.0", "--api-key", "k"}, "set --weights-root", ""},
		{[]string{"--host", "0.0.0.0", "--allow-unauthenticated"}, "set --weights-root", ""},
		{[]string{"--host", "0.0.0.0", "--api-key", "k", "--weights-root", root}, "", ""},
		{[]string{"--host", "0.0.0.0", "--allow-unauthenticated", "--weights-root", root}, "", "WARNING: --allow-unauthenticated: serving \"0.0.0.0\" WITHOUT AN API KEY"},
		{[]string{"--host", "localhost"}, "", ""},
		{[]string{"--host", "::1", "--allow-unauthenticated"}, "", ""},
	} {
		got = nil
		_, stderr, err := execute(newServeCmd(keep), "", append([]string{"--model", "m"}, c.args...)...)
		switch {
		case c.err == "" && err != nil, c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%q: %v, want an error saying %q", c.args, err, c.err)
		case c.err != "" && got != nil:
			t.Errorf("%q: served despite the error", c.args)
		case err == nil && (c.warn == "" && stderr != "" || c.warn != "" && !strings.Contains(stderr, c.warn)):
			t.Errorf("%q printed %q, want %q", c.args, stderr, c.warn)
		}
	}
	t.Setenv(apiKeyEnv, "from-env")
	if _, stderr, err := execute(newServeCmd(keep), "", "--model", "m", "--host", "0.0.0.0", "--weights-root", root); err != nil ||
		got.APIKey != "from-env" || got.WeightsRoot != root || stderr != "" {
		t.Errorf("with $%s: %v, key %q, printed %q", apiKeyEnv, err, got.APIKey, stderr)
	}
	if _, _, err := execute(newServeCmd(keep), "", "--model", "m", "--api-key", "flag"); err != nil || got.APIKey != "flag" {
		t.Errorf("--api-key over $%s: %v, key %q", apiKeyEnv, err, got.APIKey)
	}
}
