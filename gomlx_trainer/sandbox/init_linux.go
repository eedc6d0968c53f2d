package sandbox

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"syscall"
	"unsafe"
)

// The sandbox's init is this same binary, started by the parent with initEnv
// set (and, at the namespaces level, already inside new namespaces). Before
// main runs, it builds the program's view of the file system, then forks the
// program's process, which joins its worker's cgroup, sets the resource
// limits, drops privileges and executes the interpreter; the init waits for
// it and ends as it did. Setup errors go to file descriptor 3, which the exec
// closes on success.
func init() {
	if spec, ok := os.LookupEnv(initEnv); ok {
		initMain(spec)
	}
}

// initMain does everything that needs the Go runtime (build the root, open
// the cgroups' files, prepare the exec's arguments and every message), then
// forks the program's process (see entry.start) and ends as it does.
func initMain(specJSON string) {
	report := os.NewFile(3, "setup")
	if report == nil {
		os.Exit(127)
	}
	fail := func(err error) {
		fmt.Fprintf(report, "%v", err)
		os.Exit(127)
	}
	syscall.CloseOnExec(3)
	// Pins the goroutine to this thread, whose signal mask start changes.
	runtime.LockOSThread()
	var s initSpec
	if err := json.Unmarshal([]byte(specJSON), &s); err != nil {
		fail(fmt.Errorf("init: spec: %w", err))
	}
	cgroups, err := openCgroups(s.Cgroup) // before the host's file system is gone
	if err != nil {
		fail(fmt.Errorf("init: %w", err))
	}
	if s.Level == LevelNamespaces {
		if err := buildRoot(s); err != nil {
			fail(fmt.Errorf("init: %w", err))
		}
	}
	// The address-space limit is far below what the Go runtime reserves, so
	// everything execve needs is allocated first, and nothing is allocated
	// in the program's process.
	e, err := prepareEntry(s, cgroups)
	if err != nil {
		fail(fmt.Errorf("init: %w", err))
	}
	if s.Stall > 0 {
		go blockInSyscall()
	}
	pid, errno := e.start()
	if errno != 0 {
		fail(fmt.Errorf("init: fork: %w", errno))
	}
	var ws syscall.WaitStatus
	for {
		_, err = syscall.Wait4(pid, &ws, 0, nil)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		fail(fmt.Errorf("init: wait: %w", err))
	}
	endAs(ws)
}

// entry is everything the program's process does from the fork to the exec,
// prepared beforehand: the calls' arguments and the messages of their
// failures, so that it needs nothing of the Go runtime.
type entry struct {
	cloneFlags uintptr    // SIGCHLD, and CLONE_NEWPID at the namespaces level
	root       *rootEntry // namespaces: the new root to pivot into
	dir        *byte      // working folder (inside the new root at the namespaces level)
	dirMsg     string
	cgroups    []cgroupFile
	stall      syscall.Timespec // initSpec.Stall
	uid        int              // -1: keep
	userNS     bool
	limits     []rlimit
	exe        *byte
	argv       []*byte
	envv       []*byte
	execMsg    string
	errnos     [256]string // the text of each errno
}

// rootEntry is the last part of the namespaces level's root, which the
// program's process does itself because it needs the new PID namespace: it
// mounts a fresh /proc (showing that namespace only) while the host's is
// still visible, as a user namespace requires, then pivots into the root,
// detaches the host's and remounts its own read-only.
type rootEntry struct {
	dir, proc, procType, dot, slash, empty *byte
}

