package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// ErrNoIsolation is returned by NewPool when no isolation level works here.
var ErrNoIsolation = errors.New("sandbox: no isolation level works on this machine")

// SetupError reports that the sandbox could not be set up at a level (the
// program never ran), for example because the kernel refused a namespace.
type SetupError struct {
	Level Level
	Msg   string
}

// Error names the level and what went wrong.
func (e *SetupError) Error() string { return fmt.Sprintf("sandbox: %s level: %s", e.Level, e.Msg) }

// Pool runs Python programs, at most Config.Workers at a time. It is safe for
// concurrent use.
type Pool struct {
	cfg     Config
	interp  interpreter
	iso     Isolation
	self    string   // this binary, re-executed as the sandbox's init
	uidBase int      // worker i runs as uidBase+i (root only)
	slots   chan int // free worker indices
	cgroups *workerCgroups
	cgErr   error // why there are no cgroups

	stall time.Duration // tests: see initSpec.Stall
}

// NewPool checks the interpreter, picks the strongest isolation level that works
// on this machine (or exactly cfg.Isolation when set) and returns a pool.
func NewPool(cfg Config) (*Pool, error) {
	p, probes, err := newPool(cfg, true)
	if err != nil {
		return nil, err
	}
	if p.iso.Level == "" {
		p.Close()
		return nil, fmt.Errorf("%w: %s", ErrNoIsolation, probeErrors(probes))
	}
	return p, nil
}

// Close releases the pool's cgroups. Call it when no Run is in progress.
func (p *Pool) Close() {
	p.cgroups.close()
	p.cgroups = nil
}

// Detect tries every isolation level on this machine with cfg's interpreter,
// for `mathrl doctor`. It never fails: problems are reported in the Report.
func Detect(cfg Config) Report {
	p, probes, err := newPool(cfg, false)
	if err != nil {
		return Report{Interpreter: cfg.Interpreter, Err: err.Error()}
	}
	defer p.Close()
	r := Report{Interpreter: p.interp.exe, Probes: probes, Active: p.iso, Cgroup: errString(p.cgErr)}
	if p.iso.Level == "" {
		r.Err = probeErrors(probes)
	}
	return r
}

func newPool(cfg Config, stopAtFirst bool) (*Pool, []Probe, error) {
	if err := cfg.Validate(); err != nil {
		return nil, nil, err
	}
	cfg = cfg.withDefaults()
	self, err := os.Executable()
	if err != nil {
		return nil, nil, fmt.Errorf("sandbox: find own executable: %w", err)
	}
	interp, err := findInterpreter(cfg.Interpreter)
	if err != nil {
		return nil, nil, err
	}
	p := &Pool{cfg: cfg, interp: interp, self: self, uidBase: cfg.UIDBase, slots: make(chan int, cfg.Workers)}
	if p.uidBase == 0 {
		// A random block, so that two pools on one machine do not share uids
		// (and so neither process counts nor the final kill-by-uid).
		p.uidBase = 1<<30 + rand.IntN(1<<14)*maxWorkers
	}
	for i := range cfg.Workers {
		p.slots <- i
	}
	removeStaleFolders()
	p.cgroups, p.cgErr = newWorkerCgroups(cfg.Workers, cfg.Processes)
	try := levelsFor(cfg.Isolation)
	var probes []Probe
	for _, level := range try {
		err := p.probe(level)
		probes = append(probes, Probe{Level: level, Err: errString(err)})
		if err == nil && p.iso.Level == "" {
			p.iso = p.isolation(level)
			if stopAtFirst {
				break
			}
		}
	}
	if p.iso.Level != "" && p.iso.Level != try[0] {
		p.iso.Note = "stronger levels unavailable: " + probeErrors(probes)
	}
	return p, probes, nil
}

// levelsFor lists the levels to try for a requested level.
func levelsFor(want Level) []Level {
	if want != "" {
		return []Level{want}
	}
	if os.Geteuid() == 0 {
		// Never fall back to running hostile code as root: LevelRlimits only on request.
		return []Level{LevelNamespaces, LevelUID}
	}
	return []Level{LevelNamespaces, LevelRlimits}
}

