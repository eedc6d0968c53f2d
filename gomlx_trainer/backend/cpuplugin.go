package backend

import (
	"os"
	"path/filepath"
	"slices"
)

// CPUPluginPackage is the PyPI package that carries XLA's CPU PJRT plugin:
// built from the XLA of jaxlib 0.11.2, the release whose CUDA 13 plugin the GPU
// machines run, so that the CPU and the GPU compile with the same XLA (PJRT C
// API 0.115). scripts/setup.sh installs it, pinned by sha256.
const CPUPluginPackage = "lammps-jax-pjrt-cpu==0.11.2"

// CPUPluginRelPath is where that package puts the plugin, relative to the
// folder it is installed into (site-packages, or pip --target).
const CPUPluginRelPath = "lammps_jax_pjrt_cpu/pjrt_c_api_cpu_plugin.so"

// CPUPluginCacheDir is the folder of a project cache (.cache) that
// scripts/setup.sh installs the plugin package into.
const CPUPluginCacheDir = "pjrt-cpu"

// FindCPUPlugin returns the first PJRT CPU plugin found under the project
// caches (each cache's pjrt-cpu folder), then under the site-packages folders,
// or "" when there is none.
func FindCPUPlugin(cacheDirs, sitePackages []string) string {
	var cands []string
	for _, c := range cacheDirs {
		cands = append(cands, filepath.Join(c, CPUPluginCacheDir, CPUPluginRelPath))
	}
	for _, sp := range sitePackages {
		cands = append(cands, filepath.Join(sp, CPUPluginRelPath))
	}
	for _, p := range cands {
		if isFile(p) {
			return p
		}
	}
	return ""
}

// CacheDirs lists the project caches a plugin may be installed in: the .cache
// folder of the working directory and of each folder above it, then those
// above the running executable (mathrl built into .cache/bin finds its own
// cache from anywhere). Only folders that exist are listed.
func CacheDirs() []string {
	var starts []string
	if wd, err := os.Getwd(); err == nil {
		starts = append(starts, wd)
	}
	if exe, err := os.Executable(); err == nil {
		if real, err := filepath.EvalSymlinks(exe); err == nil {
			exe = real
		}
		starts = append(starts, filepath.Dir(exe))
	}
	var dirs []string
	for _, s := range starts {
		for d := s; ; d = filepath.Dir(d) {
			c := filepath.Join(d, ".cache")
			if st, err := os.Stat(c); err == nil && st.IsDir() && !slices.Contains(dirs, c) {
				dirs = append(dirs, c)
			}
			if filepath.Dir(d) == d {
				break
			}
		}
	}
	return dirs
}
