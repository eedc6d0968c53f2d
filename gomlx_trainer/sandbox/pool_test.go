package sandbox_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mathrl/mathrl/gomlx_trainer/sandbox"
)

// honest is a program with an answer computed independently in Go: the
// harmonic number H(n) as an exact fraction and the sum of i*i below 1000n.
func honest(n int) (code, want string) {
	code = fmt.Sprintf(`from fractions import Fraction
n = %d
h = sum(Fraction(1, k) for k in range(1, n + 1))
print(h.numerator, h.denominator)
print(sum(i * i for i in range(1000 * n)))
`, n)
	h := new(big.Rat)
	for k := 1; k <= n; k++ {
		h.Add(h, big.NewRat(1, int64(k)))
	}
	m := big.NewInt(int64(1000 * n))
	sq := new(big.Int).Mul(new(big.Int).Sub(m, big.NewInt(1)), m) // (m-1) m (2m-1) / 6
	sq.Mul(sq, new(big.Int).Sub(new(big.Int).Lsh(m, 1), big.NewInt(1)))
	sq.Div(sq, big.NewInt(6))
	return code, fmt.Sprintf("%s %s\n%s\n", h.Num(), h.Denom(), sq)
}

// TestHonestUnderAttack runs before the parallel tests (its levels in parallel
// with each other), so that the load on the machine is the attack's own.
func TestHonestUnderAttack(t *testing.T) {
	for _, s := range setups(t) {
		if !s.safe {
			continue
		}
		t.Run(s.name, func(t *testing.T) {
			t.Parallel()
			// Every hostile program here ends by a CPU or memory limit, or at once,
			// so a long wall clock only gives the honest ones room on a busy machine.
			cfg := s.cfg
			cfg.Workers = 6
			cfg.Timeout = 60 * time.Second
			cfg.Processes = 4 // a fork bomb burns Processes x CPUSeconds of CPU
			p := pool(t, cfg)
			var wg sync.WaitGroup
			for _, code := range attacks {
				wg.Go(func() {
					r, err := p.Run(context.Background(), code)
					if err != nil {
						t.Errorf("hostile program: sandbox failed: %v", err)
					}
					t.Logf("hostile program ended after %v: %s", r.Duration.Round(time.Millisecond), strings.ReplaceAll(headLine(r.ToolResponse()), "\n", " "))
				})
			}
			for n := 1; n <= 24; n++ {
				wg.Go(func() {
					code, want := honest(n)
					r, err := p.Run(context.Background(), code)
					if err != nil {
						t.Errorf("honest %d: %v", n, err)
						return
					}
					if r.Stdout != want || r.ExitCode != 0 || r.Killed || r.Stderr != "" {
						t.Errorf("honest %d: stdout %q exit %d killed %v stderr %q, want %q", n, r.Stdout, r.ExitCode, r.Killed, r.Stderr, want)
					}
				})
			}
			wg.Wait()
		})
	}
}

func TestCancel(t *testing.T) {
	t.Parallel()
	eachLevel(t, true, func(t *testing.T, p *sandbox.Pool) {
		marker := uniqueMarker()
		ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
		defer cancel()
		r, err := p.Run(ctx, fmt.Sprintf("import subprocess\nsubprocess.Popen(['sleep', %q])\nprint('started', flush=True)\nsubprocess.run(['sleep', %q])\n", marker, marker))
		if err != nil {
			t.Fatal(err)
		}
		if !r.TimedOut || r.Limit != "canceled" || !strings.HasSuffix(r.ToolResponse(), "[canceled: killed]") {
			t.Errorf("timed out %v, limit %q, response %q; want a canceled program", r.TimedOut, r.Limit, r.ToolResponse())
		}
		assertNothingLeft(t, r, marker)
	})
}

