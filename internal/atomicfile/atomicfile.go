package atomicfile

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// File is a pending write. Write to it, then Commit; Abort (or a failed Commit)
// removes the temporary file and leaves the target untouched.
type File struct {
	*os.File
	target string
	done   bool
	direct bool // the target is not a regular file: written in place
}

// Create starts an atomic write of path, creating its folder if needed. A
// path that names something other than a regular file (a device such as
// /dev/null or /dev/stdout, a named pipe) is opened and written in place:
// there is no file to replace, and replacing the device would be wrong.
func Create(path string) (*File, error) {
	if fi, err := os.Stat(path); err == nil && !fi.Mode().IsRegular() && !fi.IsDir() {
		f, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err != nil {
			return nil, fmt.Errorf("atomicfile: %w", err)
		}
		return &File{File: f, target: path, direct: true}, nil
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("atomicfile: %w", err)
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return nil, fmt.Errorf("atomicfile: %w", err)
	}
	return &File{File: f, target: path}, nil
}

// Commit syncs, closes and renames the temporary file onto the target.
func (f *File) Commit() error {
	if f.done {
		return fmt.Errorf("atomicfile: %s: already committed or aborted", f.target)
	}
	f.done = true
	if f.direct {
		if err := f.Close(); err != nil {
			return fmt.Errorf("atomicfile: close %s: %w", f.target, err)
		}
		return nil
	}
	tmp := f.Name()
	if err := f.Sync(); err != nil {
		f.Close()
		os.Remove(tmp)
		return fmt.Errorf("atomicfile: sync %s: %w", f.target, err)
	}
	if err := f.Close(); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("atomicfile: close %s: %w", f.target, err)
	}
	if err := os.Chmod(tmp, 0o644); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("atomicfile: %w", err)
	}
	if err := os.Rename(tmp, f.target); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("atomicfile: %w", err)
	}
	return nil
}

// Abort discards the write. It is safe to call after Commit (it then does nothing),
// so `defer f.Abort()` right after Create is the usual pattern.
func (f *File) Abort() {
	if f.done {
		return
	}
	f.done = true
	f.Close()
	if !f.direct {
		os.Remove(f.Name())
	}
}

// WriteFile writes data to path atomically.
func WriteFile(path string, data []byte) error {
	return Write(path, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// Write creates path atomically with whatever fill writes; if fill fails, the target is untouched.
func Write(path string, fill func(w io.Writer) error) error {
	f, err := Create(path)
	if err != nil {
		return err
	}
	defer f.Abort()
	if err := fill(f); err != nil {
		return err
	}
	return f.Commit()
}
