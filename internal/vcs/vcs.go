package vcs

import (
	"bytes"
	"os/exec"
	"runtime/debug"
	"strings"
)

// Set at link time by scripts/build.sh:
//
//	go build -ldflags "-X github.com/mathrl/mathrl/internal/vcs.commit=SHA -X github.com/mathrl/mathrl/internal/vcs.dirty=true|false"
var commit, dirty string

// The values of Stamp.Source.
const (
	SourceLinker  = "stamped at build time (scripts/build.sh)"
	SourceGo      = "stamped at build time (Go's VCS stamp)"
	SourceRunTime = "the checkout's HEAD at run time (the binary carries no stamp)"
	SourceNone    = "unknown (the binary carries no stamp and the folder is no git checkout)"
)

// Stamp is the commit a binary was built from.
type Stamp struct {
	Commit string // full hash; "unknown" when nothing says
	Dirty  bool   // the working tree had uncommitted changes to tracked files
	Source string // which of the Source* constants answered
}

// String is the commit, "+changes" when dirty, and where it comes from.
func (s Stamp) String() string {
	c := s.Commit
	if s.Dirty {
		c += "+changes"
	}
	return c + ", " + s.Source
}

// Current returns the running binary's Stamp: the linker's stamp when set,
// else Go's VCS stamp (vcs.revision and vcs.modified of the build info), else
// git's answer for the current folder at run time.
func Current() Stamp {
	if s, ok := linkerStamp(commit, dirty); ok {
		return s
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		if s, ok := goStamp(bi.Settings); ok {
			return s
		}
	}
	return runTimeStamp()
}

// linkerStamp is the Stamp of the -X values, when the commit is set.
func linkerStamp(commit, dirty string) (Stamp, bool) {
	if commit == "" {
		return Stamp{}, false
	}
	return Stamp{Commit: commit, Dirty: dirty == "true", Source: SourceLinker}, true
}

// goStamp is the Stamp of Go's build settings, when they hold vcs.revision.
func goStamp(settings []debug.BuildSetting) (Stamp, bool) {
	s := Stamp{Source: SourceGo}
	for _, kv := range settings {
		switch kv.Key {
		case "vcs.revision":
			s.Commit = kv.Value
		case "vcs.modified":
			s.Dirty = kv.Value == "true"
		}
	}
	return s, s.Commit != ""
}

// runTimeStamp asks git about the current folder: the fallback.
func runTimeStamp() Stamp {
	out, err := exec.Command("git", "rev-parse", "HEAD").Output()
	if err != nil {
		return Stamp{Commit: "unknown", Source: SourceNone}
	}
	status, _ := exec.Command("git", "status", "--porcelain", "--untracked-files=no").Output()
	return Stamp{Commit: strings.TrimSpace(string(out)), Dirty: len(bytes.TrimSpace(status)) > 0, Source: SourceRunTime}
}
