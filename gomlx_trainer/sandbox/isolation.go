package sandbox

import (
	"fmt"
	"strings"
)

// Level names how a program is contained, strongest first.
type Level string

const (
	// LevelNamespaces runs the program in its own network, PID, mount, IPC and
	// UTS namespaces, on a private read-only root that shows only the system
	// folders, the interpreter and private tmpfs folders, as a dedicated uid
	// (when mathrl runs as root) or as root of its own user namespace with no
	// capabilities (otherwise). Resource limits apply as at every level.
	LevelNamespaces Level = "namespaces"
	// LevelUID runs the program as a dedicated unprivileged uid in a folder of
	// its own, with resource limits; after it ends, every process of that uid
	// is killed. Needs root. The network and world-readable files stay reachable.
	LevelUID Level = "uid"
	// LevelRlimits runs the program as mathrl's own user with resource limits
	// in its own process group. It is not isolated: it can use the network,
	// read and write what mathrl can, and signal mathrl.
	LevelRlimits Level = "rlimits"
)

// levels lists the levels from strongest to weakest.
var levels = []Level{LevelNamespaces, LevelUID, LevelRlimits}

// Isolation says what contained a program.
type Isolation struct {
	Level   Level  `json:"level"`
	Network bool   `json:"network_ns"` // own network namespace: no network at all, not even the host's loopback
	PIDs    bool   `json:"pid_ns"`     // own PID namespace: sees only its processes, all of them die with it
	Mounts  bool   `json:"mount_ns"`   // private read-only root; writable only its tmpfs folders (working folder, /tmp, /dev/shm)
	User    string `json:"user"`       // whom the program runs as
	Rlimits bool   `json:"rlimits"`    // CPU, address space, file size, processes, open files
	Cgroup  bool   `json:"cgroup"`     // own cgroup per worker: at most one CPU, an equal CPU share, Processes tasks
	Note    string `json:"note,omitempty"`
}

// String is a one-line summary, e.g. "namespaces: network, pid, mount; dedicated uid 1073742848; rlimits".
func (iso Isolation) String() string {
	var parts []string
	if iso.Network {
		parts = append(parts, "network")
	}
	if iso.PIDs {
		parts = append(parts, "pid")
	}
	if iso.Mounts {
		parts = append(parts, "mount")
	}
	s := string(iso.Level) + ":"
	if len(parts) > 0 {
		s += " " + strings.Join(parts, ", ") + " namespaces;"
	}
	s += " " + iso.User
	if iso.Rlimits {
		s += "; rlimits"
	}
	if iso.Cgroup {
		s += "; cgroup per worker"
	}
	if iso.Note != "" {
		s += " (" + iso.Note + ")"
	}
	return s
}

// Probe is the outcome of trying one level on this machine.
type Probe struct {
	Level Level  `json:"level"`
	Err   string `json:"error,omitempty"` // why the level does not work here; "" if it does
}

// Report is what Detect found: every level tried and the one a Pool would use.
type Report struct {
	Interpreter string    `json:"interpreter"`
	Probes      []Probe   `json:"probes"`
	Active      Isolation `json:"active"`
	Cgroup      string    `json:"cgroup_error,omitempty"` // why workers have no cgroups of their own
	Err         string    `json:"error,omitempty"`        // no level works
}

// Text writes the report as a few lines for `mathrl doctor`.
func (r Report) Text() string {
	var b strings.Builder
	fmt.Fprintf(&b, "interpreter: %s\n", r.Interpreter)
	for _, p := range r.Probes {
		if p.Err == "" {
			fmt.Fprintf(&b, "%-10s available\n", p.Level)
		} else {
			fmt.Fprintf(&b, "%-10s unavailable: %s\n", p.Level, p.Err)
		}
	}
	if r.Cgroup != "" {
		fmt.Fprintf(&b, "%-10s unavailable: %s\n", "cgroup", r.Cgroup)
	} else {
		fmt.Fprintf(&b, "%-10s available\n", "cgroup")
	}
	if r.Err != "" {
		fmt.Fprintf(&b, "active: none: %s\n", r.Err)
	} else {
		fmt.Fprintf(&b, "active: %s\n", r.Active)
	}
	return b.String()
}
