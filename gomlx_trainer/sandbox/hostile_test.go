package sandbox_test

import (
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/mathrl/mathrl/gomlx_trainer/sandbox"
)

// The hostile suite: each test runs a program that tries to escape or to
// exhaust the machine, and proves from the outside that it was contained at
// the levels that promise it, or that the documented weaker guarantee holds.

func TestForkBomb(t *testing.T) {
	t.Parallel()
	eachLevel(t, false, func(t *testing.T, p *sandbox.Pool) {
		limit := p.Config().Processes
		r := run(t, p, forkBomb)
		var n int
		var errName string
		if _, err := fmt.Sscan(r.Stdout, &n, &errName); err != nil {
			t.Fatalf("stdout %q: %v", r.Stdout, err)
		}
		if n >= limit || errName != "BlockingIOError" {
			t.Errorf("forked %d processes, then %s; want fewer than %d, then BlockingIOError", n, errName, limit)
		}
		if !r.Killed {
			t.Errorf("the fork loop was not killed: %+v", r)
		}
		assertNothingLeft(t, r, "")
	})
}

func TestMemoryBomb(t *testing.T) {
	t.Parallel()
	eachLevel(t, true, func(t *testing.T, p *sandbox.Pool) {
		r := run(t, p, memoryBomb(p.Config().Memory))
		if r.Stdout != "quarter ok\nMemoryError\n" {
			t.Errorf("stdout %q, want a quarter of the limit to fit and twice the limit to fail", r.Stdout)
		}
		if r.ExitCode != 1 || !strings.Contains(r.Stderr, "MemoryError") {
			t.Errorf("exit %d, stderr %q: want exit 1 with a MemoryError", r.ExitCode, r.Stderr)
		}
		if !strings.Contains(r.ToolResponse(), "MemoryError") {
			t.Errorf("tool response does not report the MemoryError:\n%s", r.ToolResponse())
		}
	})
}

func TestInfiniteLoop(t *testing.T) {
	t.Parallel()
	eachLevel(t, true, func(t *testing.T, p *sandbox.Pool) {
		r := run(t, p, infiniteLoop)
		if !r.Killed || (r.Limit != "cpu" && r.Limit != "timeout") {
			t.Errorf("killed %v by limit %q, want killed by the CPU limit or the timeout", r.Killed, r.Limit)
		}
		if !strings.Contains(r.ToolResponse(), "[killed: CPU limit") && !strings.Contains(r.ToolResponse(), "[timed out") {
			t.Errorf("tool response does not say why the program ended:\n%s", r.ToolResponse())
		}
		assertNothingLeft(t, r, "")
	})
}

func TestSleepTimesOut(t *testing.T) {
	t.Parallel()
	eachLevel(t, true, func(t *testing.T, p *sandbox.Pool) {
		r := run(t, p, sleepy)
		if !r.TimedOut || r.Limit != "timeout" || r.Signal != "SIGKILL" || r.Stdout != "before\n" {
			t.Errorf("got timed out %v, limit %q, signal %q, stdout %q; want a SIGKILL at the timeout after 'before'",
				r.TimedOut, r.Limit, r.Signal, r.Stdout)
		}
		want := fmt.Sprintf("before\n[timed out after %v: killed]", p.Config().Timeout)
		if got := r.ToolResponse(); got != want {
			t.Errorf("ToolResponse() = %q, want %q", got, want)
		}
	})
}

func TestBusyThreads(t *testing.T) {
	t.Parallel()
	eachLevel(t, false, func(t *testing.T, p *sandbox.Pool) {
		limit := p.Config().Processes
		r := run(t, p, busyThreads)
		var n int
		if _, err := fmt.Sscanf(r.Stdout, "%d RuntimeError", &n); err != nil || n >= limit {
			t.Errorf("stdout %q: want fewer than %d threads, then RuntimeError", r.Stdout, limit)
		}
		if !r.Killed || (r.Limit != "cpu" && r.Limit != "timeout") {
			t.Errorf("killed %v by limit %q, want the CPU limit (all threads count) or the timeout", r.Killed, r.Limit)
		}
	})
}

