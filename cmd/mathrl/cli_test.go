package main

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// execute runs cmd with args, reading stdin as its standard input, and returns
// what it wrote to its standard output and standard error.
func execute(cmd *cobra.Command, stdin string, args ...string) (stdout, stderr string, err error) {
	var out, errOut bytes.Buffer
	cmd.SetArgs(args)
	cmd.SetIn(strings.NewReader(stdin))
	cmd.SetOut(&out)
	cmd.SetErr(&errOut)
	err = cmd.ExecuteContext(context.Background())
	return out.String(), errOut.String(), err
}

// runCLI runs the whole mathrl command tree, as `mathrl args...` with stdin as
// its standard input.
func runCLI(t *testing.T, stdin string, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	return execute(newRootCmd(), stdin, args...)
}

// mustRunCLI is runCLI with no input; an error fails the test at once.
func mustRunCLI(t *testing.T, args ...string) (stdout string) {
	t.Helper()
	stdout, stderr, err := runCLI(t, "", args...)
	if err != nil {
		t.Fatalf("mathrl %s: %v\n%s", strings.Join(args, " "), err, stderr)
	}
	return stdout
}

// TestBackendFlagsAgree checks that every command with --backend defines it and
// --pjrt-plugin alike: the same help, the same default.
func TestBackendFlagsAgree(t *testing.T) {
	var with []string
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if f := c.Flags().Lookup("backend"); f != nil {
			with = append(with, c.CommandPath())
			p := c.Flags().Lookup("pjrt-plugin")
			if f.Usage != knobHelp("backend") || f.DefValue != "auto" || p == nil || p.Usage != pjrtPluginFlagHelp || p.DefValue != "" {
				t.Errorf("%s: --backend %q (default %q), --pjrt-plugin %v", c.CommandPath(), f.Usage, f.DefValue, p)
			}
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(newRootCmd())
	for _, want := range []string{"mathrl train", "mathrl eval", "mathrl generate"} {
		if !slices.Contains(with, want) {
			t.Errorf("%s has no --backend (commands with one: %v)", want, with)
		}
	}
}
