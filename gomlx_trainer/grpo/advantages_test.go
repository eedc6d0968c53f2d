package grpo

import (
	"math"
	"os/exec"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

func TestGroupAdvantagesHandExample(t *testing.T) {
	// One group of 4 with rewards 1, 0, 0, 0: mean 0.25, sample std 0.5.
	got := GroupAdvantages([]float64{1, 0, 0, 0}, 4, 0, true)
	want := []float64{1.5, -0.5, -0.5, -0.5}
	for i := range want {
		if math.Abs(got[i]-want[i]) > 1e-12 {
			t.Fatalf("GroupAdvantages = %v, want %v", got, want)
		}
	}
	// Dr.GRPO: no division.
	got = GroupAdvantages([]float64{1, 0, 0, 0}, 4, 1e-6, false)
	want = []float64{0.75, -0.25, -0.25, -0.25}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("GroupAdvantages without std = %v, want %v", got, want)
	}
	// All-equal group: zero advantage, no NaN.
	for _, a := range GroupAdvantages([]float64{1, 1, -1, -1}, 2, 1e-6, true) {
		if a != 0 {
			t.Fatalf("equal rewards gave advantage %v", a)
		}
	}
}

// TestGroupAdvantagesPython compares against Python's statistics module
// (statistics.stdev is the n−1 sample standard deviation, as torch.std).
func TestGroupAdvantagesPython(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not on PATH")
	}
	rewards := []float64{1, -1, -1, 1, 1, 1, -1, -1, -1, -1, -1, 1, 0.5, 0, 1, 0}
	script := `
import statistics, sys
r = [float(x) for x in sys.argv[2:]]
g = int(sys.argv[1])
out = []
for s in range(0, len(r), g):
    grp = r[s:s+g]
    m = statistics.mean(grp); sd = statistics.stdev(grp)
    out += [(x - m) / (sd + 1e-6) for x in grp]
print(" ".join(repr(x) for x in out))
`
	args := []string{"-c", script, "4"}
	for _, r := range rewards {
		args = append(args, strconv.FormatFloat(r, 'g', -1, 64))
	}
	out, err := exec.Command(py, args...).Output()
	if err != nil {
		t.Fatalf("python: %v", err)
	}
	fields := strings.Fields(string(out))
	got := GroupAdvantages(rewards, 4, 1e-6, true)
	if len(fields) != len(got) {
		t.Fatalf("python gave %d values, want %d", len(fields), len(got))
	}
	for i, f := range fields {
		want, _ := strconv.ParseFloat(f, 64)
		if math.Abs(got[i]-want) > 1e-12 {
			t.Errorf("advantage %d = %v, python %v", i, got[i], want)
		}
	}
}

func TestKeepGroups(t *testing.T) {
	got := KeepGroups([]float64{1, 1, 0, 1, 0, 0, -1, 1}, 2)
	if want := []int{1, 3}; !reflect.DeepEqual(got, want) {
		t.Errorf("KeepGroups = %v, want %v", got, want)
	}
	if got := KeepGroups([]float64{1, 1, 1}, 3); got != nil {
		t.Errorf("KeepGroups(all equal) = %v, want none", got)
	}
}

func TestTokenWeights(t *testing.T) {
	masks := [][]float32{{0, 1, 1, 1}, {1, 0, 0, 0}}
	tok := TokenWeights(masks, true) // 4 tokens: each 1/4
	seq := TokenWeights(masks, false)
	wantTok := [][]float32{{0, .25, .25, .25}, {.25, 0, 0, 0}}
	wantSeq := [][]float32{{0, 1. / 6, 1. / 6, 1. / 6}, {.5, 0, 0, 0}}
	for i := range masks {
		for j := range masks[i] {
			if math.Abs(float64(tok[i][j]-wantTok[i][j])) > 1e-7 || math.Abs(float64(seq[i][j]-wantSeq[i][j])) > 1e-7 {
				t.Fatalf("TokenWeights: token %v seq %v, want %v and %v", tok, seq, wantTok, wantSeq)
			}
		}
	}
	zero := TokenWeights([][]float32{{0, 0}}, true)
	if zero[0][0] != 0 || zero[0][1] != 0 {
		t.Errorf("empty mask gave %v", zero)
	}
}
