package sandbox_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mathrl/mathrl/gomlx_trainer/sandbox"
	"github.com/mathrl/mathrl/internal/testenv"
)

// small returns limits small enough for the hostile suite to stay quick.
func small() sandbox.Config {
	return sandbox.Config{
		Workers: 4, Timeout: 3 * time.Second, CPUSeconds: 1, Memory: 128 << 20,
		FileSize: 1 << 20, Disk: 8 << 20, Processes: 16, OpenFiles: 32,
		MaxOutput: 8 << 10, MaxResponse: 2000,
	}
}

// systemPython is Debian's /usr/bin/python3 (with sympy, from scripts/setup.sh),
// which a dedicated uid can execute, unlike an interpreter under /root.
func systemPython(t testing.TB) string {
	t.Helper()
	const p = "/usr/bin/python3"
	if _, err := os.Stat(p); err != nil {
		testenv.Missing(t, p+" (Debian python3, see scripts/setup.sh)")
	}
	return p
}

// setup is one isolation level under test.
type setup struct {
	name string
	cfg  sandbox.Config
	safe bool // the level keeps hostile programs from harming the machine running the tests
}

// setups lists the levels the suite exercises: the strongest this machine
// offers (with python3 on PATH), the uid level when running as root (with
// /usr/bin/python3), and the rlimits level (only for programs harmless to the
// machine: at that level a program can do whatever mathrl's user can).
func setups(t *testing.T) []setup {
	s := []setup{{name: "strongest", cfg: small(), safe: true}}
	if os.Geteuid() == 0 {
		c := small()
		c.Isolation, c.Interpreter = sandbox.LevelUID, systemPython(t)
		s = append(s, setup{name: "uid", cfg: c, safe: true})
	}
	c := small()
	c.Isolation = sandbox.LevelRlimits
	s = append(s, setup{name: "rlimits", cfg: c, safe: false})
	return s
}

var (
	poolsMu sync.Mutex
	pools   = map[string]*sandbox.Pool{}
)

// pool returns one shared pool per configuration.
func pool(t *testing.T, cfg sandbox.Config) *sandbox.Pool {
	t.Helper()
	key := fmt.Sprintf("%+v", cfg)
	poolsMu.Lock()
	defer poolsMu.Unlock()
	if p, ok := pools[key]; ok {
		return p
	}
	p, err := sandbox.NewPool(cfg)
	if err != nil {
		t.Fatalf("NewPool(%+v): %v", cfg, err)
	}
	pools[key] = p
	return p
}

// eachLevel runs f in parallel subtests, one per level; levels that are not safe
// for the program are left out unless harmless is true.
func eachLevel(t *testing.T, harmless bool, f func(t *testing.T, p *sandbox.Pool)) {
	for _, s := range setups(t) {
		if !s.safe && !harmless {
			continue
		}
		t.Run(s.name, func(t *testing.T) {
			t.Parallel()
			f(t, pool(t, s.cfg))
		})
	}
}

// run runs code and fails the test if the sandbox itself failed.
func run(t *testing.T, p *sandbox.Pool, code string) sandbox.Result {
	t.Helper()
	r, err := p.Run(context.Background(), code)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	t.Logf("%s: exit %d signal %q limit %q timed out %v, %v\nstdout: %.300q\nstderr: %.300q",
		r.Isolation.Level, r.ExitCode, r.Signal, r.Limit, r.TimedOut, r.Duration.Round(time.Millisecond), r.Stdout, r.Stderr)
	return r
}

// process is what the tests read of a process in /proc.
type process struct {
	pid, ppid int
	state     string // "R", "S", "Z", ...
	uid       int    // real uid
	cmdline   string // arguments joined by spaces
	cgroups   string // the text of /proc/PID/cgroup
}

// dead reports whether the process has ended and waits to be reaped.
func (p process) dead() bool { return p.state == "Z" || p.state == "X" }

func (p process) String() string { return fmt.Sprintf("pid %d uid %d %q", p.pid, p.uid, p.cmdline) }

// processes reads every process but this one from /proc, leaving out those
// that end meanwhile.
func processes() []process {
	var procs []process
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
		if err != nil {
			continue
		}
		p := process{pid: pid, uid: -1}
		for _, line := range strings.Split(string(status), "\n") {
			key, val, _ := strings.Cut(line, ":")
			f := strings.Fields(val)
			switch {
			case len(f) == 0:
			case key == "State":
				p.state = f[0]
			case key == "PPid":
				p.ppid, _ = strconv.Atoi(f[0])
			case key == "Uid":
				p.uid, _ = strconv.Atoi(f[0])
			}
		}
		cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		p.cmdline = strings.TrimSpace(strings.ReplaceAll(string(cmdline), "\x00", " "))
		cgroups, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", pid))
		p.cgroups = string(cgroups)
		procs = append(procs, p)
	}
	return procs
}

// liveProcesses lists live processes that run as uid (unless uid is mathrl's
// own) or whose command line contains marker (unless marker is "").
func liveProcesses(uid int, marker string) []string {
	var found []string
	for _, p := range processes() {
		if p.dead() {
			continue // already dead, waiting to be reaped
		}
		if (marker != "" && strings.Contains(p.cmdline, marker)) || (uid != os.Geteuid() && p.uid == uid) {
			found = append(found, p.String())
		}
	}
	return found
}

// assertNothingLeft fails if a process of the program is still alive.
func assertNothingLeft(t *testing.T, r sandbox.Result, marker string) {
	t.Helper()
	if left := liveProcesses(r.UID, marker); len(left) > 0 {
		t.Errorf("processes left after the call: %v", left)
	}
}

// uniqueMarker is a string that only this test's processes carry on their command line.
func uniqueMarker() string {
	return fmt.Sprintf("1000.%d%06d", os.Getpid(), time.Now().UnixNano()%1000000)
}

// sentinel starts a process the sandbox must not be able to kill.
func sentinel(t *testing.T) *exec.Cmd {
	t.Helper()
	cmd := exec.Command("sleep", "300")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return cmd
}

func TestMain(m *testing.M) {
	code := m.Run()
	for _, p := range pools {
		p.Close()
	}
	os.Exit(code)
}
