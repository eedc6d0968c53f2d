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
// main runs, it builds the program's view of the file system, joins its
// worker's cgroup, sets the resource limits, drops privileges and executes
// the interpreter in its own place. Setup errors go to file descriptor 3,
// which the exec closes on success.
func init() {
	if spec, ok := os.LookupEnv(initEnv); ok {
		initMain(spec)
	}
}

// initMain does everything that needs the Go runtime first (build the root,
// open the cgroups' files, prepare the exec's arguments and every message),
// and only then enters the worker's cgroup and executes the interpreter (see
// enter): from the join to the exec the runtime must start no thread.
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
	// Pins the goroutine to this thread for the per-thread calls of enter, and
	// starts the runtime's template thread now, outside the cgroup.
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
	if err := syscall.Chdir(s.Dir); err != nil {
		fail(fmt.Errorf("init: chdir %s: %w", s.Dir, err))
	}
	// The address-space limit is far below what the Go runtime reserves, so
	// everything execve needs is allocated first, and nothing is allocated
	// between setting the limits and the execve.
	e, err := prepareEntry(s, cgroups)
	if err != nil {
		fail(fmt.Errorf("init: %w", err))
	}
	if s.Stall > 0 {
		go blockInSyscall()
	}
	e.enter()
}

// entry is everything the init does from joining its worker's cgroups to the
// exec, prepared beforehand: the calls' arguments and the messages of their
// failures, so that enter needs nothing of the Go runtime.
type entry struct {
	cgroups []cgroupFile
	stall   syscall.Timespec // initSpec.Stall
	uid     int              // -1: keep
	userNS  bool
	limits  []rlimit
	exe     *byte
	argv    []*byte
	envv    []*byte
	execMsg string
	errnos  [256]string // the text of each errno
}

// prepareEntry prepares the init's entry into the cgroups and the exec of s.Exe.
func prepareEntry(s initSpec, cgroups []cgroupFile) (*entry, error) {
	e := &entry{cgroups: cgroups, stall: syscall.NsecToTimespec(s.Stall.Nanoseconds()),
		uid: s.UID, userNS: s.UserNS, limits: rlimits(s.Limits), execMsg: "init: exec " + s.Exe}
	var err error
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

// enter joins the worker's cgroups, drops privileges, sets the resource
// limits and executes the interpreter, which leaves it as the cgroup's only
// task; on failure it reports on file descriptor 3 and ends the init.
//
// Joining is allowed past the cgroup's task limit, and the runtime's own
// threads already exceed a small one, so until the exec no thread can start in
// there: one the runtime tried to start would fail ("pthread_create failed")
// and crash the init. The runtime starts one when it deschedules this
// goroutine and finds no idle thread to hand the processor to (the init runs
// with one P, see initCommand; another package's goroutine may hold the idle
// thread in a system call), which any preemption point could do, since the
// scheduler asks for a preemption once a goroutine has run for 10 ms: a
// cgroup join slowed by a busy machine (it waits for every fork in progress)
// is enough. So enter and all it calls are nosplit, which leaves them without
// preemption points, and make only raw system calls.
//
//go:nosplit
func (e *entry) enter() {
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

// fail writes "msg: <errno's text>" on file descriptor 3 and ends the init,
// with raw system calls only.
//
//go:nosplit
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
// a fresh /proc, and private tmpfs folders for the work folder, /tmp and
// /dev/shm; then it pivots into it and drops the host's root.
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
	// A fresh /proc shows only the sandbox's own PID namespace.
	if err := os.MkdirAll(r+"/proc", 0o555); err != nil {
		return err
	}
	if err := syscall.Mount("proc", r+"/proc", "proc", nosuidNodev|syscall.MS_NOEXEC, ""); err != nil {
		return fmt.Errorf("mount /proc: %w", err)
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
	// --- pivot: the new root replaces the host's, whose mounts are then dropped
	if err := syscall.Chdir(r); err != nil {
		return err
	}
	if err := syscall.PivotRoot(".", "."); err != nil {
		return fmt.Errorf("pivot_root: %w", err)
	}
	if err := syscall.Unmount(".", syscall.MNT_DETACH); err != nil {
		return fmt.Errorf("detach host root: %w", err)
	}
	if err := syscall.Chdir("/"); err != nil {
		return err
	}
	if err := syscall.Mount("", "/", "", syscall.MS_REMOUNT|syscall.MS_BIND|syscall.MS_RDONLY|nosuidNodev, ""); err != nil {
		return fmt.Errorf("remount root read-only: %w", err)
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
