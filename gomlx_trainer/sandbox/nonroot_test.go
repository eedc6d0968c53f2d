package sandbox_test

import (
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/mathrl/mathrl/gomlx_trainer/sandbox"
)

// nonRootEnv marks the copy of this test binary that TestNonRoot runs as an
// unprivileged user.
const nonRootEnv = "MATHRL_SANDBOX_TEST_NONROOT"

// TestNonRoot checks the sandbox as mathrl sees it when it is not root: the
// namespaces level inside a user namespace, or else the documented rlimits
// level. Run as root, it runs itself again as uid 65534.
func TestNonRoot(t *testing.T) {
	if os.Getenv(nonRootEnv) == "1" || os.Geteuid() != 0 {
		for _, level := range []sandbox.Level{"", sandbox.LevelRlimits} {
			t.Run("level="+string(level), func(t *testing.T) { nonRootChecks(t, level) })
		}
		return
	}
	t.Parallel()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := hostFolder(t, 0o755)
	exe := filepath.Join(dir, "sandbox.test")
	if err := copyFile(self, exe, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^TestNonRoot$", "-test.v", "-test.count=1")
	cmd.Dir = dir
	cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + dir, nonRootEnv + "=1"}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	t.Logf("as uid 65534:\n%s", out)
	if err != nil {
		t.Fatalf("the checks failed as uid 65534: %v", err)
	}
}

// nonRootChecks runs a program that tries the network, a write outside and a
// detached process at level ("" for the strongest available).
func nonRootChecks(t *testing.T, level sandbox.Level) {
	cfg := small()
	cfg.Isolation = level
	cfg.Workers = 2
	cfg.Interpreter = systemPython(t)
	p, err := sandbox.NewPool(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	iso := p.Isolation()
	t.Logf("isolation: %s", iso)

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	connected := make(chan bool, 1)
	go func() {
		ln.(*net.TCPListener).SetDeadline(time.Now().Add(20 * time.Second))
		c, err := ln.Accept()
		if err == nil {
			c.Close()
		}
		connected <- err == nil
	}()
	marker := uniqueMarker()
	outside := filepath.Join(hostFolder(t, 0o777), "written")
	r := run(t, p, fmt.Sprintf(`import os, socket, subprocess
print("ppid", os.getppid())
print(" ".join(l.split()[1] for l in open("/proc/self/status") if l.startswith(("CapEff", "NoNewPrivs"))))
try:
    socket.create_connection(("127.0.0.1", %d), timeout=2).close()
    print("connected")
except OSError as e:
    print("no network")
try:
    open(%q, "w").write("escaped")
except OSError as e:
    print("no write")
subprocess.Popen(["sleep", %q], start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
`, ln.Addr().(*net.TCPAddr).Port, outside, marker))
	if iso.Level == sandbox.LevelNamespaces {
		want := "ppid 0\n0000000000000000 1\nno network\nno write\n"
		if r.Stdout != want {
			t.Errorf("user namespace: stdout %q, want %q (no parent, no capabilities, no network, no writes)", r.Stdout, want)
		}
		if exists(outside) {
			t.Errorf("user namespace: %s was written on the host", outside)
		}
		assertNothingLeft(t, r, marker)
		return
	}
	// Documented weaker guarantee: the rlimits level leaves the network, the
	// user's files and detached processes alone.
	if iso.Level != sandbox.LevelRlimits {
		t.Fatalf("level %s, want namespaces or rlimits when not root", iso.Level)
	}
	if !<-connected || !exists(outside) {
		t.Errorf("rlimits level: the documentation says the network and the user's files are reachable")
	}
	for _, pid := range pidsOf(liveProcesses(os.Geteuid(), marker)) {
		syscall.Kill(pid, syscall.SIGKILL)
	}
}

func copyFile(src, dst string, mode os.FileMode) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, mode)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
