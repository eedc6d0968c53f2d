package main

import (
	"encoding/json"
	"runtime"
	"strings"
	"testing"

	"github.com/mathrl/mathrl/gomlx_trainer/bench"
	"github.com/mathrl/mathrl/internal/testenv"
)

// tinyBench are the flags of a bench run that takes a fraction of a second.
var tinyBench = []string{"bench", "--config", "tiny", "--backend", "cpu", "--batch", "2", "--len", "8",
	"--decode-batch", "3", "--prompt-len", "4", "--new-tokens", "3", "--steps", "1"}

func TestBenchCommandJSON(t *testing.T) {
	out := mustRunCLI(t, append(tinyBench, "--json", "--whole-cache=false")...)
	var r bench.Result
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if r.TrainStepMS <= 0 || r.DecodeStepMS <= 0 || r.DecodeBatch != 3 || r.PromptLen != 4 || r.DecodeWholeCacheStepMS != 0 {
		t.Errorf("result %+v", r)
	}
}

func TestBenchCommandBaselines(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	out := mustRunCLI(t, append(tinyBench, "--baseline", "cpu", "--threads", "1", "--what", "train")...)
	for _, want := range []string{"train ms/step", "cpu vs cpu (", "cpu: mathrl on Go"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

func TestBenchCommandTorchBaseline(t *testing.T) {
	py := testenv.RefPython(t, "torch", "transformers")
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	out := mustRunCLI(t, append(tinyBench, "--baseline", "torch", "--python", py, "--threads", "1", "--json")...)
	var c bench.Comparison
	if err := json.Unmarshal([]byte(out), &c); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if len(c.Sides) != 2 || c.Sides[1].Name != bench.TorchName || c.Sides[1].Threads != 1 || c.Sides[0].Threads != 1 {
		t.Fatalf("sides %+v", c.Sides)
	}
	if len(c.Ratios) != 1 || c.Ratios[0].Train <= 0 || c.Ratios[0].Decode <= 0 {
		t.Errorf("ratios %+v", c.Ratios)
	}
}

func TestBenchCommandErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--what", "all"}, `--what "all"`},
		{[]string{"--threads", "-1"}, "--threads"},
		{[]string{"--baseline", "tpu"}, "--baseline tpu"},
		{[]string{"--baseline", "torch", "--python", "/nonexistent/python"}, "/nonexistent/python"},
	} {
		_, _, err := runCLI(t, "", append(tinyBench, tc.args...)...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("bench %v: error %v, want one containing %q", tc.args, err, tc.want)
		}
	}
}