// prepareEntry prepares the program's process: its entry into the cgroups and
// the exec of s.Exe.
func prepareEntry(s initSpec, cgroups []cgroupFile) (*entry, error) {
	e := &entry{cloneFlags: uintptr(syscall.SIGCHLD), cgroups: cgroups, stall: syscall.NsecToTimespec(s.Stall.Nanoseconds()),
		uid: s.UID, userNS: s.UserNS, limits: rlimits(s.Limits), dirMsg: "init: chdir " + s.Dir, execMsg: "init: exec " + s.Exe}
	if s.Level == LevelNamespaces {
		e.cloneFlags |= syscall.CLONE_NEWPID
		e.root = &rootEntry{}
		for _, f := range []struct {
			p **byte
			s string
		}{{&e.root.dir, s.Root}, {&e.root.proc, s.Root + "/proc"}, {&e.root.procType, "proc"},
			{&e.root.dot, "."}, {&e.root.slash, "/"}, {&e.root.empty, ""}} {
			var err error
			if *f.p, err = syscall.BytePtrFromString(f.s); err != nil {
				return nil, err
			}
		}
	}
	var err error
	if e.dir, err = syscall.BytePtrFromString(s.Dir); err != nil {
		return nil, err
	}
	if e.exe, err = syscall.BytePtrFromString(s.Exe); err != nil {
		return nil, err
	}
	if e.argv, err = syscall.SlicePtrFromStrings(s.Args); err != nil {
		return nil, err
	}
	if e.envv, err = syscall.SlicePtrFromStrings(s.Env); err != nil {
		return nil, err
	}
	for i := range e.errnos {
		e.errnos[i] = syscall.Errno(i).Error()
	}
	return e, nil
}

// start forks the program's process, which runs e.enter and never returns
// here; in the init it returns the process's pid.
//
// The fork's child has one thread, the one that forked, so nothing but the
// program ever enters the worker's cgroup: the Go runtime's threads stay in
// the init, outside it, where the runtime may start more as it pleases (in
// a cgroup its threads already filled, pids.max, one it started would fail
// and crash the process). The child is a copy of the init without the
// runtime's other threads, so until its exec it must not enter the runtime:
// start, enter and all they call are nosplit, which leaves them without
// preemption points, and make only raw system calls, as the standard
// library's own fork and exec does. Signals are blocked across the fork, so
// that none reaches the runtime's handlers in the child.
//
//go:nosplit
//go:norace
func (e *entry) start() (int, syscall.Errno) {
	all, old := ^uint64(0), uint64(0)
	syscall.RawSyscall6(syscall.SYS_RT_SIGPROCMASK, sigSetMask, uintptr(unsafe.Pointer(&all)), uintptr(unsafe.Pointer(&old)), 8, 0, 0)
	pid, _, errno := syscall.RawSyscall6(syscall.SYS_CLONE, e.cloneFlags, 0, 0, 0, 0, 0)
	if errno == 0 && pid == 0 {
		e.enter(&old)
	}
	syscall.RawSyscall6(syscall.SYS_RT_SIGPROCMASK, sigSetMask, uintptr(unsafe.Pointer(&old)), 0, 8, 0, 0)
	return int(pid), errno
}

// sigSetMask is SIG_SETMASK of rt_sigprocmask.
const sigSetMask = 2

