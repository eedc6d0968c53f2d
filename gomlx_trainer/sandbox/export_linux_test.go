package sandbox

import "time"

// CgroupParents lists the folders in which this process's pools make their
// cgroups, one per hierarchy, or nil when cgroups are not writable here.
func CgroupParents() []string {
	hier, err := cgroupHierarchies()
	if err != nil {
		return nil
	}
	var dirs []string
	for _, h := range hier {
		dirs = append(dirs, h.dir)
	}
	return dirs
}

// Stall makes the inits of p's programs start a goroutine that blocks in a
// system call and sleep d once they have joined their worker's cgroups (see
// initSpec.Stall).
func Stall(p *Pool, d time.Duration) { p.stall = d }

// WorkerCgroups lists each worker's cgroup folders (nil without cgroups).
func WorkerCgroups(p *Pool) [][]string {
	if p.cgroups == nil {
		return nil
	}
	return p.cgroups.workers
}