// TestPoolWaitsForAWorker holds the only worker with a program that waits for
// the test, and checks that another Run waits for the worker until its context
// ends. The program and the test talk through named pipes in a host folder, so
// the pool runs at the rlimits level, which shows the host's files (the program
// is harmless, and handing out workers is the same at every level).
func TestPoolWaitsForAWorker(t *testing.T) {
	t.Parallel()
	cfg := small()
	cfg.Workers = 1
	cfg.Isolation = sandbox.LevelRlimits
	cfg.Timeout = time.Minute // the first program waits for the test, however busy the machine
	p, err := sandbox.NewPool(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	ready, release := fifo(t, "ready"), fifo(t, "release")
	first := make(chan sandbox.Result, 1)
	go func() {
		// release is opened first, so that the test cannot close it before the program waits on it.
		r, err := p.Run(context.Background(), fmt.Sprintf(`release = open(%q)
with open(%q, "w") as ready:
    ready.write("ready\n")
release.read()
print("first")
`, release.Name(), ready.Name()))
		if err != nil {
			t.Error(err)
		}
		first <- r
	}()
	line := make(chan string, 1)
	go func() {
		s, _ := bufio.NewReader(ready).ReadString('\n')
		line <- s
	}()
	select {
	case <-line: // the first program runs: it holds the only worker
	case r := <-first:
		t.Fatalf("the first program ended before it was ready: stdout %q, stderr %q", r.Stdout, r.Stderr)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	if _, err := p.Run(ctx, "print('second')"); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Run while the only worker is busy: error %v, want it to wait and hit the deadline", err)
	}
	release.Close() // the first program reads to the end and exits
	if r := <-first; r.Stdout != "first\n" {
		t.Errorf("first program: stdout %q, stderr %q", r.Stdout, r.Stderr)
	}
	if r, err := p.Run(context.Background(), "print('third')"); err != nil || r.Stdout != "third\n" {
		t.Errorf("Run after the worker is free: %q, %v", r.Stdout, err)
	}
}

// fifo makes a named pipe in a temporary folder and opens it for reading and
// writing, so that a program's open of it does not block, and a program that
// reads it sees the end only when the test closes it.
func fifo(t *testing.T, name string) *os.File {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

func TestWorkersHaveTheirOwnUID(t *testing.T) {
	t.Parallel()
	cfg := small()
	cfg.Workers = 3
	p := pool(t, cfg)
	if p.Isolation().Level == sandbox.LevelRlimits {
		t.Skip("documented: the rlimits level runs programs as mathrl's own user")
	}
	var mu sync.Mutex
	uids := map[int]bool{}
	var wg sync.WaitGroup
	for range 9 {
		wg.Go(func() {
			r, err := p.Run(context.Background(), "import os\nprint(os.getuid())\n")
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			uids[r.UID] = true
			mu.Unlock()
			if r.Isolation.Level != sandbox.LevelNamespaces || !strings.Contains(r.Isolation.User, "root of its own") {
				if r.Stdout != fmt.Sprintf("%d\n", r.UID) {
					t.Errorf("program saw uid %q, result says %d", r.Stdout, r.UID)
				}
			}
		})
	}
	wg.Wait()
	if len(uids) > 3 {
		t.Errorf("%d uids for 3 workers: %v", len(uids), uids)
	}
}

func TestConfigValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  sandbox.Config
		want string // substring of the error, "" for none
	}{
		{"zero is default", sandbox.Config{}, ""},
		{"negative workers", sandbox.Config{Workers: -1}, "workers"},
		{"tiny memory", sandbox.Config{Memory: 1000}, "memory"},
		{"unknown level", sandbox.Config{Isolation: "chroot"}, "isolation"},
		{"few open files", sandbox.Config{OpenFiles: 3}, "open_files"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.cfg.Validate()
			if (err == nil) != (tc.want == "") || (err != nil && !strings.Contains(err.Error(), tc.want)) {
				t.Errorf("Validate() = %v, want error containing %q", err, tc.want)
			}
		})
	}
}

func TestMissingInterpreter(t *testing.T) {
	_, err := sandbox.NewPool(sandbox.Config{Interpreter: "/nonexistent/python3"})
	if err == nil || !strings.Contains(err.Error(), "/nonexistent/python3") {
		t.Errorf("NewPool with a missing interpreter: %v, want an error naming it", err)
	}
}

// headLine is the first line of s.
func headLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

func TestWorkerCgroup(t *testing.T) {
	t.Parallel()
	eachLevel(t, true, func(t *testing.T, p *sandbox.Pool) {
		r := run(t, p, "print(open('/proc/self/cgroup').read())")
		if !r.Isolation.Cgroup {
			// Documented: without writable cgroups CPU is shared per process, not per worker.
			t.Logf("no cgroup per worker on this machine")
			return
		}
		want := fmt.Sprintf("/mathrl-sandbox-%d-", os.Getpid())
		n := 0
		for _, line := range strings.Split(r.Stdout, "\n") {
			if strings.Contains(line, want) && strings.Contains(line, "/worker-") {
				n++
			}
		}
		if n == 0 {
			t.Errorf("the program is not in a worker cgroup of this pool:\n%s", r.Stdout)
		}
	})
}

