package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/mathrl/mathrl/gomlx_trainer/sandbox"
	"github.com/mathrl/mathrl/internal/jsonl"
)

// maxCodeBytes bounds the program read by `mathrl sandbox exec`.
const maxCodeBytes = 1 << 20

// sandboxExecOptions are the flags of `mathrl sandbox exec`.
type sandboxExecOptions struct {
	In     string         // file with the Python program, - for standard input
	Config sandbox.Config // interpreter, isolation level and limits
	Stdin  io.Reader
	Out    io.Writer
}

func newSandboxCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "sandbox",
		Short: "Run Python programs the way the code_interpreter tool does",
		Example: `  echo 'print(2**100)' | mathrl sandbox exec
  mathrl doctor   # which isolation this machine offers`,
		Args: cobra.NoArgs,
	}
	cmd.AddCommand(newSandboxExecCmd(nil))
	return cmd
}

func newSandboxExecCmd(runF func(context.Context, *sandboxExecOptions) error) *cobra.Command {
	def := sandbox.Default()
	opts := sandboxExecOptions{In: "-"}
	cmd := &cobra.Command{
		Use:   "exec",
		Short: "Run one Python program in the sandbox and print the result as JSON",
		Long: `Exec reads a Python program and runs it in the sandbox with the limits the
code_interpreter tool uses, then prints one JSON object: stdout, stderr, exit_code,
signal, timed_out, killed, limit, stdout_truncated, stderr_truncated, duration_s,
isolation (what contained the program on this machine), uid, limits and
tool_response (the text the model would see).

The program's own failure (an exception, a limit, a timeout) is reported in the JSON
and exits 0; mathrl exits 1 only when the sandbox itself cannot run.`,
		Example: `  echo 'import sympy; print(sympy.factorint(2**64-1))' | mathrl sandbox exec --python /usr/bin/python3
  mathrl sandbox exec --in prog.py --timeout 2s --memory 268435456
  mathrl sandbox exec --in prog.py --isolation uid`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := opts.Config.Validate(); err != nil {
				return err
			}
			opts.Stdin, opts.Out = cmd.InOrStdin(), cmd.OutOrStdout()
			if runF == nil {
				runF = runSandboxExec
			}
			return runF(cmd.Context(), &opts)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.In, "in", opts.In, "file with the Python program, - for standard input")
	f.DurationVar(&opts.Config.Timeout, "timeout", def.Timeout, "wall-clock limit; the program is killed after it")
	f.IntVar(&opts.Config.CPUSeconds, "cpu", def.CPUSeconds, "CPU seconds over all threads")
	f.Int64Var(&opts.Config.Memory, "memory", def.Memory, "address space limit in bytes")
	f.StringVar(&opts.Config.Interpreter, "python", "", "Python interpreter (default: python3 on PATH)")
	f.StringVar((*string)(&opts.Config.Isolation), "isolation", "", "namespaces, uid or rlimits (default: the strongest available)")
	return cmd
}

func runSandboxExec(ctx context.Context, opts *sandboxExecOptions) error {
	in, name, err := jsonl.OpenInput(opts.In, opts.Stdin)
	if err != nil {
		return err
	}
	defer in.Close()
	code, err := io.ReadAll(io.LimitReader(in, maxCodeBytes+1))
	if err != nil {
		return fmt.Errorf("sandbox exec: %s: %w", name, err)
	}
	if len(code) > maxCodeBytes {
		return fmt.Errorf("sandbox exec: %s: program longer than %d bytes", name, maxCodeBytes)
	}
	r, err := sandbox.RunOnce(ctx, opts.Config, string(code))
	if err != nil {
		return err
	}
	enc := json.NewEncoder(opts.Out)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(r)
}
