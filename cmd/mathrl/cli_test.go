package main

import (
	"bytes"
	"context"
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
