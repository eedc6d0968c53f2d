package sandbox

import (
	"errors"
	"os"
	"os/exec"
	"syscall"
	"testing"
)

// TestKillPipeHoldersSparesStartingPrograms checks what the rlimits level kills
// after a program: the processes that hold the write end of its output pipe,
// but not a child of mathrl that holds the read end. Such a child stands for a
// fork of mathrl caught before its exec (another worker's program being
// started), which holds every descriptor of mathrl until the exec closes the
// close-on-exec ones; killing it made a concurrent program end by SIGKILL
// before it ran.
func TestKillPipeHoldersSparesStartingPrograms(t *testing.T) {
	t.Parallel()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	start := func(end *os.File) *exec.Cmd {
		cmd := exec.Command("sleep", "300")
		cmd.ExtraFiles = []*os.File{end}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
		return cmd
	}
	starting := start(r) // holds the read end, as a fork of mathrl does before its exec
	leftover := start(w) // holds the write end, as the program's processes do
	w.Close()

	killPipeHolders(r)

	// SIGTERM both: a process that ends by SIGKILL had it from killPipeHolders.
	for _, tc := range []struct {
		name string
		cmd  *exec.Cmd
		want syscall.Signal
	}{
		{"the child holding the read end", starting, syscall.SIGTERM},
		{"the process holding the write end", leftover, syscall.SIGKILL},
	} {
		tc.cmd.Process.Signal(syscall.SIGTERM)
		if got := endSignal(tc.cmd.Wait()); got != tc.want {
			t.Errorf("%s ended by %v, want %v", tc.name, got, tc.want)
		}
	}
}

// endSignal is the signal that ended a process, given what Wait returned.
func endSignal(err error) syscall.Signal {
	var exit *exec.ExitError
	if !errors.As(err, &exit) {
		return 0
	}
	ws, _ := exit.Sys().(syscall.WaitStatus)
	return ws.Signal()
}
