package atomicfile

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

func TestWriteReplacesWhole(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "sub", "out.txt")
	if err := WriteFile(p, []byte("first")); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(p, []byte("second")); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(p)
	if err != nil || string(got) != "second" {
		t.Fatalf("ReadFile = %q, %v; want second", got, err)
	}
}

func TestFailedFillLeavesTargetAndNoTemp(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "out.txt")
	if err := WriteFile(p, []byte("old")); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	err := Write(p, func(w io.Writer) error {
		io.WriteString(w, "partial")
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("Write error = %v, want boom", err)
	}
	got, _ := os.ReadFile(p)
	if string(got) != "old" {
		t.Fatalf("target = %q after failed write, want old", got)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Fatalf("folder has %d entries after failed write, want only the target", len(entries))
	}
}

// TestWriteToANamedPipe writes through a named pipe, which must stay a pipe:
// a rename over it (the atomic path for regular files) would replace it, and
// over /dev/null would replace the device for every program on the machine.
func TestWriteToANamedPipe(t *testing.T) {
	p := filepath.Join(t.TempDir(), "pipe")
	if err := syscall.Mkfifo(p, 0o600); err != nil {
		t.Fatal(err)
	}
	got := make(chan string, 1)
	go func() {
		f, err := os.Open(p)
		if err != nil {
			got <- err.Error()
			return
		}
		defer f.Close()
		b, _ := io.ReadAll(f)
		got <- string(b)
	}()
	if err := WriteFile(p, []byte("through the pipe")); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Lstat(p)
	if err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		t.Fatalf("after the write: %v, %v; want the named pipe still there", fi.Mode(), err)
	}
	if s := <-got; s != "through the pipe" {
		t.Errorf("read %q from the pipe", s)
	}
	if left, _ := filepath.Glob(filepath.Join(filepath.Dir(p), ".pipe.tmp-*")); len(left) > 0 {
		t.Errorf("temporary files left: %v", left)
	}
}

// TestWriteToDevNull writes to /dev/null, which must stay the device.
func TestWriteToDevNull(t *testing.T) {
	fi, err := os.Stat("/dev/null")
	if err != nil || fi.Mode()&os.ModeCharDevice == 0 {
		t.Skipf("/dev/null is not a character device here: %v", err)
	}
	if err := WriteFile("/dev/null", []byte("nothing")); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat("/dev/null"); err != nil || fi.Mode()&os.ModeCharDevice == 0 {
		t.Fatalf("/dev/null after the write: %v, %v", fi.Mode(), err)
	}
}
