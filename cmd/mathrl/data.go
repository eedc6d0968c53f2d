package main

import (
	"context"
	"io"
	"strings"

	"github.com/mathrl/mathrl/data"
	"github.com/spf13/cobra"
)

// newDataCmd groups the dataset commands: pull and list.
func newDataCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "data",
		Short: "Fetch and inspect the datasets (MATH, MATH-500, AIME 2024/2025, DAPO-Math-17k)",
		Example: `  mathrl data pull
  mathrl data list`,
		Args: cobra.NoArgs,
	}
	cmd.AddCommand(newDataPullCmd(nil), newDataListCmd(nil))
	return cmd
}

// dataPullOptions are the flags of `mathrl data pull`.
type dataPullOptions struct {
	From string
	Dir  string
	Sets []string
	Out  io.Writer
}

func newDataPullCmd(runF func(context.Context, *dataPullOptions) error) *cobra.Command {
	var opts dataPullOptions
	cmd := &cobra.Command{
		Use:   "pull",
		Short: "Download and convert the datasets from their public origins, or copy them from a mirror, checking every sha256",
		Long: `Pull brings the dataset files into the data folder (--dir, else $MATHRL_DATA_DIR, else
mathrl/data under the user cache folder). Each file is checked against the sha256 committed in
mathrl (dapo_math_17k: the one recorded at its first download, see below) and written only
when it matches; files already present with the right checksum are skipped.

With --from (else $MATHRL_DATA_MIRROR) the files are taken as they are from a mirror: a folder
holding them, or an http(s) URL base to which the file names are appended. Without a mirror
each set is downloaded from its public origin, at a pinned commit, and converted to the
published file:

` + data.DefaultOrigins.Describe() + `
dapo_math_17k, the training set of the retool recipe (17,398 problems), is pulled only when
named (--set dapo_math_17k). Its publisher gives no checksum and mathrl pins none, and its
origin is read at revision ` + data.DAPORevision + `, not at a fixed commit. So its first download
records the sha256 of the converted file beside it (dapo_math_17k.jsonl.sha256 in the data
folder), and every later pull or check into that folder must match it: a file that differs
is refused with both checksums, and nothing is written. Delete the .sha256 file to accept a
new version; a new data folder starts a new record.`,
		Example: `  mathrl data pull
  mathrl data pull --set dapo_math_17k
  mathrl data pull --from /mnt/mirror/mathrl-data --dir ./data-cache
  MATHRL_DATA_MIRROR=/mnt/mirror/mathrl-data mathrl data pull --set math500 --set aime24`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts.Out = cmd.OutOrStdout()
			if runF == nil {
				runF = runDataPull
			}
			return runF(cmd.Context(), &opts)
		},
	}
	cmd.Flags().StringVar(&opts.From, "from", "", "mirror folder or http(s) URL base with the converted files (default $MATHRL_DATA_MIRROR, else the public origins)")
	cmd.Flags().StringVar(&opts.Dir, "dir", "", "destination folder (default $MATHRL_DATA_DIR, else the user cache folder)")
	cmd.Flags().StringArrayVar(&opts.Sets, "set", nil, "set to pull, repeatable: "+strings.Join(data.SetNames(), ", ")+" (default all but "+data.DAPOSet+")")
	return cmd
}

func runDataPull(ctx context.Context, opts *dataPullOptions) error {
	return data.Pull(ctx, data.PullOptions{From: opts.From, Dir: opts.Dir, Sets: opts.Sets, Progress: opts.Out})
}

// dataListOptions are the flags of `mathrl data list`.
type dataListOptions struct {
	Dir string
	Out io.Writer
}

func newDataListCmd(runF func(*dataListOptions) error) *cobra.Command {
	var opts dataListOptions
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the known datasets, their sizes, and whether the data folder holds them intact",
		Example: `  mathrl data list
  mathrl data list --dir ./data-cache`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts.Out = cmd.OutOrStdout()
			if runF == nil {
				runF = runDataList
			}
			return runF(&opts)
		},
	}
	cmd.Flags().StringVar(&opts.Dir, "dir", "", "data folder (default $MATHRL_DATA_DIR, else the user cache folder)")
	return cmd
}

func runDataList(opts *dataListOptions) error {
	dir := opts.Dir
	if dir == "" {
		dir = data.DefaultDir()
	}
	return data.List(opts.Out, dir)
}
