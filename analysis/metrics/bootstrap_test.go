package metrics

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"os/exec"
	"strings"
	"testing"

	"github.com/mathrl/mathrl/internal/testenv"
)

// numpyBootstrap computes, with numpy, the means of the resamples
// values[idx[r]] and their q-quantiles (np.quantile's default, linear
// interpolation), and np.quantile of xs at each of ps.
const numpyBootstrap = `
import json, sys
import numpy as np
a = json.load(sys.stdin)
values, idx = np.array(a["values"]), np.array(a["idx"])
means = values[idx].mean(axis=1)
print(json.dumps({"interval": np.quantile(means, a["q"]).tolist(),
                  "quantiles": np.quantile(np.array(a["xs"]), a["ps"]).tolist()}))
`

// TestBootstrapMeanAgainstNumpy replays BootstrapMean's draws on a small
// fixed set (the resample indices, in the order it draws them from the same
// seed) and has numpy compute the resample means and the interval's
// quantiles; both ends must agree to rounding. It checks quantile alone at
// points between order statistics too.
func TestBootstrapMeanAgainstNumpy(t *testing.T) {
	py := testenv.RefPython(t, "numpy")
	values := []float64{0, 1, 1, 0.5, 0, 1, 0.25}
	const resamples, level = 37, 0.9
	replay := rand.New(rand.NewPCG(21, 22))
	idx := make([][]int, resamples)
	for r := range idx {
		idx[r] = make([]int, len(values))
		for i := range idx[r] {
			idx[r][i] = replay.IntN(len(values))
		}
	}
	xs := []float64{-3, -1, 0.5, 2, 2, 7, 11.5}
	ps := []float64{0, 0.05, 0.1, 0.33, 0.5, 0.9, 0.975, 1}
	in, err := json.Marshal(map[string]any{"values": values, "idx": idx, "q": []float64{(1 - level) / 2, (1 + level) / 2}, "xs": xs, "ps": ps})
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(py, "-c", numpyBootstrap)
	cmd.Stdin = strings.NewReader(string(in))
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("numpy: %v", err)
	}
	var want struct {
		Interval  []float64 `json:"interval"`
		Quantiles []float64 `json:"quantiles"`
	}
	if err := json.Unmarshal(out, &want); err != nil {
		t.Fatalf("numpy's output %q: %v", out, err)
	}
	got := BootstrapMean(values, resamples, level, rand.New(rand.NewPCG(21, 22)))
	if !near(got.Lo, want.Interval[0]) || !near(got.Hi, want.Interval[1]) {
		t.Errorf("BootstrapMean %v, numpy [%v, %v]", got, want.Interval[0], want.Interval[1])
	}
	for i, p := range ps {
		if q := quantile(xs, p); !near(q, want.Quantiles[i]) {
			t.Errorf("quantile(%v, %g) = %v, numpy %v", xs, p, q, want.Quantiles[i])
		}
	}
}

// near reports whether a and b agree to float64 rounding.
func near(a, b float64) bool { return math.Abs(a-b) <= 1e-12*(1+math.Abs(b)) }