// enter is the program's process: it puts back the default action of every
// signal the runtime handles and the init's signal mask, finishes the root at
// the namespaces level, joins the worker's cgroups, drops privileges, sets
// the resource limits and executes the interpreter; on failure it reports on
// file descriptor 3 and exits. Joining is allowed past the cgroup's task
// limit, and this process is a single task. See start.
//
//go:nosplit
//go:norace
func (e *entry) enter(mask *uint64) {
	defaultSignals()
	syscall.RawSyscall6(syscall.SYS_RT_SIGPROCMASK, sigSetMask, uintptr(unsafe.Pointer(mask)), 0, 8, 0, 0)
	if e.root != nil {
		if step, errno := e.root.enter(); errno != 0 {
			e.fail(step, errno)
		}
	}
	if _, _, errno := syscall.RawSyscall(syscall.SYS_CHDIR, uintptr(unsafe.Pointer(e.dir)), 0, 0); errno != 0 {
		e.fail(e.dirMsg, errno)
	}
	for i := range e.cgroups {
		if errno := e.cgroups[i].join(); errno != 0 {
			e.fail(e.cgroups[i].joinMsg, errno)
		}
	}
	if e.stall.Sec != 0 || e.stall.Nsec != 0 {
		syscall.RawSyscall(syscall.SYS_NANOSLEEP, uintptr(unsafe.Pointer(&e.stall)), 0, 0)
	}
	if step, errno := e.dropPrivileges(); errno != 0 {
		e.fail(step, errno)
	}
	for i := range e.limits {
		l := &e.limits[i]
		if _, _, errno := syscall.RawSyscall6(syscall.SYS_PRLIMIT64, 0, uintptr(l.resource),
			uintptr(unsafe.Pointer(&l.value)), 0, 0, 0); errno != 0 {
			e.fail(l.msg, errno)
		}
	}
	_, _, errno := syscall.RawSyscall(syscall.SYS_EXECVE, uintptr(unsafe.Pointer(e.exe)),
		uintptr(unsafe.Pointer(&e.argv[0])), uintptr(unsafe.Pointer(&e.envv[0])))
	e.fail(e.execMsg, errno)
}

// defaultSignals gives every signal that has a handler its default action
// back (ignored ones stay ignored, as across an exec).
//
//go:nosplit
//go:norace
func defaultSignals() {
	var act, dfl [4]uint64 // struct sigaction: the handler comes first, SIG_DFL is 0
	for sig := uintptr(1); sig <= 64; sig++ {
		if sig == uintptr(syscall.SIGKILL) || sig == uintptr(syscall.SIGSTOP) {
			continue
		}
		if _, _, errno := syscall.RawSyscall6(syscall.SYS_RT_SIGACTION, sig, 0, uintptr(unsafe.Pointer(&act)), 8, 0, 0); errno != 0 {
			continue
		}
		if act[0] != 0 && act[0] != 1 { // neither SIG_DFL nor SIG_IGN
			syscall.RawSyscall6(syscall.SYS_RT_SIGACTION, sig, uintptr(unsafe.Pointer(&dfl)), 0, 8, 0, 0)
		}
	}
}

// enter mounts /proc, pivots into the root, detaches the host's and remounts
// the root read-only; on error it returns the failed step's message.
//
//go:nosplit
//go:norace
func (r *rootEntry) enter() (string, syscall.Errno) {
	const nosuidNodev = syscall.MS_NOSUID | syscall.MS_NODEV
	if errno := mount(r.procType, r.proc, r.procType, nosuidNodev|syscall.MS_NOEXEC, r.empty); errno != 0 {
		return "init: mount /proc", errno
	}
	if _, _, errno := syscall.RawSyscall(syscall.SYS_CHDIR, uintptr(unsafe.Pointer(r.dir)), 0, 0); errno != 0 {
		return "init: chdir to the root", errno
	}
	if _, _, errno := syscall.RawSyscall(syscall.SYS_PIVOT_ROOT, uintptr(unsafe.Pointer(r.dot)), uintptr(unsafe.Pointer(r.dot)), 0); errno != 0 {
		return "init: pivot_root", errno
	}
	if _, _, errno := syscall.RawSyscall(syscall.SYS_UMOUNT2, uintptr(unsafe.Pointer(r.dot)), syscall.MNT_DETACH, 0); errno != 0 {
		return "init: detach host root", errno
	}
	if _, _, errno := syscall.RawSyscall(syscall.SYS_CHDIR, uintptr(unsafe.Pointer(r.slash)), 0, 0); errno != 0 {
		return "init: chdir /", errno
	}
	flags := syscall.MS_REMOUNT | syscall.MS_BIND | syscall.MS_RDONLY | nosuidNodev
	if errno := mount(r.empty, r.slash, r.empty, uintptr(flags), r.empty); errno != 0 {
		return "init: remount root read-only", errno
	}
	return "", 0
}

