package sandbox

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unsafe"
)

// isolation describes what level gives on this machine.
func (p *Pool) isolation(level Level) Isolation {
	iso := Isolation{Level: level, Rlimits: true, Cgroup: p.cgroups != nil}
	root := os.Geteuid() == 0
	uids := fmt.Sprintf("dedicated uid %d", p.uidBase)
	if p.cfg.Workers > 1 {
		uids = fmt.Sprintf("dedicated uids %d..%d (one per worker)", p.uidBase, p.uidBase+p.cfg.Workers-1)
	}
	switch level {
	case LevelNamespaces:
		iso.Network, iso.PIDs, iso.Mounts = true, true, true
		if root {
			iso.User = uids
		} else {
			iso.User = "root of its own user namespace, without capabilities"
		}
	case LevelUID:
		iso.User = uids
	case LevelRlimits:
		iso.User = fmt.Sprintf("same uid as mathrl (%d)", os.Geteuid())
	}
	return iso
}

// runAt runs one program at level as worker slot.
func (p *Pool) runAt(ctx context.Context, cfg Config, level Level, slot int, code string) (Result, error) {
	dir, err := os.MkdirTemp("", fmt.Sprintf("mathrl-sandbox-%d-", os.Getpid()))
	if err != nil {
		return Result{}, fmt.Errorf("sandbox: %w", err)
	}
	defer os.RemoveAll(dir)
	spec, err := p.plan(cfg, level, slot, dir, code)
	if err != nil {
		return Result{}, fmt.Errorf("sandbox: %w", err)
	}
	specJSON, err := json.Marshal(spec)
	if err != nil {
		return Result{}, fmt.Errorf("sandbox: %w", err)
	}
	pp, err := openPipes()
	if err != nil {
		return Result{}, fmt.Errorf("sandbox: %w", err)
	}
	defer pp.closeReadEnds()
	cmd := p.initCommand(level, spec, specJSON, pp)

	// Pdeathsig fires when the creating thread ends, not the process (see
	// syscall.SysProcAttr): keep this goroutine on its thread until the program is reaped.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	start := time.Now()
	err = cmd.Start()
	pp.closeWriteEnds()
	if err != nil {
		return Result{}, &SetupError{Level: level, Msg: "start: " + err.Error()}
	}
	pid := cmd.Process.Pid
	out := pp.drain(cfg.MaxOutput)

	// --- wait for the exit, the timeout or the caller. The program is not reaped
	// until its leftovers are killed, so that its pid (and process group id)
	// cannot be reused by another process in between.
	timedOut, canceled := waitProgram(ctx, pid, cfg.Timeout)
	duration := time.Since(start)

	// --- kill whatever the program left behind, reap it, then drain its output
	killGroup(pid)
	switch level {
	case LevelUID:
		killUID(spec.UID)
	case LevelRlimits:
		killPipeHolders(pp.outR, pp.errR)
	}
	cmd.Wait()
	if spec.UID >= 0 {
		waitUIDGone(spec.UID, orphanReapWait)
	}
	out.wait(time.Now().Add(2 * time.Second))
	if out.setup.Len() > 0 {
		return Result{}, &SetupError{Level: level, Msg: strings.TrimSpace(out.setup.String())}
	}
	r := p.result(cfg, level, spec, cmd.ProcessState, out)
	r.TimedOut, r.Duration = timedOut, duration
	r.Limit = limitHit(cfg, cmd.ProcessState, timedOut, canceled)
	return r, nil
}

// removeStaleFolders removes the temporary folders of runs whose mathrl
// process ended before it could (killed during the run, say); each folder is
// named after its process (see runAt). Like removeStaleCgroups, it takes a
// process id that /proc does not show for one that ended.
func removeStaleFolders() {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), "mathrl-sandbox-*-*"))
	for _, d := range dirs {
		if ownerEnded(filepath.Base(d)) {
			os.RemoveAll(d)
		}
	}
}

// programPipes are a program's stdout and stderr, and fd 3, on which the init
// reports setup errors: mathrl keeps the read ends, the program gets the
// write ends.
type programPipes struct {
	outR, outW, errR, errW, setupR, setupW *os.File
}

