// Package vcs says which commit the running binary was built from, for a
// run's provenance. It prefers what the binary carries (the commit stamped by
// scripts/build.sh, then Go's own VCS stamp) and only falls back to asking git
// about the current folder, which names the checkout's HEAD at run time, not
// necessarily the code that runs; Stamp.Source says which answered.
package vcs
