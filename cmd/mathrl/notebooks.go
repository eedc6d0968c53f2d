package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/mathrl/mathrl/notebooks"
	"github.com/spf13/cobra"
)

// notebooksRunOptions are the flags of `mathrl notebooks run`.
type notebooksRunOptions struct {
	notebooks.Options
	Stdout io.Writer
}

func newNotebooksCmd(runF func(context.Context, *notebooksRunOptions) error) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "notebooks",
		Short:   "Work with the GoNB notebooks in notebooks/",
		Example: `  mathrl notebooks run budgets`,
		Args:    cobra.NoArgs,
	}
	opts := notebooksRunOptions{Options: notebooks.Options{Dir: "notebooks", Out: filepath.Join("results", "notebooks"),
		Jupyter: "/usr/bin/jupyter", Kernel: "gonb", Timeout: 10 * time.Minute}}
	run := &cobra.Command{
		Use:   "run [NAME...]",
		Short: "Execute every notebook headless, check each cell, publish executed notebooks and HTML",
		Long: `run executes the notebooks with Jupyter's nbconvert and the GoNB kernel (installed by
scripts/setup-notebooks.sh), then reads each executed notebook and fails, naming notebook and
cell, on a compile error, a runtime panic, a non-zero exit status or a code cell without output.
When all pass, the executed notebooks and their HTML renders replace those in --out.
Run it from the repository root; .cache/bin (where the setup script puts gonb and goimports)
is put first on PATH.`,
		Example: `  bash scripts/setup-notebooks.sh && mathrl notebooks run
  mathrl notebooks run budgets --out /tmp/nb`,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Only = args
			opts.Stdout = cmd.OutOrStdout()
			opts.Log = cmd.ErrOrStderr()
			if runF == nil {
				runF = runNotebooks
			}
			return runF(cmd.Context(), &opts)
		},
	}
	f := run.Flags()
	f.StringVar(&opts.Options.Out, "out", opts.Options.Out, "folder for the executed notebooks and HTML renders")
	f.StringVar(&opts.Dir, "dir", opts.Dir, "folder holding the notebooks")
	f.StringVar(&opts.Jupyter, "jupyter", opts.Jupyter, "jupyter command (Debian's, not a pyenv one)")
	f.DurationVar(&opts.Timeout, "timeout", opts.Timeout, "time limit per cell")
	cmd.AddCommand(run)
	return cmd
}

func runNotebooks(ctx context.Context, opts *notebooksRunOptions) error {
	if bin, err := filepath.Abs(filepath.Join(".cache", "bin")); err == nil {
		if _, err := os.Stat(bin); err == nil {
			opts.Path = append([]string{bin}, opts.Path...)
		}
	}
	results, err := notebooks.Run(ctx, opts.Options)
	if err != nil {
		return err
	}
	for _, r := range results {
		fmt.Fprintf(opts.Stdout, "%s: ok in %s -> %s, %s\n", r.Name, r.Took.Round(time.Second), r.Executed, r.HTML)
	}
	return nil
}
