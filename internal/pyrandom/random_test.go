package pyrandom

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os/exec"
	"slices"
	"testing"

	"github.com/mathrl/mathrl/internal/testenv"
)

// The expected values below were computed with CPython 3.11.7, e.g.
//
//	r = random.Random(20250607); [r.getrandbits(32) for _ in range(3)]
func TestFixedValues(t *testing.T) {
	r := New(20250607)
	if got, want := []uint32{r.Uint32(), r.Uint32(), r.Uint32()}, []uint32{3663639623, 2066311443, 3560767567}; !slices.Equal(got, want) {
		t.Errorf("Random(20250607).getrandbits(32) x3 = %v, want %v", got, want)
	}
	// random.Random(-(2**40+5)): a two-word seed, negative.
	r = New(-(1<<40 + 5))
	var bitsGot []uint64
	for _, k := range []int{1, 13, 32, 33, 64} {
		bitsGot = append(bitsGot, r.Getrandbits(k))
	}
	if want := []uint64{1, 4234, 1153647273, 7145959170, 9794469135332508808}; !slices.Equal(bitsGot, want) {
		t.Errorf("Random(-(2**40+5)).getrandbits(1, 13, 32, 33, 64) = %v, want %v", bitsGot, want)
	}
	r = New(0)
	var below []int
	for _, n := range []int{1, 2, 3, 1000, 7496} {
		below = append(below, r.Randbelow(n))
	}
	if want := []int{0, 1, 0, 265, 4188}; !slices.Equal(below, want) {
		t.Errorf("Random(0)._randbelow(1, 2, 3, 1000, 7496) = %v, want %v", below, want)
	}
	// The set path of sample (n > setsize) and the pool path.
	if got, want := New(20250607).Sample(7496, 300)[:8], []int{6987, 3941, 6791, 6812, 2142, 4479, 587, 1850}; !slices.Equal(got, want) {
		t.Errorf("Random(20250607).sample(range(7496), 300)[:8] = %v, want %v", got, want)
	}
	if got, want := New(5).Sample(10, 4), []int{9, 4, 5, 6}; !slices.Equal(got, want) {
		t.Errorf("Random(5).sample(range(10), 4) = %v, want %v", got, want)
	}
}

// pyCase is one call compared with CPython: seed, then either getrandbits of
// each k in Bits, _randbelow of each n in Below, or sample(range(N), K).
type pyCase struct {
	Seed  int64 `json:"seed"`
	Bits  []int `json:"bits,omitempty"`
	Below []int `json:"below,omitempty"`
	N     int   `json:"n,omitempty"`
	K     int   `json:"k,omitempty"`
}

func (c pyCase) goResult() []uint64 {
	r := New(c.Seed)
	var out []uint64
	for _, k := range c.Bits {
		out = append(out, r.Getrandbits(k))
	}
	for _, n := range c.Below {
		out = append(out, uint64(r.Randbelow(n)))
	}
	if c.N > 0 {
		for _, j := range r.Sample(c.N, c.K) {
			out = append(out, uint64(j))
		}
	}
	return out
}

const pyScript = `
import json, random, sys
out = []
for c in json.load(sys.stdin):
    r = random.Random(c["seed"])
    v = [r.getrandbits(k) for k in c.get("bits", [])]
    v += [r._randbelow(n) for n in c.get("below", [])]
    if c.get("n"):
        v += r.sample(range(c["n"]), c.get("k", 0))
    out.append(v)
print(json.dumps(out))
`

// TestAgainstCPython runs the same calls in python3 and in Go.
func TestAgainstCPython(t *testing.T) {
	py := testenv.DebianPython(t)
	long := make([]int, 2000) // past one twist of the 624-word state, three times
	for i := range long {
		long[i] = 32
	}
	cases := []pyCase{
		{Seed: 0, Bits: []int{32, 32, 1, 0, 7, 31, 33, 64}},
		{Seed: 1, Bits: long},
		{Seed: -7, Below: []int{1, 2, 3, 5, 8, 1 << 20, 1<<31 - 1, 7496}},
		{Seed: 1<<62 + 12345, Bits: []int{64, 63, 48}},
		{Seed: 20250607, N: 7496, K: 300}, // the set path: the published sample
		{Seed: 3, N: 1045, K: 300},        // n = setsize for k = 300: the pool path
		{Seed: 3, N: 1046, K: 300},        // one more: the set path
		{Seed: 42, N: 25, K: 5},           // k <= 5: setsize 21, the set path
		{Seed: 42, N: 21, K: 21},          // everything, pool path
		{Seed: 9, N: 100, K: 0},
	}
	in, err := json.Marshal(cases)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(py, "-c", pyScript)
	cmd.Stdin = bytes.NewReader(in)
	raw, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s: %v", py, err)
	}
	var want [][]uint64
	if err := json.Unmarshal(raw, &want); err != nil {
		t.Fatalf("python output %q: %v", raw, err)
	}
	for i, c := range cases {
		if got := c.goResult(); !slices.Equal(got, want[i]) {
			t.Errorf("case %+v: Go %v\n CPython %v", c, head(got), head(want[i]))
		}
	}
}

func head(v []uint64) string {
	if len(v) > 10 {
		return fmt.Sprintf("%v... (%d values)", v[:10], len(v))
	}
	return fmt.Sprint(v)
}

func TestPanics(t *testing.T) {
	for name, f := range map[string]func(){
		"Getrandbits(65)": func() { New(1).Getrandbits(65) },
		"Randbelow(0)":    func() { New(1).Randbelow(0) },
		"Sample(3, 4)":    func() { New(1).Sample(3, 4) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s did not panic", name)
				}
			}()
			f()
		}()
	}
}
