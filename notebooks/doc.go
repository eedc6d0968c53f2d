// Package notebooks runs the project's GoNB notebooks (the *.ipynb files in
// this folder) headless and checks what they did.
//
// Jupyter's nbconvert only fails on compile errors and timeouts: a Go panic,
// os.Exit(1) or a failing shell command in a cell still leaves nbconvert happy,
// because GoNB reports them as text on stderr ("exit status N"). Run therefore
// executes each notebook with errors allowed, reads the executed notebook, and
// fails naming the notebook and the cell on an error output, an "exit status
// N" or "panic:" line on stderr, or a code cell that printed nothing. It then
// renders each executed notebook to HTML and publishes both, replacing the
// previous ones only when every notebook passed.
//
// The notebooks themselves hold only glue: they call analysis/... and data,
// never the trainer, so they run without GoMLX or an accelerator.
package notebooks
