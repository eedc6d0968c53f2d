package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mathrl/mathrl/gomlx_trainer/sandbox"
)

func TestNewSandboxExecCmd(t *testing.T) {
	def := sandbox.Default()
	for _, tc := range []struct {
		args []string
		want sandboxExecOptions
		err  string
	}{
		{nil, sandboxExecOptions{In: "-", Config: sandbox.Config{Timeout: def.Timeout, CPUSeconds: def.CPUSeconds, Memory: def.Memory}}, ""},
		{[]string{"--in", "p.py", "--timeout", "2s", "--memory", "268435456", "--python", "/usr/bin/python3", "--isolation", "uid"},
			sandboxExecOptions{In: "p.py", Config: sandbox.Config{Timeout: 2 * time.Second, CPUSeconds: def.CPUSeconds, Memory: 268435456,
				Interpreter: "/usr/bin/python3", Isolation: sandbox.LevelUID}}, ""},
		{[]string{"--isolation", "chroot"}, sandboxExecOptions{}, "isolation"},
		{[]string{"--memory", "1000"}, sandboxExecOptions{}, "memory"},
	} {
		var got *sandboxExecOptions
		_, _, err := execute(newSandboxExecCmd(func(_ context.Context, o *sandboxExecOptions) error { got = o; return nil }), "", tc.args...)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("sandbox exec %q: err = %v, want %q", tc.args, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("sandbox exec %q: %v", tc.args, err)
		}
		got.Stdin, got.Out = nil, nil
		if *got != tc.want {
			t.Errorf("sandbox exec %q: options %+v, want %+v", tc.args, *got, tc.want)
		}
	}
}

// TestSandboxExecRun runs a program from a file through the command and reads its JSON.
func TestSandboxExecRun(t *testing.T) {
	prog := filepath.Join(t.TempDir(), "prog.py")
	if err := os.WriteFile(prog, []byte("import sys\nprint(6 * 7)\nsys.exit('<bad>')\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, _, err := execute(newSandboxExecCmd(nil), "", "--in", prog, "--timeout", "20s")
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		ToolResponse string `json:"tool_response"`
		ExitCode     int    `json:"exit_code"`
		Isolation    struct{ Level string }
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("%v in %s", err, out)
	}
	if got.ExitCode != 1 || got.ToolResponse != "42\n[stderr]\n<bad>\n[exit status 1]" || got.Isolation.Level == "" {
		t.Errorf("got %+v from\n%s", got, out)
	}
	if !strings.Contains(out, `"<bad>`) {
		t.Errorf("JSON escapes < and >:\n%s", out)
	}
}