// openPipes opens the three pipes; on error none is left open.
func openPipes() (*programPipes, error) {
	var pp programPipes
	ends := []*[2]**os.File{{&pp.outR, &pp.outW}, {&pp.errR, &pp.errW}, {&pp.setupR, &pp.setupW}}
	for i, e := range ends {
		r, w, err := os.Pipe()
		if err != nil {
			for _, done := range ends[:i] {
				(*done[0]).Close()
				(*done[1]).Close()
			}
			return nil, err
		}
		*e[0], *e[1] = r, w
	}
	return &pp, nil
}

func (pp *programPipes) closeWriteEnds() {
	pp.outW.Close()
	pp.errW.Close()
	pp.setupW.Close()
}

func (pp *programPipes) closeReadEnds() {
	pp.outR.Close()
	pp.errR.Close()
	pp.setupR.Close()
}

// programOutput is what a program wrote, copied from its pipes as it runs.
type programOutput struct {
	pp             *programPipes
	stdout, stderr *capped
	setup          bytes.Buffer
	copied         chan struct{}
}

// drain copies the read ends into capped buffers (the setup report up to 4 KiB)
// until the pipes close.
func (pp *programPipes) drain(maxOutput int) *programOutput {
	o := &programOutput{pp: pp, stdout: newCapped(maxOutput), stderr: newCapped(maxOutput), copied: make(chan struct{}, 3)}
	go func() { io.Copy(o.stdout, pp.outR); o.copied <- struct{}{} }()
	go func() { io.Copy(o.stderr, pp.errR); o.copied <- struct{}{} }()
	go func() { io.Copy(&o.setup, io.LimitReader(pp.setupR, 4096)); o.copied <- struct{}{} }()
	return o
}

// wait waits for the copies to end, at the latest at deadline (a leftover
// that escaped the kills may still hold a write end).
func (o *programOutput) wait(deadline time.Time) {
	o.pp.outR.SetReadDeadline(deadline)
	o.pp.errR.SetReadDeadline(deadline)
	o.pp.setupR.SetReadDeadline(deadline)
	for range 3 {
		<-o.copied
	}
}

// initCommand is the command that starts mathrl's sandbox init with spec, in
// its own process group, killed if mathrl dies, and in new namespaces (all
// but the PID namespace) at the namespaces level.
func (p *Pool) initCommand(level Level, spec initSpec, specJSON []byte, pp *programPipes) *exec.Cmd {
	cmd := &exec.Cmd{
		Path: p.self,
		Args: []string{p.self, "sandbox-init"},
		// One P and no GC keep the init small: it only prepares the program's
		// process and waits for it (see initMain). HOME is set because the
		// init functions of other packages of the binary run first, and some
		// look it up (go-xla's, which writes to stderr when it is unset).
		Env:        []string{initEnv + "=" + string(specJSON), "GOMAXPROCS=1", "GOGC=off", "HOME=/"},
		Dir:        "/",
		Stdout:     pp.outW,
		Stderr:     pp.errW,
		ExtraFiles: []*os.File{pp.setupW},
		SysProcAttr: &syscall.SysProcAttr{
			Setpgid:   true,
			Pdeathsig: syscall.SIGKILL,
		},
	}
	if level == LevelNamespaces {
		// The program's process gets the new PID namespace from the init's fork
		// (see entry.start), so that it is that namespace's init.
		cmd.SysProcAttr.Cloneflags = syscall.CLONE_NEWNET | syscall.CLONE_NEWNS |
			syscall.CLONE_NEWIPC | syscall.CLONE_NEWUTS
		if spec.UserNS {
			cmd.SysProcAttr.Cloneflags |= syscall.CLONE_NEWUSER
			cmd.SysProcAttr.UidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getuid(), Size: 1}}
			cmd.SysProcAttr.GidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getgid(), Size: 1}}
		}
	}
	return cmd
}

// waitProgram waits until program pid exits, killing its process group when
// the timeout passes or ctx ends first. It does not reap the program.
func waitProgram(ctx context.Context, pid int, timeout time.Duration) (timedOut, canceled bool) {
	exited := make(chan struct{})
	go func() { waitExit(pid); close(exited) }()
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case <-exited:
	case <-timer.C:
		timedOut = true
		killGroup(pid)
		<-exited
	case <-ctx.Done():
		timedOut, canceled = true, true
		killGroup(pid)
		<-exited
	}
	return timedOut, canceled
}

