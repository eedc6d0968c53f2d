package main

import (
	"fmt"
	"runtime"

	"github.com/spf13/cobra"

	"github.com/mathrl/mathrl/internal/vcs"
)

// newVersionCmd is `mathrl version`: the commit the binary was built from, as
// a run's provenance.json records it.
func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the commit this binary was built from, and what says so",
		Long: `version prints the commit this binary was built from, as provenance.json records
it: the stamp of scripts/build.sh, else Go's own VCS stamp, else (labelled as
such) the HEAD of the git checkout in the current folder at run time, which need
not be the code that runs (go run, or a binary built with -buildvcs=false).`,
		Example: `  bash scripts/build.sh bin/mathrl && bin/mathrl version`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := fmt.Fprintf(cmd.OutOrStdout(), "mathrl %s; %s\n", vcs.Current(), runtime.Version())
			return err
		},
	}
}