//go:nosplit
//go:norace
func mount(source, target, fstype *byte, flags uintptr, data *byte) syscall.Errno {
	_, _, errno := syscall.RawSyscall6(syscall.SYS_MOUNT, uintptr(unsafe.Pointer(source)), uintptr(unsafe.Pointer(target)),
		uintptr(unsafe.Pointer(fstype)), flags, uintptr(unsafe.Pointer(data)), 0)
	return errno
}

// fail writes "msg: <errno's text>" on file descriptor 3 and ends the
// program's process, with raw system calls only.
//
//go:nosplit
//go:norace
func (e *entry) fail(msg string, errno syscall.Errno) {
	text := "unknown error"
	if uint(errno) < uint(len(e.errnos)) {
		text = e.errnos[errno]
	}
	for _, part := range [...]string{msg, ": ", text} {
		if len(part) > 0 {
			syscall.RawSyscall(syscall.SYS_WRITE, 3, uintptr(unsafe.Pointer(unsafe.StringData(part))), uintptr(len(part)))
		}
	}
	syscall.RawSyscall(syscall.SYS_EXIT_GROUP, 127, 0, 0)
}

// endAs ends the init as the program's process ended: with its exit code, or
// killed by the same signal (without a core dump), so that the parent reads
// the program's end from the init's.
func endAs(ws syscall.WaitStatus) {
	if ws.Exited() {
		os.Exit(ws.ExitStatus())
	}
	if !ws.Signaled() {
		os.Exit(127)
	}
	sig := ws.Signal()
	syscall.Setrlimit(syscall.RLIMIT_CORE, &syscall.Rlimit{})
	var dfl [4]uint64
	syscall.RawSyscall6(syscall.SYS_RT_SIGACTION, uintptr(sig), uintptr(unsafe.Pointer(&dfl)), 0, 8, 0, 0)
	none := uint64(0)
	syscall.RawSyscall6(syscall.SYS_RT_SIGPROCMASK, sigSetMask, uintptr(unsafe.Pointer(&none)), 0, 8, 0, 0)
	syscall.Tgkill(syscall.Getpid(), syscall.Gettid(), sig)
	os.Exit(128 + int(sig))
}

// blockInSyscall reads from a pipe that no one writes to (see initSpec.Stall).
func blockInSyscall() {
	var fds [2]int
	if err := syscall.Pipe2(fds[:], syscall.O_CLOEXEC); err != nil {
		return
	}
	var b [1]byte
	syscall.Read(fds[0], b[:])
}

const rlimitNPROC = 6 // RLIMIT_NPROC, not exported by package syscall

// rlimit is one resource limit to set.
type rlimit struct {
	msg      string // "init: setrlimit <name>", the message of a failure
	resource int
	value    syscall.Rlimit
}

// rlimits lists the resource limits the interpreter runs under. The CPU limit
// sends SIGXCPU at l.CPUSeconds and SIGKILL one second later; RLIMIT_NPROC is
// left alone when l.Processes is 0.
func rlimits(l Limits) []rlimit {
	cpu := uint64(l.CPUSeconds)
	same := func(v int64) syscall.Rlimit { return syscall.Rlimit{Cur: uint64(v), Max: uint64(v)} }
	limits := []rlimit{
		{"init: setrlimit cpu", syscall.RLIMIT_CPU, syscall.Rlimit{Cur: cpu, Max: cpu + 1}},
		{"init: setrlimit fsize", syscall.RLIMIT_FSIZE, same(l.FileSize)},
		{"init: setrlimit nofile", syscall.RLIMIT_NOFILE, same(int64(l.OpenFiles))},
		{"init: setrlimit core", syscall.RLIMIT_CORE, same(0)},
		{"init: setrlimit as", syscall.RLIMIT_AS, same(l.Memory)},
	}
	if l.Processes > 0 {
		limits = append(limits, rlimit{"init: setrlimit nproc", rlimitNPROC, same(int64(l.Processes))})
	}
	return limits
}

