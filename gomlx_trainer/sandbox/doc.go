// Package sandbox runs model-written Python programs, contained: the
// code_interpreter tool of tool-integrated RL. It owns everything between the
// code text and the tool result (isolation, limits, output capture, the text
// the model sees) and nothing about models or sampling.
//
// # Use
//
//	p, err := sandbox.NewPool(sandbox.Config{Workers: 8}) // zero fields take Default()
//	defer p.Close()
//	r, err := p.Run(ctx, "print(2**100)")                 // err: only when the sandbox itself failed
//	text := r.ToolResponse()                              // what the model sees
//
// Run blocks until one of the Workers is free; cancelling ctx kills the
// program. `mathrl sandbox exec` runs one program and prints its Result as
// JSON; `mathrl doctor` reports which isolation this machine offers.
//
// # Design: the binary is its own init
//
// Go cannot run its runtime in a child between fork and exec, so the parent
// starts this same binary (os.Executable) with the MATHRL_SANDBOX_INIT
// environment variable holding the plan in JSON. An init function of this
// package sees the variable before main runs (so it works from the mathrl
// binary and from any test binary that imports the package), builds the
// program's world, and forks the program's process, which sets the resource
// limits and executes the interpreter; the init waits for it and ends as it
// did (with its exit code, or killed by its signal):
//
//  1. The parent creates a temporary folder holding main.py (named after
//     mathrl's pid: a pool removes the folders and cgroups left by a mathrl
//     process that was killed during a run), and starts the
//     init with syscall.SysProcAttr: Setpgid, Pdeathsig SIGKILL and, at the
//     namespaces level, Cloneflags CLONE_NEWNET|NEWNS|NEWIPC|NEWUTS
//     (plus CLONE_NEWUSER, mapping uid 0 to mathrl's uid, when not root).
//     Standard input is /dev/null; the environment holds only the plan.
//  2. The init opens its worker's cgroups; at the namespaces level it then
//     builds a tmpfs root holding read-only binds of /usr, /bin, /lib*, /sbin,
//     /etc and the interpreter's installation folders (so an interpreter under
//     a private home such as pyenv's still runs), /dev/null, zero, full,
//     random and urandom, and three private tmpfs of Config.Disk bytes each:
//     the working folder /sandbox (also HOME), /tmp and /dev/shm.
//  3. It forks the program's process (in a new PID namespace, whose init it
//     is, at the namespaces level). That process has a single thread, and
//     until its exec it makes raw system calls only, in functions without
//     preemption points, as the standard library's own fork and exec does:
//     it mounts a fresh /proc, pivots into the root, detaches the host's and
//     remounts its own read-only (namespaces level); joins the worker's
//     cgroups (only the program ever counts against their task limit, never
//     the Go runtime's threads, which stay in the init); switches to the
//     worker's dedicated uid and gid (root only; or, in a user namespace,
//     drops every capability and locks the securebits), sets no_new_privs and
//     Pdeathsig again, sets RLIMIT_CPU, AS, FSIZE, NPROC, NOFILE and CORE=0,
//     and executes `python3 -I -B -X utf8 main.py` with an environment of
//     PATH, HOME, TMPDIR, LANG, LC_ALL, USER, LOGNAME, MPLBACKEND and
//     *_NUM_THREADS=1 only. Setup errors go back on a close-on-exec pipe, so
//     they are told apart from the program's own.
//  4. The parent waits for the exit (or kills the process group at the
//     timeout), and before reaping the program kills what it left: at the
//     namespaces level the kernel has already killed the whole PID namespace
//     with its init, the program; at the uid level every process of the worker's uid is
//     killed (pinned by pidfd, so that a reused pid is never hit), and the
//     worker waits (at most 5 s) until the system's init has reaped them, since
//     until then they count against the next program's RLIMIT_NPROC; at the
//     rlimits level every process still holding the output pipes is killed,
//     except mathrl's own forks that have not executed yet (they hold every
//     descriptor of mathrl, read ends included, until their exec: another
//     worker's program being started). It then removes the temporary folder.
//
// # Levels
//
// NewPool probes the levels in order and uses the strongest that runs a test
// program: LevelNamespaces, then LevelUID when running as root, or
// LevelRlimits when not. Running as root it never falls back to LevelRlimits by itself,
// since that would give hostile code root; ask for it with Config.Isolation.
// What each level contains:
//
//   - namespaces: no network at all (own network namespace with a down
//     loopback); sees only its own processes, and all of them die with it;
//     sees only the system folders and the interpreter, read-only; writes
//     only its tmpfs folders (bounded by Config.Disk); runs as a dedicated
//     uid (or as a capability-less root of its own user namespace); resource
//     limits.
//   - uid: resource limits; a dedicated unprivileged uid per worker, which
//     cannot signal mathrl, read private files or write where others may not,
//     and whose every process is killed after the call. It can use the
//     network, read world-readable files (the interpreter must be one: a
//     pyenv in a private home folder is not, /usr/bin/python3 is), write
//     world-writable folders such as /tmp (where the next program of the same
//     worker finds what it left), and fill the disk one Config.FileSize file
//     at a time.
//   - rlimits: resource limits and a process group only. The program runs as
//     mathrl's user: it can use the network, read, write and delete whatever
//     mathrl can (mathrl's environment too, through /proc), signal mathrl,
//     and a process that leaves the process group and closes its output
//     outlives the call. Run only trusted code this way.
//
// On top of any level, when the cgroup cpu and pids controllers are writable
// (cgroup v1, or v2), each worker gets its own cgroup: at most one CPU, an
// equal CPU share with the other workers however many processes or threads a
// program starts, and at most Config.Processes tasks.
//
// # Limits
//
// RLIMIT_CPU counts CPU time over all threads of a process (SIGXCPU at
// Config.CPUSeconds, SIGKILL a second later); RLIMIT_AS makes Python raise
// MemoryError; RLIMIT_FSIZE makes writes fail with EFBIG (Python ignores
// SIGXFSZ); RLIMIT_NPROC counts processes and threads of the sandbox's uid,
// which is why each worker has its own (at the rlimits level it is not set,
// since it would count all of mathrl's user's processes, and it does not bind
// root: there only the cgroup bounds processes); the wall
// clock (Config.Timeout) kills the process group with SIGKILL. Output is
// read as it comes and capped per stream at Config.MaxOutput bytes, keeping
// the head and the tail around a "[... N bytes cut ...]" line; invalid UTF-8
// becomes U+FFFD. See Result.ToolResponse for the text the model sees.
package sandbox