func TestNetwork(t *testing.T) {
	t.Parallel()
	eachLevel(t, true, func(t *testing.T, p *sandbox.Pool) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		var accepted atomic.Int32
		done := make(chan struct{})
		go func() {
			defer close(done)
			for {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				accepted.Add(1)
				c.Close()
			}
		}()
		port := ln.Addr().(*net.TCPAddr).Port
		r := run(t, p, fmt.Sprintf(`import socket
print(sorted(name for _, name in socket.if_nameindex()))
try:
    socket.create_connection(("127.0.0.1", %d), timeout=2).close()
    print("connected")
except OSError as e:
    print("failed", e)
`, port))
		// Count every connection that reached the listener, including any still in its backlog.
		ln.(*net.TCPListener).SetDeadline(time.Now().Add(300 * time.Millisecond))
		<-done
		if r.Isolation.Network {
			if accepted.Load() != 0 || !strings.Contains(r.Stdout, "['lo']\nfailed") {
				t.Errorf("own network namespace: listener saw %d connections, stdout %q; want none, only 'lo'", accepted.Load(), r.Stdout)
			}
			return
		}
		// Documented weaker guarantee: without a network namespace the network is reachable.
		if accepted.Load() != 1 || !strings.Contains(r.Stdout, "connected") {
			t.Errorf("no network namespace: listener saw %d connections, stdout %q; the documentation says the network is reachable", accepted.Load(), r.Stdout)
		}
	})
}

// hostFolder makes a folder under the system temp folder with the given mode
// (t.TempDir's parents are private to root, which would hide it from a uid anyway).
func hostFolder(t *testing.T, mode os.FileMode) string {
	t.Helper()
	d, err := os.MkdirTemp("", "mathrl-sandbox-test-")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(d, mode); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	return d
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

func TestWriteOutside(t *testing.T) {
	t.Parallel()
	eachLevel(t, true, func(t *testing.T, p *sandbox.Pool) {
		private := filepath.Join(hostFolder(t, 0o755), "written")
		open := filepath.Join(hostFolder(t, 0o777), "written")
		tmp := filepath.Join(os.TempDir(), "mathrl-sandbox-written-"+uniqueMarker())
		t.Cleanup(func() { os.Remove(tmp) })
		paths, _ := json.Marshal([]string{private, open, tmp})
		r := run(t, p, fmt.Sprintf(`for path in %s:
    try:
        with open(path, "w") as f:
            f.write("escaped")
        print("wrote", path)
    except OSError as e:
        print("refused", path, e.errno)
`, paths))
		iso := r.Isolation
		switch {
		case iso.Mounts:
			for _, f := range []string{private, open, tmp} {
				if exists(f) {
					t.Errorf("private read-only root: %s was written on the host", f)
				}
			}
		case iso.Level == sandbox.LevelUID:
			// Documented: a dedicated uid writes only where everyone may write.
			if exists(private) || !exists(open) || !exists(tmp) {
				t.Errorf("uid level: written %v %v %v, want only the world-writable folders (%s, %s)",
					exists(private), exists(open), exists(tmp), open, tmp)
			}
		default:
			// Documented: at the rlimits level the program writes wherever mathrl can.
			if !exists(private) || !exists(open) || !exists(tmp) {
				t.Errorf("rlimits level: the documentation says the program writes wherever mathrl can")
			}
		}
	})
}

func TestDeleteOutside(t *testing.T) {
	t.Parallel()
	eachLevel(t, true, func(t *testing.T, p *sandbox.Pool) {
		dir := hostFolder(t, 0o755)
		keep := filepath.Join(dir, "keep.txt")
		if err := os.WriteFile(keep, []byte("keep"), 0o644); err != nil {
			t.Fatal(err)
		}
		r := run(t, p, fmt.Sprintf(`import os, shutil
try:
    os.remove(%[1]q)
    print("removed")
except OSError as e:
    print("refused", e.errno)
shutil.rmtree(%[2]q, ignore_errors=True)
`, keep, dir))
		if r.Isolation.Level == sandbox.LevelRlimits {
			if exists(keep) {
				t.Errorf("rlimits level: the documentation says the program deletes what mathrl can")
			}
			return
		}
		if !exists(keep) || !strings.HasPrefix(r.Stdout, "refused") {
			t.Errorf("%s was deleted (stdout %q)", keep, r.Stdout)
		}
	})
}

func TestHostSecrets(t *testing.T) {
	secret := "secret-" + uniqueMarker()
	t.Setenv("MATHRL_SANDBOX_TEST_SECRET", secret)
	home, err := os.UserHomeDir()
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(home, ".mathrl-sandbox-test-"+uniqueMarker())
	if err := os.WriteFile(file, []byte(secret), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Remove(file) })
	homeReadable := othersCanRead(file)

	for _, s := range setups(t) {
		t.Run(s.name, func(t *testing.T) {
			p := pool(t, s.cfg)
			r := run(t, p, fmt.Sprintf(`import os, json
print(json.dumps(sorted(os.environ)))
for path in [%q, "/proc/%d/environ"]:
    try:
        print(open(path, "rb").read().decode("utf-8", "replace"))
    except OSError as e:
        print("refused", e.errno)
`, file, os.Getpid()))
			var names []string
			json.Unmarshal([]byte(strings.SplitN(r.Stdout, "\n", 2)[0]), &names)
			want := "HOME LANG LC_ALL LOGNAME MKL_NUM_THREADS MPLBACKEND OMP_NUM_THREADS OPENBLAS_NUM_THREADS PATH TMPDIR USER"
			if got := strings.Join(names, " "); got != want {
				t.Errorf("environment %q, want only %q", got, want)
			}
			leaked := strings.Contains(r.Stdout, secret)
			switch {
			case r.Isolation.Mounts, r.Isolation.Level == sandbox.LevelUID && !homeReadable:
				if leaked {
					t.Errorf("the secret leaked:\n%s", r.Stdout)
				}
			case r.Isolation.Level == sandbox.LevelUID:
				t.Logf("uid level, home readable by others: documented that world-readable files are visible")
			default:
				// Documented: at the rlimits level the program reads what mathrl can, even its environment.
				if !leaked {
					t.Errorf("rlimits level: the documentation says the program reads what mathrl can")
				}
			}
		})
	}
}

