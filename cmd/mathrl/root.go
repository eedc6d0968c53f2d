package main

import "github.com/spf13/cobra"

// newRootCmd builds the whole command tree. Each subcommand is built by its own
// newXxxCmd function in its own file; add new ones to the list below.
func newRootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:   "mathrl",
		Short: "Reinforcement learning of LLMs on verifiable math",
		Long: `mathrl trains Qwen3 models with GRPO on verifiable math (optionally with a
Python code_interpreter tool), scores answers with slime's math scorers and
analyses the results.`,
		Example: `  mathrl train                                  # the CPU demo: tiny Qwen3, arithmetic, real tool calls
  mathrl scorers validate                       # slime's three scorers on every MATH/AIME label
  mathrl score --scorer math --in samples.jsonl # score responses against labels
  mathrl doctor                                 # what this machine offers (backends, sandbox)`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddCommand(
		newDoctorCmd(),
		newDataCmd(),
		newBudgetsCmd(nil),
		newNotebooksCmd(nil),
		newPlotCmd(nil),
		newScoreCmd(nil),
		newScorersCmd(),
		newTrainCmd(nil),
		newPlanCmd(nil),
		newEvalCmd(nil),
		newModelCmd(),
		newForwardCmd(nil),
		newGenerateCmd(nil),
		newBenchCmd(nil),
		newTokenizeCmd(nil),
		newChatCmd(),
		newTokenizerCmd(),
		newSandboxCmd(),
		newShowCmd(nil),
		newServeCmd(nil),
		newVersionCmd(),
	// subcommands: one line each
	)
	return root
}