// TestInitInAFullCgroup runs programs in worker cgroups that admit a single
// task. Only the program's process, forked by the init with one thread,
// joins the cgroup: had the init joined with the Go runtime's threads, the
// cgroup would be over its limit until the exec, and a thread the runtime
// started in between would fail to start and crash the init ("pthread_create
// failed"). Each program stays 50 ms in its cgroup before its exec, as a join
// slowed by a busy machine does, while a goroutine of its init blocks in a
// system call (which makes the runtime start a thread). Each level at which
// programs get a cgroup runs 40 programs, two at a time.
func TestInitInAFullCgroup(t *testing.T) {
	t.Parallel()
	eachLevel(t, true, func(t *testing.T, p0 *sandbox.Pool) {
		cfg := p0.Config()
		cfg.Workers, cfg.Processes = 2, 1
		p, err := sandbox.NewPool(cfg)
		if err != nil {
			t.Fatal(err)
		}
		defer p.Close()
		if !p.Isolation().Cgroup {
			t.Skip("no cgroup per worker on this machine")
		}
		sandbox.Stall(p, 50*time.Millisecond)
		var wg sync.WaitGroup
		for n := range 40 {
			wg.Go(func() {
				r, err := p.Run(context.Background(), fmt.Sprintf("print(%d)", n))
				if err != nil {
					t.Errorf("program %d: %v", n, err)
					return
				}
				if want := fmt.Sprintf("%d\n", n); r.Stdout != want || r.ExitCode != 0 || r.Stderr != "" {
					t.Errorf("program %d: stdout %q exit %d stderr %q, want %q", n, r.Stdout, r.ExitCode, r.Stderr, want)
				}
			})
		}
		wg.Wait()
	})
}

// TestOnlyTheProgramInItsCgroup counts the tasks of a one-worker pool's
// cgroup (pids.current) while a program starts, held 500 ms in the cgroup
// before its exec (long enough to be seen by a reader starved on a loaded
// machine): there must only ever be the program's one, never a thread of the
// Go init that prepared it.
func TestOnlyTheProgramInItsCgroup(t *testing.T) {
	t.Parallel()
	eachLevel(t, true, func(t *testing.T, p0 *sandbox.Pool) {
		cfg := p0.Config()
		cfg.Workers, cfg.Timeout = 1, 10*time.Second
		p, err := sandbox.NewPool(cfg)
		if err != nil {
			t.Fatal(err)
		}
		defer p.Close()
		var counter string
		for _, dir := range sandbox.WorkerCgroups(p)[0] {
			if f := filepath.Join(dir, "pids.current"); exists(f) {
				counter = f
			}
		}
		if counter == "" {
			t.Skip("no pids cgroup per worker on this machine")
		}
		sandbox.Stall(p, 500*time.Millisecond)
		type ended struct {
			r   sandbox.Result
			err error
		}
		done := make(chan ended, 1)
		go func() {
			r, err := p.Run(context.Background(), "print(1)")
			done <- ended{r, err}
		}()
		most, seen := 0, 0
		for {
			select {
			case e := <-done:
				if e.err != nil {
					t.Fatalf("Run: %v", e.err)
				}
				r := e.r
				if r.Stdout != "1\n" || r.ExitCode != 0 {
					t.Errorf("stdout %q exit %d stderr %.300q, want \"1\\n\"", r.Stdout, r.ExitCode, r.Stderr)
				}
				if most != 1 || seen == 0 {
					t.Errorf("tasks in the worker's cgroup: at most %d (in %d readings while the program ran), want 1", most, seen)
				}
				return
			default:
			}
			b, err := os.ReadFile(counter)
			if err != nil {
				t.Fatal(err)
			}
			n, err := strconv.Atoi(strings.TrimSpace(string(b)))
			if err != nil {
				t.Fatalf("%s: %q", counter, b)
			}
			if n > 0 {
				most, seen = max(most, n), seen+1
			}
			time.Sleep(time.Millisecond)
		}
	})
}

// TestSetupErrorAfterJoin checks that a step that fails between joining the
// cgroup and the exec (where the init makes raw system calls only) is
// reported with its errno's text: an open-file limit above the kernel's
// fs.nr_open (at most 2^30), which setrlimit refuses at every level.
func TestSetupErrorAfterJoin(t *testing.T) {
	t.Parallel()
	cfg := small()
	cfg.Workers, cfg.OpenFiles = 1, 1<<31-1
	_, err := sandbox.NewPool(cfg)
	if want := "init: setrlimit nofile: operation not permitted"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("NewPool with open_files = %d: %v, want an error containing %q", cfg.OpenFiles, err, want)
	}
}
