package sandbox_test

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/mathrl/mathrl/gomlx_trainer/sandbox"
)

// machineState is what a pool may leave on the machine, seen before it is made.
type machineState struct {
	cgroups map[string]bool // this process's pool cgroups
	mounts  map[string]bool // mount points that name a sandbox folder
}

func machineNow() machineState {
	return machineState{cgroups: set(poolCgroups()), mounts: set(sandboxMounts())}
}

// processState is what a pool may leave in this process, seen once it is
// made (the Go runtime opens some files for good when the first program runs).
type processState struct {
	files      map[string]bool // open file descriptors
	goroutines int
}

func processNow() processState {
	return processState{files: set(openFiles()), goroutines: runtime.NumGoroutine()}
}

// leftovers lists what pools closed since before and inProcess were seen
// left behind: processes, cgroups, mounts, temporary folders of programs that
// carry marker, and in this process open files and goroutines. The processes
// are those of uids, in this process's cgroups, descended from this process,
// or with marker on their command line.
func leftovers(before machineState, inProcess processState, uids map[int]bool, marker string) []string {
	var left []string
	for _, what := range []struct {
		name   string
		before map[string]bool
		now    []string
	}{
		{"cgroup", before.cgroups, poolCgroups()},
		{"mount", before.mounts, sandboxMounts()},
		{"open file", inProcess.files, openFiles()},
	} {
		for _, x := range what.now {
			if !what.before[x] {
				left = append(left, what.name+" "+x)
			}
		}
	}
	if n := goroutinesDownTo(inProcess.goroutines); n > inProcess.goroutines {
		left = append(left, fmt.Sprintf("%d goroutines, %d before", n, inProcess.goroutines))
	}
	folders, _ := filepath.Glob(filepath.Join(os.TempDir(), "mathrl-sandbox-*"))
	for _, f := range folders {
		if code, err := os.ReadFile(filepath.Join(f, "work", "main.py")); err == nil && strings.Contains(string(code), marker) {
			left = append(left, "temporary folder "+f)
		}
	}
	return append(left, sandboxProcesses(os.Getpid(), uids, marker)...)
}

// sandboxProcesses lists the processes left by the pools of process owner:
// those of uids, in owner's cgroups, descended from owner, or with marker
// (unless "") on their command line. Those that are dead but not yet reaped
// by the system's init, which does so in its own time, are waited for, at
// most 10 s.
func sandboxProcesses(owner int, uids map[int]bool, marker string) []string {
	inCgroup := fmt.Sprintf("/mathrl-sandbox-%d-", owner)
	deadline := time.Now().Add(10 * time.Second)
	for {
		procs := processes()
		parent := map[int]int{}
		for _, p := range procs {
			parent[p.pid] = p.ppid
		}
		var left []string
		waitable := true // only dead processes that others must reap
		for _, p := range procs {
			marked := marker != "" && strings.Contains(p.cmdline, marker)
			if descends(p.pid, owner, parent) || uids[p.uid] || strings.Contains(p.cgroups, inCgroup) || marked {
				left = append(left, fmt.Sprintf("process %v, state %s, parent %d", p, p.state, p.ppid))
				waitable = waitable && p.dead() && p.ppid != os.Getpid()
			}
		}
		if len(left) == 0 || !waitable || time.Now().After(deadline) {
			return left
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// descends reports whether process pid descends from ancestor.
func descends(pid, ancestor int, parent map[int]int) bool {
	for range 1000 { // a chain read while processes come and go may loop
		pid = parent[pid]
		if pid == ancestor {
			return true
		}
		if pid <= 1 {
			return false
		}
	}
	return false
}

// poolCgroups lists the cgroup folders of this process's pools.
func poolCgroups() []string { return cgroupsOf(os.Getpid()) }

// cgroupsOf lists the cgroup folders of the pools of process pid.
func cgroupsOf(pid int) []string {
	var dirs []string
	for _, parent := range sandbox.CgroupParents() {
		d, _ := filepath.Glob(filepath.Join(parent, fmt.Sprintf("mathrl-sandbox-%d-*", pid)))
		dirs = append(dirs, d...)
	}
	return dirs
}

// sandboxMounts lists the mount points of this process's mount namespace
// that lie in a sandbox's temporary folder.
func sandboxMounts() []string {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return []string{"cannot read /proc/self/mountinfo: " + err.Error()}
	}
	defer f.Close()
	var mounts []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// id parent major:minor root mountpoint options ...
		if fields := strings.Fields(sc.Text()); len(fields) > 4 && strings.Contains(fields[4], "mathrl-sandbox-") {
			mounts = append(mounts, fields[4])
		}
	}
	return mounts
}

// openFiles lists this process's file descriptors as "N -> target".
func openFiles() []string {
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return []string{"cannot read /proc/self/fd: " + err.Error()}
	}
	var files []string
	for _, e := range entries {
		if target, err := os.Readlink("/proc/self/fd/" + e.Name()); err == nil {
			files = append(files, e.Name()+" -> "+target)
		}
	}
	return files
}

// goroutinesDownTo waits, at most 5 s, until no more than n goroutines run
// (those that have just delivered their last result may not have ended yet),
// and returns how many run.
func goroutinesDownTo(n int) int {
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > n && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	return runtime.NumGoroutine()
}

func set(xs []string) map[string]bool {
	m := map[string]bool{}
	for _, x := range xs {
		m[x] = true
	}
	return m
}