// othersCanRead reports whether a user other than the owner can read path.
func othersCanRead(path string) bool {
	for d := filepath.Dir(path); d != "/"; d = filepath.Dir(d) {
		if fi, err := os.Stat(d); err != nil || fi.Mode().Perm()&0o001 == 0 {
			return false
		}
	}
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().Perm()&0o004 != 0
}

func TestHugeOutput(t *testing.T) {
	t.Parallel()
	eachLevel(t, true, func(t *testing.T, p *sandbox.Pool) {
		code, stdout, stderr := hugeOutput(200000)
		r := run(t, p, code)
		max := p.Config().MaxOutput
		if r.Stdout != headAndTail(stdout, max) || !r.StdoutTruncated {
			t.Errorf("stdout (%d bytes, truncated %v) is not the head and tail of the %d bytes printed", len(r.Stdout), r.StdoutTruncated, len(stdout))
		}
		if r.Stderr != headAndTail(stderr, max) || !r.StderrTruncated {
			t.Errorf("stderr (%d bytes) is not cut to head and tail", len(r.Stderr))
		}
		resp := r.ToolResponse()
		if n := utf8.RuneCountInString(resp); n > p.Config().MaxResponse {
			t.Errorf("tool response has %d characters, more than %d", n, p.Config().MaxResponse)
		}
		if !strings.HasPrefix(resp, "0\n1\n2\n") || !strings.HasSuffix(resp, "EEEE") || !strings.Contains(resp, "characters cut ...]") {
			t.Errorf("tool response lacks head, tail or marker:\n%s", resp)
		}
	})
}

func TestEndlessOutput(t *testing.T) {
	t.Parallel()
	eachLevel(t, true, func(t *testing.T, p *sandbox.Pool) {
		r := run(t, p, endlessOutput)
		if !r.Killed || !r.StdoutTruncated || len(r.Stdout) > p.Config().MaxOutput+100 {
			t.Errorf("killed %v, truncated %v, %d bytes kept; want killed and at most %d bytes", r.Killed, r.StdoutTruncated, len(r.Stdout), p.Config().MaxOutput)
		}
	})
}