// result is a finished program's Result, less its times and the limit it hit.
func (p *Pool) result(cfg Config, level Level, spec initSpec, ps *os.ProcessState, out *programOutput) Result {
	r := Result{Isolation: p.iso, Limits: spec.Limits, maxResponse: cfg.MaxResponse, timeout: cfg.Timeout}
	if r.Isolation.Level != level { // a probe
		r.Isolation = p.isolation(level)
	}
	r.UID = spec.UID
	if spec.UID < 0 {
		r.UID = os.Geteuid()
	}
	r.Stdout, r.StdoutTruncated = out.stdout.String()
	r.Stderr, r.StderrTruncated = out.stderr.String()
	ws, _ := ps.Sys().(syscall.WaitStatus)
	r.ExitCode = ps.ExitCode()
	if ws.Signaled() {
		r.Killed = true
		r.Signal = signalName(ws.Signal())
	}
	return r
}

// limitHit names the limit that ended a program ("" when none did).
func limitHit(cfg Config, ps *os.ProcessState, timedOut, canceled bool) string {
	ws, _ := ps.Sys().(syscall.WaitStatus)
	switch {
	case canceled:
		return "canceled"
	case timedOut:
		return "timeout"
	case ws.Signaled() && ws.Signal() == syscall.SIGXFSZ:
		return "file_size"
	case ws.Signaled() && ws.Signal() == syscall.SIGXCPU,
		ws.Signaled() && ws.Signal() == syscall.SIGKILL && cpuTime(ps) >= time.Duration(cfg.CPUSeconds)*time.Second:
		return "cpu"
	}
	return ""
}

// plan writes the program into a working folder under dir and returns what
// the init must do to run it at level as worker slot.
func (p *Pool) plan(cfg Config, level Level, slot int, dir, code string) (initSpec, error) {
	if err := os.Chmod(dir, 0o711); err != nil {
		return initSpec{}, err
	}
	work := filepath.Join(dir, "work")
	if err := os.Mkdir(work, 0o700); err != nil {
		return initSpec{}, err
	}
	codeFile := filepath.Join(work, "main.py")
	if err := os.WriteFile(codeFile, []byte(code), 0o644); err != nil {
		return initSpec{}, err
	}
	spec := initSpec{Level: level, Exe: p.interp.exe, UID: -1, Dir: work, Stall: p.stall, Limits: Limits{
		TimeoutSeconds: cfg.Timeout.Seconds(), CPUSeconds: cfg.CPUSeconds, Memory: cfg.Memory,
		FileSize: cfg.FileSize, Processes: cfg.Processes, OpenFiles: cfg.OpenFiles,
	}}
	if p.cgroups != nil {
		spec.Cgroup = p.cgroups.workers[slot]
	}
	if level != LevelRlimits && os.Geteuid() == 0 {
		spec.UID = p.uidBase + slot
	}
	tmp := work
	switch level {
	case LevelNamespaces:
		root := filepath.Join(dir, "root")
		if err := os.Mkdir(root, 0o700); err != nil {
			return initSpec{}, err
		}
		spec.Root, spec.Code, spec.Dir, spec.Disk = root, codeFile, nsWorkDir, cfg.Disk
		spec.Binds = p.interp.folders
		spec.UserNS = os.Geteuid() != 0
		spec.Limits.Disk = cfg.Disk
		tmp = nsTmpDir
	case LevelUID:
		if err := os.Chown(work, spec.UID, spec.UID); err != nil {
			return initSpec{}, err
		}
	case LevelRlimits:
		spec.Limits.Processes = 0 // RLIMIT_NPROC would count all of mathrl's user's processes
	}
	spec.Args = []string{p.interp.exe, "-I", "-B", "-X", "utf8", filepath.Join(spec.Dir, "main.py")}
	spec.Env = []string{
		"PATH=" + filepath.Dir(p.interp.exe) + ":/usr/local/bin:/usr/bin:/bin",
		"HOME=" + spec.Dir, "TMPDIR=" + tmp, "LANG=C.UTF-8", "LC_ALL=C.UTF-8",
		"USER=sandbox", "LOGNAME=sandbox", "MPLBACKEND=Agg",
		"OMP_NUM_THREADS=1", "OPENBLAS_NUM_THREADS=1", "MKL_NUM_THREADS=1",
	}
	return spec, nil
}

