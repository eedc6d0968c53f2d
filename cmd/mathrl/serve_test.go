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
	var got *serveOptions
	keep := func(_ context.Context, o *serveOptions) error { got = o; return nil }
	if _, _, err := execute(newServeCmd(keep), "", "--model", "m"); err != nil {
		t.Fatal(err)
	}
	if got.Model != "m" || got.Host != "127.0.0.1" || got.Port != 30000 || got.MaxBatch != 16 {
		t.Errorf("defaults: %+v; want model m on 127.0.0.1:30000, 16 a batch", got)
	}
	if _, _, err := execute(newServeCmd(keep), "", "--model", "m", "--host", "0.0.0.0", "--port", "8000", "--max-batch", "4"); err != nil ||
		got.Host != "0.0.0.0" || got.Port != 8000 || got.MaxBatch != 4 {
		t.Errorf("flags: %+v, %v", got, err)
	}
	if _, _, err := execute(newServeCmd(keep), ""); err == nil || !strings.Contains(err.Error(), `"model" not set`) {
		t.Errorf("without --model: %v", err)
	}
}

// TestServeCommandServes runs `mathrl serve` on a free loopback port, asks
// /health and /generate, and ends it through its context (as SIGTERM does).
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
	cmd.SetArgs([]string{"serve", "--model", dir, "--port", "0", "--backend", "cpu"})
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
	resp, err = http.Post(url+"/generate", "application/json", strings.NewReader(`{"input_ids": [1, 2], "sampling_params": {"max_new_tokens": 3}}`))
	if err != nil || resp.StatusCode != 200 {
		t.Errorf("/generate: %v %v", resp, err)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("serve ended with %v", err)
	}
}
