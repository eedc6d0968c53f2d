package grpo

import (
	"testing"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/shapes"
	. "github.com/gomlx/gomlx/core/graph" //nolint:staticcheck
)

// lowbias32 is Chris Wellons' lowbias32 hash, on the host.
func lowbias32(x uint32) uint32 {
	x ^= x >> 16
	x *= 0x7FEB352D
	x ^= x >> 15
	x *= 0x846CA68B
	x ^= x >> 16
	return x
}

// TestDrawsByHand: drawBits is the counter-based generator its comment
// states, the lowbias32 hash of element e plus the per-step, per-variable
// offset lowbias32(step·0x85EBCA6B + (seed ^ index·0x9E3779B9)), worked on
// the host in uint32 arithmetic. The draws are part of a checkpoint's
// contract (a resumed run under stochastic rounding must draw the same), so
// they are pinned exactly; and seed 10 for variable 1 must not repeat seed 11
// for variable 0, as it would if the index were mixed into the seed before
// the multiplication.
func TestDrawsByHand(t *testing.T) {
	const n = 300
	draw := func(step, seed, index uint32) []uint32 {
		return MustExecOnce(testBackend(t), func(s, i *Node) *Node {
			return drawBits(shapes.Make(dtypes.Float32, 3, n/3), s, seed, i)
		}, step, index).Value().([][]uint32)[1]
	}
	for _, tc := range []struct{ step, seed, index uint32 }{{1, 0, 0}, {1, 11, 0}, {7, 11, 1}, {3, 10, 1}, {1 << 20, 0xDEADBEEF, 250}} {
		got := draw(tc.step, tc.seed, tc.index)
		offset := lowbias32(tc.step*0x85EBCA6B + (tc.seed ^ tc.index*0x9E3779B9))
		for j, g := range got {
			e := uint32(n/3 + j) // row 1 of [3, n/3]: the elements are numbered in row-major order
			if want := lowbias32(e + offset); g != want {
				t.Fatalf("step %d, seed %d, variable %d: draw %d is %#x, want %#x", tc.step, tc.seed, tc.index, e, g, want)
			}
		}
	}
	a, b := draw(3, 11, 0), draw(3, 10, 1)
	same := 0
	for i := range a {
		if a[i] == b[i] {
			same++
		}
	}
	if same > 0 {
		t.Errorf("seed 11 for variable 0 and seed 10 for variable 1 share %d of %d draws", same, len(a))
	}
}
