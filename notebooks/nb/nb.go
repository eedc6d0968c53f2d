package nb

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/janpfeifer/gonb/gonbui"
	"gonum.org/v1/plot"

	"github.com/mathrl/mathrl/analysis/plots"
	"github.com/mathrl/mathrl/data"
)

// Path joins elem to the repository root. The notebooks live in notebooks/,
// and GoNB runs each cell with $GONB_DIR set to the notebook's folder; outside
// GoNB the root is the parent of the working directory.
func Path(elem ...string) string {
	dir := os.Getenv("GONB_DIR")
	if dir == "" {
		dir = "."
	}
	return filepath.Join(append([]string{dir, ".."}, elem...)...)
}

// Must returns v, or panics with err: it stops the cell.
func Must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// Figure shows p inline as a PNG, or stops the cell on err. It takes a plots
// constructor's two results directly: nb.Figure(plots.PassAtK(series)).
func Figure(p *plot.Plot, err error) {
	PNG(plots.PNG(Must(p, err)))
}

// PNG shows a PNG image, or stops the cell on err: nb.PNG(os.ReadFile(path)).
func PNG(png []byte, err error) {
	gonbui.DisplayPng(Must(png, err))
	gonbui.Sync()
}

// Markdown shows s rendered as Markdown.
func Markdown(s string) {
	gonbui.DisplayMarkdown(s)
	gonbui.Sync()
}

// Table shows what write writes for v, rendered as Markdown:
// nb.Table(validation.WriteMarkdown, counts).
func Table[T any](write func(io.Writer, T) error, v T) {
	var b strings.Builder
	if err := write(&b, v); err != nil {
		panic(err)
	}
	Markdown(b.String())
}

// HTML shows an HTML fragment.
func HTML(s string) {
	gonbui.DisplayHtml(s)
	gonbui.Sync()
}

// Labels returns the labels of the named dataset (rows without a label left
// out), pulling the set into the data folder first when it is not there.
func Labels(set string) []string {
	var labels []string
	for _, r := range Dataset(set) {
		if r.Answer != nil {
			labels = append(labels, *r.Answer)
		}
	}
	return labels
}

// Dataset returns the rows of the named dataset, pulling the set into the data
// folder (data.DefaultDir) first when it is not there.
func Dataset(set string) []data.Row {
	dir := data.DefaultDir()
	rows, err := data.LoadSet(dir, set)
	if errors.Is(err, fs.ErrNotExist) {
		err = data.Pull(context.Background(), data.PullOptions{Dir: dir, Sets: []string{set}})
		if err == nil {
			rows, err = data.LoadSet(dir, set)
		}
	}
	return Must(rows, err)
}
