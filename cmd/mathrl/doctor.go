package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/mathrl/mathrl/gomlx_trainer/backend"
	"github.com/mathrl/mathrl/gomlx_trainer/sandbox"
)

// doctorCheck writes one section of `mathrl doctor`'s report. It returns an error
// only when the section itself could not be produced; a missing capability is
// reported in the text, not as an error.
type doctorCheck struct {
	name string
	run  func(w io.Writer) error
}

// doctorChecks lists the sections of the report, one line each.
func doctorChecks() []doctorCheck {
	return []doctorCheck{
		{"GoMLX backend and PJRT plugin", backend.Report},
		{"sandbox: isolation of model-written Python on this machine", sandbox.WriteReport},
		// sections: one line each
	}
}

func newDoctorCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "doctor",
		Short: "Report what this machine offers mathrl: backends, PJRT plugin, sandbox isolation",
		Example: `  mathrl doctor
  MATHRL_PJRT_PLUGIN=/opt/xla_cuda_plugin.so mathrl doctor`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			w := cmd.OutOrStdout()
			for _, c := range doctorChecks() {
				fmt.Fprintf(w, "== %s\n", c.name)
				if err := c.run(w); err != nil {
					fmt.Fprintf(w, "error: %v\n", err)
				}
			}
			return nil
		},
	}
}
