package sandbox

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"unsafe"
)

// workerCgroups gives each worker its own cgroup with the cpu and pids
// controllers: at most one CPU and cfg.Processes tasks per worker, and, since
// the kernel shares CPU between cgroups before the tasks within them, a
// program with many processes or threads cannot starve the other workers.
type workerCgroups struct {
	top     []string   // the pool's folders, one per hierarchy, removed by close
	workers [][]string // per worker: its folder in each hierarchy
}

// newWorkerCgroups creates the cgroups under mathrl's own, in cgroup v1's cpu
// and pids hierarchies or in cgroup v2. It fails when they are not writable.
func newWorkerCgroups(workers, processes int) (*workerCgroups, error) {
	hier, err := cgroupHierarchies()
	if err != nil {
		return nil, err
	}
	g := &workerCgroups{workers: make([][]string, workers)}
	name := fmt.Sprintf("mathrl-sandbox-%d-%d", os.Getpid(), cgroupSeq.Add(1))
	for _, h := range hier {
		removeStaleCgroups(h.dir)
		top := filepath.Join(h.dir, name)
		if err := os.Mkdir(top, 0o755); err != nil {
			g.close()
			return nil, fmt.Errorf("cgroup %s: %w", h.dir, err)
		}
		g.top = append(g.top, top)
		if h.v2 {
			if err := os.WriteFile(filepath.Join(top, "cgroup.subtree_control"), []byte("+cpu +pids"), 0o644); err != nil {
				g.close()
				return nil, fmt.Errorf("cgroup %s: enable cpu and pids: %w", top, err)
			}
		}
		for w := range workers {
			dir := filepath.Join(top, fmt.Sprintf("worker-%d", w))
			if err := os.Mkdir(dir, 0o755); err != nil {
				g.close()
				return nil, fmt.Errorf("cgroup %s: %w", dir, err)
			}
			g.workers[w] = append(g.workers[w], dir)
			var settings map[string]string
			switch {
			case h.v2:
				settings = map[string]string{"cpu.max": "100000 100000", "pids.max": fmt.Sprint(processes)}
			case h.controller == "cpu":
				settings = map[string]string{"cpu.cfs_period_us": "100000", "cpu.cfs_quota_us": "100000"}
			case h.controller == "pids":
				settings = map[string]string{"pids.max": fmt.Sprint(processes)}
			}
			for file, value := range settings {
				if err := os.WriteFile(filepath.Join(dir, file), []byte(value), 0o644); err != nil {
					g.close()
					return nil, fmt.Errorf("cgroup %s: %w", filepath.Join(dir, file), err)
				}
			}
		}
	}
	return g, nil
}

// cgroupSeq numbers the pools of this process.
var cgroupSeq atomic.Int64

// removeStaleCgroups removes the cgroups left by mathrl processes that ended
// without closing their pools.
func removeStaleCgroups(dir string) {
	tops, _ := filepath.Glob(filepath.Join(dir, "mathrl-sandbox-*-*"))
	for _, top := range tops {
		if !ownerEnded(filepath.Base(top)) {
			continue
		}
		workers, _ := filepath.Glob(filepath.Join(top, "worker-*"))
		for _, w := range workers {
			os.Remove(w)
		}
		os.Remove(top)
	}
}

// ownerEnded reports whether name, a cgroup or folder named
// mathrl-sandbox-PID-..., belongs to a mathrl process that has ended.
func ownerEnded(name string) bool {
	var pid int
	if _, err := fmt.Sscanf(name, "mathrl-sandbox-%d-", &pid); err != nil || pid <= 0 {
		return false
	}
	_, err := os.Stat(fmt.Sprintf("/proc/%d", pid))
	return err != nil
}

// close removes the pool's cgroups (they must be empty: no program running).
func (g *workerCgroups) close() {
	if g == nil {
		return
	}
	for _, dirs := range g.workers {
		for _, d := range dirs {
			os.Remove(d)
		}
	}
	for _, d := range g.top {
		os.Remove(d)
	}
}

