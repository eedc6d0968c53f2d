package vcs

import (
	"os/exec"
	"runtime/debug"
	"strings"
	"testing"
)

// gitHead is `git rev-parse HEAD` and whether tracked files have changes, in
// the current folder; the test is skipped outside a git checkout.
func gitHead(t *testing.T) (string, bool) {
	t.Helper()
	out, err := exec.Command("git", "rev-parse", "HEAD").Output()
	if err != nil {
		t.Skip("not a git checkout:", err)
	}
	status, err := exec.Command("git", "status", "--porcelain", "--untracked-files=no").Output()
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(out)), len(strings.TrimSpace(string(status))) > 0
}

func TestLinkerStampComesFirst(t *testing.T) {
	saved, savedDirty := commit, dirty
	t.Cleanup(func() { commit, dirty = saved, savedDirty })
	commit, dirty = "0123456789abcdef0123456789abcdef01234567", "true"
	want := Stamp{Commit: commit, Dirty: true, Source: SourceLinker}
	if got := Current(); got != want {
		t.Errorf("Current() with the linker's stamp = %+v, want %+v", got, want)
	}
	dirty = "false"
	if got := Current(); got.Dirty || got.Source != SourceLinker {
		t.Errorf("Current() with dirty=false = %+v", got)
	}
}

func TestGoStamp(t *testing.T) {
	s, ok := goStamp([]debug.BuildSetting{{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: "abc"}, {Key: "vcs.modified", Value: "true"}})
	if want := (Stamp{Commit: "abc", Dirty: true, Source: SourceGo}); !ok || s != want {
		t.Errorf("goStamp = %+v, %v; want %+v", s, ok, want)
	}
	if _, ok := goStamp([]debug.BuildSetting{{Key: "-buildvcs", Value: "false"}}); ok {
		t.Error("goStamp without vcs.revision says it has a stamp")
	}
}

// TestRunTimeFallbackIsLabelled runs unstamped (go test stamps nothing): the
// commit comes from git at run time and says so; outside a checkout it is
// "unknown".
func TestRunTimeFallbackIsLabelled(t *testing.T) {
	if commit != "" {
		t.Skip("this test binary carries the linker's stamp")
	}
	head, changed := gitHead(t)
	if got, want := Current(), (Stamp{Commit: head, Dirty: changed, Source: SourceRunTime}); got != want {
		t.Errorf("Current() = %+v, want %+v", got, want)
	}
	t.Chdir(t.TempDir())
	if got, want := Current(), (Stamp{Commit: "unknown", Source: SourceNone}); got != want {
		t.Errorf("Current() outside a checkout = %+v, want %+v", got, want)
	}
}

func TestStampString(t *testing.T) {
	if got, want := (Stamp{Commit: "abc", Dirty: true, Source: SourceLinker}).String(), "abc+changes, "+SourceLinker; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
}
