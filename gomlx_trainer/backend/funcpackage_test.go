package backend

import (
	"reflect"
	"runtime"
	"testing"
)

func TestFuncPackage(t *testing.T) {
	for _, tc := range []struct{ fn, want string }{
		{"github.com/a/b.F", "github.com/a/b"},
		{"github.com/mathrl/mathrl/gomlx_trainer/sampler.(*Session).Step", "github.com/mathrl/mathrl/gomlx_trainer/sampler"},
		{"github.com/gomlx/gomlx/ml/model.convertExecFn[...].func5", "github.com/gomlx/gomlx/ml/model"},
		{"gopkg.in/yaml%2ev3.(*decoder).unmarshal", "gopkg.in/yaml.v3"},
		{"runtime.goexit", "runtime"},
		{"main.main", "main"},
		{"", ""},
	} {
		if got := funcPackage(tc.fn); got != tc.want {
			t.Errorf("funcPackage(%q) = %q, want %q", tc.fn, got, tc.want)
		}
	}
}

type probe struct{}

// TestFuncPackageOfThisFunction checks the parse on the runtime's own name of
// a function against the package path reflect gives, and stackPackages.
func TestFuncPackageOfThisFunction(t *testing.T) {
	pc, _, _, _ := runtime.Caller(0)
	here := reflect.TypeFor[probe]().PkgPath()
	if got := funcPackage(runtime.FuncForPC(pc).Name()); got != here {
		t.Errorf("funcPackage(%q) = %q, want %q", runtime.FuncForPC(pc).Name(), got, here)
	}
	if got := stackPackages(); len(got) < 2 || got[0] != here || got[1] != "testing" {
		t.Errorf("stackPackages() = %q, want %s, testing, ...", got, here)
	}
}