// hierarchy is one mounted cgroup hierarchy, at mathrl's own cgroup.
type hierarchy struct {
	dir        string // mathrl's cgroup folder in this hierarchy
	controller string // v1: "cpu" or "pids"
	v2         bool
}

// cgroupHierarchies finds where mathrl's cgroup lives for cpu and pids: both
// v1 hierarchies, else the v2 one when it offers both controllers.
func cgroupHierarchies() ([]hierarchy, error) {
	own, err := ownCgroups()
	if err != nil {
		return nil, err
	}
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var v1 []hierarchy
	var v2 *hierarchy
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// id parent major:minor root mountpoint options ... - fstype source superoptions
		pre, post, ok := strings.Cut(sc.Text(), " - ")
		fields, tail := strings.Fields(pre), strings.Fields(post)
		if !ok || len(fields) < 5 || len(tail) < 3 {
			continue
		}
		root, mount := fields[3], fields[4]
		switch tail[0] {
		case "cgroup":
			for _, c := range strings.Split(tail[2], ",") {
				if (c == "cpu" || c == "pids") && own[c] != "" {
					v1 = append(v1, hierarchy{dir: filepath.Join(mount, relCgroup(own[c], root)), controller: c})
				}
			}
		case "cgroup2":
			if p, ok := own[""]; ok {
				v2 = &hierarchy{dir: filepath.Join(mount, relCgroup(p, root)), v2: true}
			}
		}
	}
	if len(v1) == 2 {
		return v1, nil
	}
	if v2 != nil && len(v1) == 0 {
		ctl, err := os.ReadFile(filepath.Join(v2.dir, "cgroup.controllers"))
		if err == nil && strings.Contains(" "+string(ctl)+" ", " cpu") && strings.Contains(string(ctl), "pids") {
			return []hierarchy{*v2}, nil
		}
	}
	return nil, errors.New("no writable cpu and pids cgroup controllers")
}

// ownCgroups maps each v1 controller (and "" for v2) to mathrl's cgroup path.
func ownCgroups() (map[string]string, error) {
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return nil, err
	}
	own := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 {
			continue
		}
		if parts[1] == "" {
			own[""] = parts[2]
			continue
		}
		for _, c := range strings.Split(parts[1], ",") {
			own[c] = parts[2]
		}
	}
	return own, nil
}

// relCgroup is the cgroup path p relative to the mount's root.
func relCgroup(p, root string) string {
	if root == "/" {
		return p
	}
	return strings.TrimPrefix(p, root)
}

// cgroupFile is a worker cgroup's cgroup.procs, opened by the init so that it
// can join the cgroup after it has left the host's file system.
type cgroupFile struct {
	joinMsg string // "init: join cgroup <dir>", the message of a failure
	fd      int
}

// openCgroups opens cgroup.procs in each of dirs, for writing.
func openCgroups(dirs []string) ([]cgroupFile, error) {
	var files []cgroupFile
	for _, d := range dirs {
		fd, err := syscall.Open(filepath.Join(d, "cgroup.procs"), syscall.O_WRONLY|syscall.O_CLOEXEC, 0)
		if err != nil {
			return nil, fmt.Errorf("open cgroup %s: %w", d, err)
		}
		files = append(files, cgroupFile{"init: join cgroup " + d, fd})
	}
	return files, nil
}

// selfPID is what a process writes to cgroup.procs to join the cgroup.
var selfPID = [1]byte{'0'}

// join moves the calling process into the cgroup, with a raw system call (see entry.enter).
//
//go:nosplit
func (c *cgroupFile) join() syscall.Errno {
	_, _, errno := syscall.RawSyscall(syscall.SYS_WRITE, uintptr(c.fd), uintptr(unsafe.Pointer(&selfPID[0])), 1)
	return errno
}
