package backendtest

import (
	"fmt"
	"strings"
	"testing"
)

func TestNewDefaultsToPureGo(t *testing.T) {
	t.Setenv("GOMLX_BACKEND", "")
	b := New(t)
	defer b.Finalize()
	if got := b.String(); got != "go" { // simplego.BackendName
		t.Errorf("backend %q, want the pure Go backend \"go\"", got)
	}
}

// fakeTB records Fatalf instead of stopping the test.
type fakeTB struct {
	testing.TB
	fatal string
}

func (f *fakeTB) Helper()                           {}
func (f *fakeTB) Fatalf(format string, args ...any) { f.fatal = fmt.Sprintf(format, args...) }

func TestNewFailsOnUnknownBackend(t *testing.T) {
	t.Setenv("GOMLX_BACKEND", "nosuchbackend")
	f := &fakeTB{TB: t}
	New(f)
	if !strings.Contains(f.fatal, `backendtest: GoMLX backend "nosuchbackend"`) {
		t.Errorf("Fatalf got %q", f.fatal)
	}
}