// prctl options used below (linux/prctl.h, linux/securebits.h).
const (
	prSetPdeathsig   = 1
	prSetSecurebits  = 28
	prSetNoNewPrivs  = 38
	prCapBsetDrop    = 24
	securebitsLocked = 0x2f // NOROOT, NO_SETUID_FIXUP and KEEP_CAPS, each locked
)

//go:nosplit
func prctl(option, arg uintptr) syscall.Errno {
	_, _, errno := syscall.RawSyscall6(syscall.SYS_PRCTL, option, arg, 0, 0, 0, 0)
	return errno
}

// dropPrivileges switches to the dedicated uid, or (in a user namespace, where
// there is only uid 0) removes every capability for good; then it forbids
// gaining privileges and asks for SIGKILL when the parent dies (switching uid
// clears that request, so it is made again here). The calls are raw, so they
// change the calling thread only: the one that executes the interpreter, which
// the exec leaves as the only one. On error it returns the failed step's
// message.
//
//go:nosplit
func (e *entry) dropPrivileges() (string, syscall.Errno) {
	if e.uid >= 0 {
		id := uintptr(e.uid)
		if _, _, errno := syscall.RawSyscall(syscall.SYS_SETGROUPS, 0, 0, 0); errno != 0 {
			return "init: setgroups", errno
		}
		if _, _, errno := syscall.RawSyscall(syscall.SYS_SETRESGID, id, id, id); errno != 0 {
			return "init: setresgid", errno
		}
		if _, _, errno := syscall.RawSyscall(syscall.SYS_SETRESUID, id, id, id); errno != 0 {
			return "init: setresuid", errno
		}
	} else if e.userNS {
		for c := uintptr(0); c < 64; c++ {
			if errno := prctl(prCapBsetDrop, c); errno != 0 && errno != syscall.EINVAL {
				return "init: drop capabilities", errno
			}
		}
		if errno := prctl(prSetSecurebits, securebitsLocked); errno != 0 {
			return "init: securebits", errno
		}
	}
	if errno := prctl(prSetNoNewPrivs, 1); errno != 0 {
		return "init: no_new_privs", errno
	}
	if errno := prctl(prSetPdeathsig, uintptr(syscall.SIGKILL)); errno != 0 {
		return "init: pdeathsig", errno
	}
	return "", 0
}

