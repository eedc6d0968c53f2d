package jsonl

import (
	"bufio"
	"errors"
	"io"
	"os"

	"github.com/mathrl/mathrl/internal/atomicfile"
)

// Files names the input and output of a command that reads JSON Lines and
// writes JSON Lines: each a path, or "-" (or "") for Stdin or Stdout, which the
// command passes in (cobra's cmd.InOrStdin() and cmd.OutOrStdout()).
type Files struct {
	In, Out string
	Stdin   io.Reader // read when In is "-" or ""
	Stdout  io.Writer // written when Out is "-" or ""
}

// Run opens f.In (see OpenInput), calls fn with the input, its name for error
// messages and the output (see WriteOutput), and closes the input.
func (f Files) Run(fn func(r io.Reader, name string, w io.Writer) error) error {
	r, name, err := OpenInput(f.In, f.Stdin)
	if err != nil {
		return err
	}
	defer r.Close()
	return WriteOutput(f.Out, f.Stdout, func(w io.Writer) error { return fn(r, name, w) })
}

// isStd reports whether path stands for a standard stream.
func isStd(path string) bool { return path == "" || path == "-" }

// OpenInput opens the file path, or returns stdin when path is "-" or "".
// name is what error messages call the input: path, or "-" for stdin. Closing
// the returned reader closes the file; it never closes stdin.
func OpenInput(path string, stdin io.Reader) (r io.ReadCloser, name string, err error) {
	if isStd(path) {
		if stdin == nil {
			return nil, "-", errors.New("jsonl: no standard input to read")
		}
		return io.NopCloser(stdin), "-", nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, path, err
	}
	return f, path, nil
}

// WriteOutput calls fill with a buffered writer onto the file path, or onto
// stdout when path is "-" or "". A file is written atomically: into a temporary
// file renamed onto path once fill and the flush succeed, so that a failed run
// leaves no file behind and an existing one untouched. On stdout, what fill
// wrote before failing is flushed, since it cannot be taken back.
func WriteOutput(path string, stdout io.Writer, fill func(w io.Writer) error) error {
	if isStd(path) {
		if stdout == nil {
			return errors.New("jsonl: no standard output to write")
		}
		return fillBuffered(stdout, fill)
	}
	return atomicfile.Write(path, func(w io.Writer) error { return fillBuffered(w, fill) })
}

// fillBuffered runs fill on a buffer over w and flushes it, even when fill fails.
func fillBuffered(w io.Writer, fill func(w io.Writer) error) error {
	bw := bufio.NewWriterSize(w, 1<<16)
	err := fill(bw)
	if ferr := bw.Flush(); err == nil {
		err = ferr
	}
	return err
}
