package backendtest

import (
	"fmt"
	"strings"
	"testing"
)

func TestNewDefaultsToPureGo(t *testing.T) {
	t.Setenv(KindEnv, "")
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

func TestKindResolvesAsTheFlagDoes(t *testing.T) {
	t.Setenv(KindEnv, "cpu")
	t.Setenv("GOMLX_BACKEND", "xla:/elsewhere.so")
	if c, err := Config(); err != nil || c != DefaultConfig || IsXLA() {
		t.Errorf("%s=cpu: config %q, %v (IsXLA %v)", KindEnv, c, err, IsXLA())
	}
	t.Setenv(KindEnv, "tpu")
	if _, err := Config(); err == nil || !strings.Contains(err.Error(), "MATHRL_TEST_BACKEND=tpu") {
		t.Errorf("unknown kind: %v", err)
	}
	t.Setenv(KindEnv, "")
	if !IsXLA() {
		t.Errorf("GOMLX_BACKEND=xla:...: IsXLA false")
	}
}

func TestNewFailsOnUnknownBackend(t *testing.T) {
	t.Setenv(KindEnv, "")
	t.Setenv("GOMLX_BACKEND", "nosuchbackend")
	f := &fakeTB{TB: t}
	New(f)
	if !strings.Contains(f.fatal, `backendtest: GoMLX backend "nosuchbackend"`) {
		t.Errorf("Fatalf got %q", f.fatal)
	}
}
