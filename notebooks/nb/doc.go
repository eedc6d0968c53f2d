// Package nb is the glue every notebook in notebooks/ imports, so that a cell
// reads as a sentence about the analysis rather than as set-up: where the
// repository is (Path), stopping a cell on an error (Must), showing a figure,
// an image, a Markdown table or an HTML fragment (Figure, PNG, Markdown,
// Table, HTML), and the datasets, pulled on first use (Labels, Dataset).
//
// It holds no analysis: figures come from analysis/plots, tables from the
// analysis packages. Errors panic, which GoNB reports as a failed cell and
// `mathrl notebooks run` as a failed notebook.
package nb