// buildRoot makes the namespaces level's file system: a tmpfs root holding
// read-only binds of the system folders and the interpreter, device nodes,
// and private tmpfs folders for the work folder, /tmp and /dev/shm. The
// program's process then mounts its /proc and pivots into it (rootEntry).
func buildRoot(s initSpec) error {
	const nosuidNodev = syscall.MS_NOSUID | syscall.MS_NODEV
	if err := syscall.Mount("", "/", "", syscall.MS_REC|syscall.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("make mounts private: %w", err)
	}
	r := s.Root
	if err := syscall.Mount("tmpfs", r, "tmpfs", nosuidNodev, "size=1m,mode=0755"); err != nil {
		return fmt.Errorf("mount root tmpfs: %w", err)
	}
	for _, f := range append(append([]string(nil), systemFolders...), s.Binds...) {
		if err := showReadOnly(r, f); err != nil {
			return err
		}
	}
	// --- /dev: a few device nodes, the usual links, and a tmpfs /dev/shm
	if err := os.MkdirAll(r+"/dev", 0o755); err != nil {
		return err
	}
	for _, d := range []string{"null", "zero", "full", "random", "urandom"} {
		if err := os.WriteFile(r+"/dev/"+d, nil, 0o644); err != nil {
			return err
		}
		if err := syscall.Mount("/dev/"+d, r+"/dev/"+d, "", syscall.MS_BIND, ""); err != nil {
			return fmt.Errorf("bind /dev/%s: %w", d, err)
		}
	}
	for name, target := range map[string]string{"fd": "/proc/self/fd", "stdin": "/proc/self/fd/0",
		"stdout": "/proc/self/fd/1", "stderr": "/proc/self/fd/2"} {
		if err := os.Symlink(target, r+"/dev/"+name); err != nil {
			return err
		}
	}
	owner := 0
	if s.UID >= 0 {
		owner = s.UID
	}
	size := fmt.Sprintf("size=%d", s.Disk)
	for _, t := range []struct{ dir, opts string }{
		{"/dev/shm", size + ",mode=1777"},
		{nsTmpDir, size + ",mode=1777"},
		{nsWorkDir, fmt.Sprintf("%s,mode=0700,uid=%d,gid=%d", size, owner, owner)},
	} {
		if err := os.MkdirAll(r+t.dir, 0o755); err != nil {
			return err
		}
		if err := syscall.Mount("tmpfs", r+t.dir, "tmpfs", nosuidNodev, t.opts); err != nil {
			return fmt.Errorf("mount tmpfs %s: %w", t.dir, err)
		}
	}
	// The program's process mounts a fresh /proc here (see rootEntry).
	if err := os.MkdirAll(r+"/proc", 0o555); err != nil {
		return err
	}
	// --- the program, readable and owned by the sandbox user
	code, err := os.ReadFile(s.Code)
	if err != nil {
		return err
	}
	main := r + nsWorkDir + "/main.py"
	if err := os.WriteFile(main, code, 0o644); err != nil {
		return err
	}
	if err := os.Chown(main, owner, owner); err != nil {
		return err
	}
	if err := syscall.Sethostname([]byte("sandbox")); err != nil {
		return fmt.Errorf("sethostname: %w", err)
	}
	return nil
}

// showReadOnly binds host folder f at the same path under root, read-only and
// recursively. Missing folders are skipped; a symbolic link is recreated as is.
func showReadOnly(root, f string) error {
	fi, err := os.Lstat(f)
	if err != nil {
		return nil
	}
	dst := filepath.Join(root, f)
	if _, err := os.Lstat(dst); err == nil {
		return nil // already shown, e.g. the interpreter lives under /usr
	}
	if fi.Mode()&os.ModeSymlink != 0 {
		target, err := os.Readlink(f)
		if err != nil {
			return err
		}
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		return os.Symlink(target, dst)
	}
	if !fi.IsDir() {
		return nil
	}
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return err
	}
	if err := syscall.Mount(f, dst, "", syscall.MS_BIND|syscall.MS_REC, ""); err != nil {
		return fmt.Errorf("bind %s: %w", f, err)
	}
	if err := setReadOnly(dst); err != nil {
		return fmt.Errorf("read-only %s: %w", f, err)
	}
	return nil
}

// setReadOnly makes the mount at path and every mount below it read-only,
// nosuid and nodev (mount_setattr, Linux 5.12), else remounts the top one.
func setReadOnly(path string) error {
	const (
		sysMountSetattr = 442 // the same number on every architecture
		atFDCWD         = -100
		atRecursive     = 0x8000
		attrRdonly      = 0x1
		attrNosuid      = 0x2
		attrNodev       = 0x4
	)
	attr := struct{ set, clr, propagation, usernsFD uint64 }{set: attrRdonly | attrNosuid | attrNodev}
	p, err := syscall.BytePtrFromString(path)
	if err != nil {
		return err
	}
	fd := atFDCWD
	_, _, errno := syscall.Syscall6(sysMountSetattr, uintptr(fd), uintptr(unsafe.Pointer(p)),
		atRecursive, uintptr(unsafe.Pointer(&attr)), unsafe.Sizeof(attr), 0)
	if errno == 0 {
		return nil
	}
	if errno != syscall.ENOSYS {
		return errno
	}
	return syscall.Mount("", path, "", syscall.MS_REMOUNT|syscall.MS_BIND|syscall.MS_RDONLY|syscall.MS_NOSUID|syscall.MS_NODEV, "")
}