// cpuTime is the user plus system time of an ended process and its waited-for children.
func cpuTime(ps *os.ProcessState) time.Duration {
	return ps.UserTime() + ps.SystemTime()
}

// waitExit blocks until process pid has ended, without reaping it.
func waitExit(pid int) {
	const pPID, wExited, wNoWait = 1, 4, 0x1000000
	var info [128]byte // siginfo_t
	for {
		_, _, errno := syscall.Syscall6(syscall.SYS_WAITID, pPID, uintptr(pid),
			uintptr(unsafe.Pointer(&info[0])), wExited|wNoWait, 0, 0)
		if errno != syscall.EINTR {
			return
		}
	}
}

// killGroup kills the process and its process group.
func killGroup(pid int) {
	syscall.Kill(-pid, syscall.SIGKILL)
	syscall.Kill(pid, syscall.SIGKILL)
}

// killUID kills every process of uid, repeating until none is left, so that
// processes forked meanwhile die too. Root only.
func killUID(uid int) {
	for try := 0; try < 200; try++ {
		pids := processesOf(func(st procStatus) bool { return st.uids[0] == uid || st.uids[1] == uid })
		if len(pids) == 0 {
			return
		}
		for _, pid := range pids {
			killIf(pid, func(st procStatus) bool { return st.uids[0] == uid || st.uids[1] == uid })
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// orphanReapWait bounds how long a run waits for its killed orphans to be
// reaped; the system's init was seen to reap them every 2 s.
const orphanReapWait = 5 * time.Second

// waitUIDGone waits, at most limit, until no process of uid is left, zombies
// included, killing live ones again. A killed program's orphans are reaped by
// the system's init, which can take seconds, and until then they count against
// RLIMIT_NPROC of the next program this worker runs as the same uid: without
// the wait, that program's first fork could fail with EAGAIN. Runs that leave
// nothing behind pay one scan of /proc.
func waitUIDGone(uid int, limit time.Duration) {
	deadline := time.Now().Add(limit)
	ofUID := func(st procStatus) bool { return st.uids[0] == uid || st.uids[1] == uid }
	for {
		left := false
		for _, pid := range allPIDs() {
			st, err := readStatus(pid)
			if err != nil || !ofUID(st) {
				continue
			}
			left = true
			if st.state != "Z" && st.state != "X" {
				killIf(pid, ofUID)
			}
		}
		if !left || time.Now().After(deadline) {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// killPipeHolders kills every process that holds one of the pipes open: at the
// rlimits level this finds background processes that left the process group.
//
// mathrl's own children that hold a read end are spared. Only mathrl ever had
// the read ends, and they are close-on-exec, so such a child is a fork of
// mathrl that has not executed its program yet: until its exec it holds every
// descriptor mathrl has, and it is typically another worker's program being
// started, which would otherwise be killed before it ran. The program's own
// processes hold only the write ends.
func killPipeHolders(pipes ...*os.File) {
	want := map[string]bool{}
	for _, f := range pipes {
		if fi, err := f.Stat(); err == nil {
			if st, ok := fi.Sys().(*syscall.Stat_t); ok {
				want[fmt.Sprintf("pipe:[%d]", st.Ino)] = true
			}
		}
	}
	self := os.Getpid()
	leftover := func(st procStatus) bool {
		read, write := pipeEnds(st.pid, want)
		forkOfMathrl := read && st.ppid == self
		return (read || write) && !forkOfMathrl
	}
	for try := 0; try < 50; try++ {
		found := false
		for _, pid := range allPIDs() {
			if pid == self {
				continue
			}
			if read, write := pipeEnds(pid, want); !read && !write {
				continue
			}
			st, err := readStatus(pid)
			if err != nil || !leftover(st) {
				continue
			}
			killIf(pid, leftover) // checks again once the process is pinned
			found = true
		}
		if !found {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// pipeEnds reports whether process pid holds a read end and a write end of
// the pipes whose /proc links ("pipe:[inode]") are in want.
func pipeEnds(pid int, want map[string]bool) (read, write bool) {
	fds, _ := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	for _, fd := range fds {
		link, _ := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", pid, fd.Name()))
		if !want[link] {
			continue
		}
		info, err := os.ReadFile(fmt.Sprintf("/proc/%d/fdinfo/%s", pid, fd.Name()))
		if err != nil {
			continue // closed meanwhile
		}
		if fdFlags(info)&syscall.O_ACCMODE == syscall.O_RDONLY {
			read = true
		} else {
			write = true
		}
	}
	return read, write
}

// fdFlags is the "flags:" field (octal) of a /proc/PID/fdinfo/FD file.
func fdFlags(info []byte) int {
	for _, line := range strings.Split(string(info), "\n") {
		if v, ok := strings.CutPrefix(line, "flags:"); ok {
			n, _ := strconv.ParseInt(strings.TrimSpace(v), 8, 64)
			return int(n)
		}
	}
	return 0
}

// killIf kills process pid if it (still) matches. A pidfd pins the process
// before it is checked, so that a pid reused by another process in between is
// never signalled.
func killIf(pid int, match func(procStatus) bool) {
	const sysPidfdOpen, sysPidfdSendSignal = 434, 424 // the same on every architecture
	fd, _, errno := syscall.RawSyscall(sysPidfdOpen, uintptr(pid), 0, 0)
	if errno != 0 {
		return // gone already (or no pidfd support: better miss a process than kill another)
	}
	defer syscall.Close(int(fd))
	st, err := readStatus(pid)
	if err != nil || !match(st) {
		return
	}
	syscall.RawSyscall6(sysPidfdSendSignal, fd, uintptr(syscall.SIGKILL), 0, 0, 0, 0)
}

// procStatus is the part of /proc/PID/status the sandbox needs.
type procStatus struct {
	pid   int
	ppid  int
	state string
	uids  [4]int
}

// processesOf lists the live (non-zombie) processes for which match is true.
func processesOf(match func(procStatus) bool) []int {
	var pids []int
	for _, pid := range allPIDs() {
		st, err := readStatus(pid)
		if err != nil || st.state == "Z" || st.state == "X" {
			continue
		}
		if match(st) {
			pids = append(pids, pid)
		}
	}
	return pids
}

func allPIDs() []int {
	entries, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range entries {
		if pid, err := strconv.Atoi(e.Name()); err == nil {
			pids = append(pids, pid)
		}
	}
	return pids
}

func readStatus(pid int) (procStatus, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return procStatus{}, err
	}
	st := procStatus{pid: pid, uids: [4]int{-1, -1, -1, -1}}
	for _, line := range strings.Split(string(b), "\n") {
		key, val, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		f := strings.Fields(val)
		switch key {
		case "State":
			if len(f) > 0 {
				st.state = f[0]
			}
		case "PPid":
			if len(f) > 0 {
				st.ppid, _ = strconv.Atoi(f[0])
			}
		case "Uid":
			for i := 0; i < len(f) && i < 4; i++ {
				st.uids[i], _ = strconv.Atoi(f[i])
			}
		}
	}
	if st.state == "" {
		return st, errors.New("no state")
	}
	return st, nil
}

// signalName is the conventional name of a signal, such as "SIGKILL".
func signalName(s syscall.Signal) string {
	names := map[syscall.Signal]string{
		syscall.SIGHUP: "SIGHUP", syscall.SIGINT: "SIGINT", syscall.SIGQUIT: "SIGQUIT",
		syscall.SIGILL: "SIGILL", syscall.SIGTRAP: "SIGTRAP", syscall.SIGABRT: "SIGABRT",
		syscall.SIGBUS: "SIGBUS", syscall.SIGFPE: "SIGFPE", syscall.SIGKILL: "SIGKILL",
		syscall.SIGUSR1: "SIGUSR1", syscall.SIGSEGV: "SIGSEGV", syscall.SIGUSR2: "SIGUSR2",
		syscall.SIGPIPE: "SIGPIPE", syscall.SIGALRM: "SIGALRM", syscall.SIGTERM: "SIGTERM",
		syscall.SIGXCPU: "SIGXCPU", syscall.SIGXFSZ: "SIGXFSZ", syscall.SIGSYS: "SIGSYS",
	}
	if n, ok := names[s]; ok {
		return n
	}
	return fmt.Sprintf("signal %d", int(s))
}
