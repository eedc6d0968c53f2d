package grpo

import (
	"math"
	"slices"
	"testing"

	"github.com/mathrl/mathrl/gomlx_trainer/qwen3"
)

// TestPadRows: a micro-batch of 3 rows on 4 devices gets one more row, a
// copy of the first sequence with every mask and loss weight 0, the rows
// before it and the first sequence's own mask left as they were; rows that
// already split (or one device) are returned as they are.
func TestPadRows(t *testing.T) {
	seqs := testSequences()
	for _, tc := range []struct{ devices, rows int }{{1, 3}, {3, 3}, {2, 4}, {4, 4}, {5, 5}} {
		got := padRows(seqs, tc.devices)
		if len(got) != tc.rows {
			t.Fatalf("%d devices: %d rows, want %d", tc.devices, len(got), tc.rows)
		}
		for i, s := range got {
			if i < len(seqs) {
				if !slices.Equal(s.Mask, seqs[i].Mask) || !slices.Equal(s.Weights, seqs[i].Weights) {
					t.Errorf("%d devices: row %d changed: mask %v weights %v", tc.devices, i, s.Mask, s.Weights)
				}
				continue
			}
			zero := make([]float32, len(seqs[0].Response))
			if !slices.Equal(s.Response, seqs[0].Response) || !slices.Equal(s.Mask, zero) || !slices.Equal(s.Weights, zero) {
				t.Errorf("%d devices: padding row %d: response %v mask %v weights %v, want the first's response, masked out",
					tc.devices, i, s.Response, s.Mask, s.Weights)
			}
		}
	}
	if want := []float32{1, 1, 1, 1}; !slices.Equal(seqs[0].Mask, want) {
		t.Errorf("padding changed the first sequence's mask to %v", seqs[0].Mask)
	}
}

// TestPadRowsWeighNothing runs the same micro-batch through the policy loss
// and the warm start's, on one device of the Go backend, as it is and padded
// to 4 rows as padRows pads it for 4 devices: the loss, every statistic and
// the accumulated gradients are the same (to float32 rounding, the padded
// matmuls being of another size).
func TestPadRowsWeighNothing(t *testing.T) {
	seqs := testSequences()
	for _, sft := range []bool{false, true} {
		stats := make([]StepStats, 2)
		grads := make([]map[string][]float32, 2)
		for i, rows := range [][]Sequence{seqs, padRows(seqs, 4)} {
			l := NewLearner(testBackend(t), tinyModel(t, 3), LossConfig{EpsLow: 0.2, EpsHigh: 0.28, EntropyCoef: 0.01},
				AdamWConfig{Beta1: 0.9, Beta2: 0.999, Eps: 1e-8}, 1)
			b, err := packBatch(rows)
			if err != nil {
				t.Fatal(err)
			}
			if sft {
				stats[i], err = l.accumulateSFT(b)
			} else {
				stats[i], err = l.accumulatePolicy(b)
			}
			if err != nil {
				t.Fatal(err)
			}
			grads[i] = accumulated(t, l)
		}
		a, p := stats[0], stats[1]
		if a.Tokens != p.Tokens || a.ClipTokens != p.ClipTokens || !near(a.Loss, p.Loss, 1e-6) || !near(a.PGLoss, p.PGLoss, 1e-6) ||
			!near(a.EntropySum, p.EntropySum, 1e-6) || !near(a.RatioSum, p.RatioSum, 1e-6) || !near(a.KLSum, p.KLSum, 1e-6) {
			t.Errorf("sft %v: padded %+v, unpadded %+v", sft, p, a)
		}
		// Float32 rounding only: XLA reduces a batch of another shape in another order.
		if d, scale := maxDiff(grads[0], grads[1]), maxAbs(grads[0]); d > 1e-5*scale {
			t.Errorf("sft %v: the padded row moved the gradients by up to %.3g (largest %.3g)", sft, d, scale)
		}
	}
}

// accumulated reads the learner's gradient accumulators, by weight.
func accumulated(t *testing.T, l *Learner) map[string][]float32 {
	t.Helper()
	out := map[string][]float32{}
	for _, v := range l.vars {
		g, err := qwen3.Float32s(accumulator(l.Model.Store, v).MustValue())
		if err != nil {
			t.Fatal(err)
		}
		out[v.Path()] = g
	}
	if len(out) == 0 {
		t.Fatal("no accumulator")
	}
	if maxAbs(out) == 0 {
		t.Fatal("every gradient is 0: the test cannot tell a padded row that weighs")
	}
	return out
}

// maxAbs is the largest magnitude in gs.
func maxAbs(gs map[string][]float32) float64 {
	m := 0.0
	for _, g := range gs {
		for _, x := range g {
			m = math.Max(m, math.Abs(float64(x)))
		}
	}
	return m
}

// TestNewSharded lays out 1, 2 and 4 devices under data and under fsdp,
// which needs no device: a mesh of that many devices (layout.NewMesh, whose
// specs layout's tests check) and the fsdp flag as asked (it alone makes
// Shard split the variables: on the Go backend no multi-device test would
// see it dropped).
func TestNewSharded(t *testing.T) {
	for _, n := range []int{1, 2, 4} {
		for _, fsdp := range []bool{false, true} {
			sh, err := newSharded(n, fsdp)
			if err != nil {
				t.Fatalf("%d devices, fsdp %v: %v", n, fsdp, err)
			}
			if sh.mesh.Devices() != n || sh.mesh.DeviceMesh().NumDevices() != n || sh.fsdp != fsdp {
				t.Errorf("%d devices, fsdp %v: devices %d, mesh of %d, fsdp %v", n, fsdp, sh.mesh.Devices(), sh.mesh.DeviceMesh().NumDevices(), sh.fsdp)
			}
		}
	}
}
