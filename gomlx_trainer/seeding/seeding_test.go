package seeding

import (
	"math"
	"testing"
)

// TestSequenceSeedsFitAnInt64: every sequence seed is below 2^63 (servers
// keep seeds in an int64), and neighbours differ.
func TestSequenceSeedsFitAnInt64(t *testing.T) {
	seen := map[uint64]bool{}
	for _, seed := range []uint64{0, 1, math.MaxUint64} {
		for i := range 1000 {
			s := SequenceSeed(seed, i)
			if s >= 1<<63 || seen[s] {
				t.Fatalf("SequenceSeed(%d, %d) = %d: past 2^63 or repeated", seed, i, s)
			}
			seen[s] = true
		}
	}
}

// TestSequenceSeedIsSplitMix64: sequence i of a session at seed s draws
// from output i+1 of SplitMix64 seeded at s (the published test vector for
// seed 0), halved below 2^63, so sequence 0 is not seeded with s's raw mix.
func TestSequenceSeedIsSplitMix64(t *testing.T) {
	for i, want := range []uint64{0xe220a8397b1dcdaf, 0x6e789e6aa1b965f4, 0x06c45d188009454f} {
		if got := SequenceSeed(0, i); got != want>>1 {
			t.Errorf("SequenceSeed(0, %d) = %#x, want %#x", i, got, want>>1)
		}
	}
}
