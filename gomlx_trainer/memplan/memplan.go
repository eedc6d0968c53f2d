package memplan

import (
	"fmt"
	"strconv"
	"strings"
)

// Rules names the backend whose buffer rules a prediction follows (see the
// package comment).
type Rules int

// The rules.
const (
	XLA Rules = iota // fused, in place, gradients accumulated as they come (GPU)
	CPU              // GoMLX's pure Go backend: unfused, forward before backward
)

func (r Rules) String() string {
	if r == CPU {
		return "cpu"
	}
	return "xla"
}

// Term is one named part of a peak, in bytes.
type Term struct {
	Name  string
	Bytes int64
}

// Breakdown is what is alive at a peak: the phase in which it happens and the
// terms that add up to it.
type Breakdown struct {
	Phase string // e.g. "head backward", "prefill"
	Terms []Term
}

// Total returns the sum of the terms.
func (b Breakdown) Total() int64 {
	var n int64
	for _, t := range b.Terms {
		n += t.Bytes
	}
	return n
}

// Largest returns the term with the most bytes (the first of equals); the zero
// Term for an empty breakdown.
func (b Breakdown) Largest() Term {
	var big Term
	for _, t := range b.Terms {
		if t.Bytes > big.Bytes {
			big = t
		}
	}
	return big
}

// Term returns the bytes of the term called name (0 when there is none).
func (b Breakdown) Term(name string) int64 {
	for _, t := range b.Terms {
		if t.Name == name {
			return t.Bytes
		}
	}
	return 0
}

// peak returns the phase with the largest total, the first of equals.
func peak(phases ...Breakdown) Breakdown {
	best := phases[0]
	for _, p := range phases[1:] {
		if p.Total() > best.Total() {
			best = p
		}
	}
	return best
}

// with returns a Breakdown of the phase holding the groups' terms in order,
// leaving out those of zero bytes.
func with(phase string, groups ...[]Term) Breakdown {
	var terms []Term
	for _, g := range groups {
		for _, t := range g {
			if t.Bytes > 0 {
				terms = append(terms, t)
			}
		}
	}
	return Breakdown{Phase: phase, Terms: terms}
}

// GiB is 2^30 bytes.
const GiB = 1 << 30

// ParseSize reads a memory size: a number followed by B, KiB, MiB, GiB, TiB
// (powers of 1024) or KB, MB, GB, TB (powers of 1000), or nothing for bytes;
// "141GiB", "80 GB" and "1.5e9" are sizes.
func ParseSize(s string) (int64, error) {
	units := []struct {
		suffix string
		scale  float64
	}{
		{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"TiB", 1 << 40},
		{"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12}, {"B", 1},
	}
	num, scale := strings.TrimSpace(s), 1.0
	for _, u := range units {
		if strings.HasSuffix(strings.ToUpper(num), strings.ToUpper(u.suffix)) {
			num, scale = strings.TrimSpace(num[:len(num)-len(u.suffix)]), u.scale
			break
		}
	}
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || v <= 0 {
		return 0, fmt.Errorf("memplan: memory size %q: want a positive number with a unit such as GiB or GB", s)
	}
	return int64(v * scale), nil
}

// FormatGiB writes n bytes in GiB with two decimals.
func FormatGiB(n int64) string { return fmt.Sprintf("%.2f GiB", float64(n)/GiB) }
