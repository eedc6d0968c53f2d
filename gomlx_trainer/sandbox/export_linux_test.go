package sandbox

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
