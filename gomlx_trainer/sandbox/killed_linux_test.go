package sandbox_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/mathrl/mathrl/gomlx_trainer/sandbox"
)

// killedEnv marks the copy of this test binary that TestKilledCaller kills
// while its program runs.
const killedEnv = "MATHRL_SANDBOX_TEST_KILLED"

// TestKilledCaller kills (SIGKILL) a copy of this test binary while its pool
// runs a program, as when the trainer dies during a tool call, and checks
// that the program dies with it, and that the next pool made on the machine
// removes what the dead process could not: the run's temporary folder and the
// pool's cgroups.
//
// Every new pool, in this package's other tests and in other packages' tests
// run meanwhile, removes what dead mathrl processes left. So the killed copy
// stays a zombie (waited for, not reaped) until its leftovers have been seen:
// its /proc entry keeps it alive to them.
func TestKilledCaller(t *testing.T) {
	cfg := small()
	cfg.Workers, cfg.Timeout = 1, 10*time.Minute
	if os.Getenv(killedEnv) == "1" {
		p, err := sandbox.NewPool(cfg)
		if err != nil {
			t.Fatal(err)
		}
		p.Run(context.Background(), "import time\ntime.sleep(600)\n") // killed meanwhile
		t.Fatal("the program ended before this process was killed")
	}
	t.Parallel()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(self, "-test.run=^TestKilledCaller$", "-test.count=1")
	cmd.Env = append(os.Environ(), killedEnv+"=1")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	exited := make(chan error, 1)
	go func() { exited <- waitUnreaped(pid) }()
	folder := waitForRunFolder(t, pid, exited)
	cmd.Process.Kill()
	<-exited

	deadline := time.Now().Add(30 * time.Second)
	for left := sandboxProcesses(pid, nil, ""); len(left) > 0; left = sandboxProcesses(pid, nil, "") {
		if time.Now().After(deadline) {
			t.Fatalf("processes outlived their killed caller: %v", left)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if !exists(folder) || len(cgroupsOf(pid)) == 0 && sandbox.CgroupParents() != nil {
		t.Fatalf("the killed process left no folder (%s) or no cgroups: nothing to test", folder)
	}
	cmd.Wait() // reaped: from now on its leftovers are a dead process's
	p, err := sandbox.NewPool(cfg)
	if err != nil {
		t.Fatal(err)
	}
	p.Close()
	if exists(folder) {
		t.Errorf("a new pool left the killed process's folder %s", folder)
	}
	if left := cgroupsOf(pid); len(left) > 0 {
		t.Errorf("a new pool left the killed process's cgroups %v", left)
	}
}

// waitUnreaped waits until process pid has ended, leaving it a zombie.
func waitUnreaped(pid int) error {
	var info unix.Siginfo
	for {
		err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if err != unix.EINTR {
			if err == nil {
				return fmt.Errorf("process %d ended", pid)
			}
			return err
		}
	}
}

// waitForRunFolder waits, at most 2 minutes, until process pid's pool has
// written its program, and returns the run's temporary folder; it fails if the
// process exits first.
func waitForRunFolder(t *testing.T, pid int, exited <-chan error) string {
	t.Helper()
	pattern := filepath.Join(os.TempDir(), fmt.Sprintf("mathrl-sandbox-%d-*", pid), "work", "main.py")
	deadline := time.After(2 * time.Minute)
	for {
		if found, _ := filepath.Glob(pattern); len(found) > 0 {
			return filepath.Dir(filepath.Dir(found[0]))
		}
		select {
		case err := <-exited:
			t.Fatalf("the process to kill ended first: %v", err)
		case <-deadline:
			t.Fatalf("no folder %s appeared", pattern)
		case <-time.After(20 * time.Millisecond):
		}
	}
}