func TestBinaryOutput(t *testing.T) {
	t.Parallel()
	eachLevel(t, true, func(t *testing.T, p *sandbox.Pool) {
		r := run(t, p, `import sys
data = bytes(range(256)) * 8 + b"END"
sys.stdout.buffer.write(data)
sys.stderr.buffer.write(data[::-1])
`)
		var raw []byte
		for range 8 {
			for b := range 256 {
				raw = append(raw, byte(b))
			}
		}
		raw = append(raw, "END"...)
		rev := make([]byte, len(raw))
		for i, b := range raw {
			rev[len(raw)-1-i] = b
		}
		if want := strings.ToValidUTF8(string(raw), "\uFFFD"); r.Stdout != want {
			t.Errorf("stdout is not the bytes written with invalid sequences replaced")
		}
		if want := strings.ToValidUTF8(string(rev), "\uFFFD"); r.Stderr != want {
			t.Errorf("stderr is not the bytes written with invalid sequences replaced")
		}
		js, err := json.Marshal(r)
		if err != nil || !utf8.Valid(js) || !utf8.ValidString(r.ToolResponse()) {
			t.Errorf("result is not valid UTF-8 JSON: %v", err)
		}
	})
}

func TestLimitsFilesAndDisk(t *testing.T) {
	t.Parallel()
	eachLevel(t, true, func(t *testing.T, p *sandbox.Pool) {
		cfg := p.Config()
		r := run(t, p, filesAndDisk(cfg))
		lines := strings.Split(strings.TrimSpace(r.Stdout), "\n")
		if len(lines) != 3 {
			t.Fatalf("stdout %q", r.Stdout)
		}
		if lines[0] != fmt.Sprintf("big %d", syscall.EFBIG) {
			t.Errorf("writing twice the file size limit: %q, want errno EFBIG", lines[0])
		}
		if lines[1] != fmt.Sprintf("open True %d", syscall.EMFILE) {
			t.Errorf("opening files without end: %q, want EMFILE below %d", lines[1], cfg.OpenFiles)
		}
		if r.Isolation.Mounts {
			if lines[2] != fmt.Sprintf("disk %d", syscall.ENOSPC) {
				t.Errorf("filling the working folder: %q, want ENOSPC (private tmpfs of %d bytes)", lines[2], cfg.Disk)
			}
		} else if lines[2] != "disk unbounded" && lines[2] != fmt.Sprintf("disk %d", syscall.ENOSPC) {
			// Documented: without a mount namespace only each file's size is bounded.
			t.Errorf("filling the working folder: %q", lines[2])
		}
	})
}

// TestRlimitsInside reads the resource limits from inside the sandbox, since
// some are hidden from the outside: the worker's cgroup stops a fork bomb
// before RLIMIT_NPROC would.
func TestRlimitsInside(t *testing.T) {
	t.Parallel()
	const rlimitNPROC = 6 // not exported by package syscall
	var own syscall.Rlimit
	if err := syscall.Getrlimit(rlimitNPROC, &own); err != nil {
		t.Fatal(err)
	}
	eachLevel(t, true, func(t *testing.T, p *sandbox.Pool) {
		cfg := p.Config()
		same := func(v int64) [2]uint64 { return [2]uint64{uint64(v), uint64(v)} }
		want := map[string][2]uint64{
			"CPU":    {uint64(cfg.CPUSeconds), uint64(cfg.CPUSeconds) + 1},
			"AS":     same(cfg.Memory),
			"FSIZE":  same(cfg.FileSize),
			"NOFILE": same(int64(cfg.OpenFiles)),
			"CORE":   same(0),
			"NPROC":  same(int64(cfg.Processes)),
		}
		if p.Isolation().Level == sandbox.LevelRlimits {
			// Documented: not set there, since it would count all of mathrl's user's processes.
			want["NPROC"] = [2]uint64{own.Cur, own.Max}
		}
		r := run(t, p, `import json, resource
names = ["CPU", "AS", "FSIZE", "NOFILE", "CORE", "NPROC"]
print(json.dumps({n: [v % 2**64 for v in resource.getrlimit(getattr(resource, "RLIMIT_" + n))] for n in names}))
`)
		var got map[string][2]uint64
		if err := json.Unmarshal([]byte(r.Stdout), &got); err != nil {
			t.Fatalf("stdout %q: %v", r.Stdout, err)
		}
		for name, w := range want {
			if got[name] != w {
				t.Errorf("RLIMIT_%s inside the sandbox: soft, hard = %d, want %d", name, got[name], w)
			}
		}
	})
}

