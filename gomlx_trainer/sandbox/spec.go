package sandbox

import "time"

// initEnv names the environment variable that turns a process of this binary
// into the sandbox's init (see init_linux.go). Its value is an initSpec in JSON.
const initEnv = "MATHRL_SANDBOX_INIT"

// initSpec is what the parent tells the init: how to build the program's world
// and what to execute in it.
type initSpec struct {
	Level  Level    `json:"level"`
	Exe    string   `json:"exe"`     // interpreter to execute
	Args   []string `json:"args"`    // its argv
	Env    []string `json:"env"`     // its whole environment
	Dir    string   `json:"dir"`     // working folder (inside the new root at the namespaces level)
	Root   string   `json:"root"`    // namespaces: empty host folder to build the new root on
	Code   string   `json:"code"`    // namespaces: host file copied to Dir/main.py
	Binds  []string `json:"binds"`   // namespaces: host folders shown read-only at the same path
	UserNS bool     `json:"user_ns"` // namespaces: running in a new user namespace (mathrl is not root)
	UID    int      `json:"uid"`     // uid and gid to switch to; -1 keeps the current ones
	Cgroup []string `json:"cgroup"`  // the worker's cgroup folders to join first
	Disk   int64    `json:"disk"`    // namespaces: size of each private tmpfs
	Limits Limits   `json:"limits"`

	// Stall is for tests: when set, the init starts a goroutine that blocks in
	// a system call (as one of another package of the binary may), and the
	// program's process sleeps this long once it has joined its worker's
	// cgroups (as a join slowed by a busy machine does). See entry.start.
	Stall time.Duration `json:"stall,omitempty"`
}

// Paths the program sees at the namespaces level.
const (
	nsWorkDir = "/sandbox"
	nsTmpDir  = "/tmp"
)

// systemFolders are shown read-only at the namespaces level (when they exist;
// symbolic links such as /bin -> usr/bin are recreated as links).
var systemFolders = []string{"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc"}