// probe runs a one-line program at level and checks its output.
func (p *Pool) probe(level Level) error {
	if level == LevelUID && os.Geteuid() != 0 {
		return errors.New("needs root to switch to a dedicated uid")
	}
	slot := <-p.slots
	defer func() { p.slots <- slot }()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cfg := p.cfg
	cfg.Timeout = 20 * time.Second
	r, err := p.runAt(ctx, cfg, level, slot, "print('ok')")
	var se *SetupError
	if errors.As(err, &se) {
		if level == LevelUID && strings.Contains(se.Msg, "permission denied") {
			return fmt.Errorf("%s (a dedicated uid needs an interpreter that every user can execute, such as /usr/bin/python3)", se.Msg)
		}
		return errors.New(se.Msg)
	}
	if err != nil {
		return err
	}
	if r.ExitCode != 0 || r.Stdout != "ok\n" {
		return fmt.Errorf("probe program printed %q, exit status %d, stderr %q", r.Stdout, r.ExitCode, strings.TrimSpace(r.Stderr))
	}
	return nil
}

// Run runs code as a Python program, waiting for a free worker first. The
// program is killed when the timeout passes or ctx ends. The error is non-nil
// only when the sandbox itself failed (or ctx ended before a worker was free);
// whatever the program does is reported in the Result.
func (p *Pool) Run(ctx context.Context, code string) (Result, error) {
	var slot int
	select {
	case slot = <-p.slots:
	case <-ctx.Done():
		return Result{}, fmt.Errorf("sandbox: waiting for a worker: %w", ctx.Err())
	}
	defer func() { p.slots <- slot }()
	return p.runAt(ctx, p.cfg, p.iso.Level, slot, code)
}

// Isolation reports the isolation every program of this pool runs under.
func (p *Pool) Isolation() Isolation { return p.iso }

// Config returns the pool's configuration with defaults filled in.
func (p *Pool) Config() Config { return p.cfg }

// Interpreter returns the resolved path of the Python executable.
func (p *Pool) Interpreter() string { return p.interp.exe }

// interpreter is a Python executable and the folders it needs to run.
type interpreter struct {
	exe     string   // the real executable (symlinks and pyenv shims resolved)
	folders []string // its installation folders, exposed read-only at the namespaces level
}

// findInterpreter resolves name (or python3 on PATH) by asking the interpreter
// itself, so that wrappers such as pyenv shims are replaced by the real binary.
func findInterpreter(name string) (interpreter, error) {
	if name == "" {
		name = "python3"
	}
	path, err := exec.LookPath(name)
	if err != nil {
		return interpreter{}, fmt.Errorf("sandbox: interpreter: %w", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	const script = "import sys, json; print(json.dumps([sys.executable, sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix]))"
	out, err := exec.CommandContext(ctx, path, "-I", "-c", script).Output()
	if err != nil {
		return interpreter{}, fmt.Errorf("sandbox: interpreter %s: %w", path, err)
	}
	var paths []string
	if err := json.Unmarshal(out, &paths); err != nil || len(paths) != 5 || paths[0] == "" {
		return interpreter{}, fmt.Errorf("sandbox: interpreter %s: unexpected answer %q", path, out)
	}
	exe, err := filepath.EvalSymlinks(paths[0])
	if err != nil {
		return interpreter{}, fmt.Errorf("sandbox: interpreter %s: %w", path, err)
	}
	in := interpreter{exe: exe}
	seen := map[string]bool{}
	for _, f := range append([]string{filepath.Dir(exe)}, paths[1:]...) {
		if r, err := filepath.EvalSymlinks(f); err == nil && !seen[r] {
			seen[r] = true
			in.folders = append(in.folders, r)
		}
	}
	return in, nil
}

func probeErrors(probes []Probe) string {
	var parts []string
	for _, p := range probes {
		if p.Err != "" {
			parts = append(parts, fmt.Sprintf("%s: %s", p.Level, p.Err))
		}
	}
	return strings.Join(parts, "; ")
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// RunOnce runs one program in a pool of one worker made for it.
func RunOnce(ctx context.Context, cfg Config, code string) (Result, error) {
	cfg.Workers = 1
	p, err := NewPool(cfg)
	if err != nil {
		return Result{}, err
	}
	defer p.Close()
	return p.Run(ctx, code)
}

// WriteReport writes Detect's findings for the default configuration (python3
// on PATH), the sandbox section of `mathrl doctor`.
func WriteReport(w io.Writer) error {
	_, err := io.WriteString(w, Detect(Config{}).Text())
	return err
}