func TestBackgroundProcesses(t *testing.T) {
	t.Parallel()
	eachLevel(t, true, func(t *testing.T, p *sandbox.Pool) {
		marker := uniqueMarker()
		r := run(t, p, backgroundProcesses(marker))
		if r.Stdout != "started\n" {
			t.Fatalf("stdout %q", r.Stdout)
		}
		left := liveProcesses(r.UID, marker)
		if r.Isolation.Level == sandbox.LevelRlimits {
			// Documented: a process that leaves the process group and closes its
			// output escapes at the rlimits level; the others are killed.
			if len(left) != 1 {
				t.Errorf("rlimits level: %d processes left (%v), the documentation says exactly the detached one", len(left), left)
			}
			for _, pid := range pidsOf(left) {
				syscall.Kill(pid, syscall.SIGKILL)
			}
			return
		}
		if len(left) > 0 {
			t.Errorf("processes outlived the call: %v", left)
		}
	})
}

func pidsOf(procs []string) []int {
	var pids []int
	for _, p := range procs {
		var pid int
		if _, err := fmt.Sscanf(p, "pid %d", &pid); err == nil {
			pids = append(pids, pid)
		}
	}
	return pids
}

func TestSignalsToParent(t *testing.T) {
	t.Parallel()
	eachLevel(t, false, func(t *testing.T, p *sandbox.Pool) {
		s := sentinel(t)
		r := run(t, p, fmt.Sprintf(`import os
for pid in [os.getppid(), %d, %d]:
    try:
        os.kill(pid, 9)
        print("sent", pid)
    except OSError as e:
        print("refused", pid, e.errno)
os.kill(-1, 9)
print("alive")
`, os.Getpid(), s.Process.Pid))
		if err := s.Process.Signal(syscall.Signal(0)); err != nil {
			t.Errorf("the sentinel process was killed: %v", err)
		}
		if !strings.Contains(r.Stdout, fmt.Sprintf("refused %d", os.Getpid())) {
			t.Errorf("the signal to the test process was not refused: %q", r.Stdout)
		}
	})
}

// TestLeftoversDoNotStarveTheNextProgram runs, on a one-worker pool, a program
// that leaves processes behind and at once one that forks close to the process
// limit as the same uid: the leftovers, killed and then reaped by the system's
// init in its own time, must not count against the next program's limit.
func TestLeftoversDoNotStarveTheNextProgram(t *testing.T) {
	t.Parallel()
	for _, s := range setups(t) {
		if s.cfg.Isolation == sandbox.LevelRlimits {
			continue // no process limit at that level
		}
		t.Run(s.name, func(t *testing.T) {
			t.Parallel()
			cfg := s.cfg
			cfg.Workers = 1
			p, err := sandbox.NewPool(cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			r := run(t, p, fmt.Sprintf(`import subprocess
for _ in range(%d):
    subprocess.Popen(["sleep", "60"], start_new_session=True)
print("left")
`, cfg.Processes-4))
			if r.Stdout != "left\n" {
				t.Fatalf("first program: stdout %q", r.Stdout)
			}
			r = run(t, p, fmt.Sprintf(`import os
pids = []
for _ in range(%d):
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    pids.append(pid)
for pid in pids:
    os.waitpid(pid, 0)
print("forked", len(pids))
`, cfg.Processes-4))
			if want := fmt.Sprintf("forked %d\n", cfg.Processes-4); r.Stdout != want {
				t.Errorf("second program, same uid: stdout %q, want %q (stderr %.200q)", r.Stdout, want, r.Stderr)
			}
		})
	}
}
