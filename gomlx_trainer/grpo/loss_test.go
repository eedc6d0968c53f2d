package grpo

import (
	"math"
	"testing"

	. "github.com/gomlx/gomlx/core/graph" //nolint:staticcheck
)

// lossCase is a tiny batch: 3 sequences × 4 positions. The numbers are chosen so
// that some ratios fall below 1−ε_low, some above 1+ε_high, and both signs of
// advantage occur, with masked positions (prompt, tool response, padding).
var (
	lcLogp = [][]float32{
		{-1.0, -0.5, -2.0, -0.1},
		{-0.3, -1.2, -0.7, -3.0},
		{-2.2, -0.05, -1.5, -0.9},
	}
	lcOld = [][]float32{
		{-1.4, -0.5, -1.5, -0.3},
		{-0.3, -0.8, -0.9, -2.0},
		{-2.0, -0.6, -1.5, -0.4},
	}
	lcRef = [][]float32{
		{-1.1, -0.7, -1.9, -0.2},
		{-0.5, -1.0, -0.6, -2.5},
		{-2.1, -0.3, -1.4, -1.0},
	}
	lcMask = [][]float32{
		{0, 1, 1, 1},
		{1, 1, 0, 1},
		{1, 1, 1, 0},
	}
	lcAdv = []float32{1.5, -0.5, -1.0}
)

// refPolicyLoss computes the loss and its statistics one token at a time,
// written from the formula in PolicyLoss's documentation.
func refPolicyLoss(logp, old, ref, w, mask [][]float32, adv []float32, cfg LossConfig) (loss, clip, tokens, kl float64, dLoss [][]float64) {
	dLoss = make([][]float64, len(logp))
	for i := range logp {
		dLoss[i] = make([]float64, len(logp[i]))
		for j := range logp[i] {
			lp, o, a := float64(logp[i][j]), float64(old[i][j]), float64(adv[i])
			r := math.Exp(lp - o)
			rc := math.Min(math.Max(r, 1-cfg.EpsLow), 1+cfg.EpsHigh)
			pg1, pg2 := -a*r, -a*rc
			pg, dpg := pg1, -a*r // derivative of pg with respect to logp
			if pg2 > pg1 {
				pg, dpg = pg2, 0
				if mask[i][j] > 0 {
					clip++
				}
			}
			k, dk := 0.0, 0.0
			if cfg.KLCoef != 0 {
				d := float64(ref[i][j]) - lp
				switch cfg.KLType {
				case "k1":
					k, dk = lp-float64(ref[i][j]), 1
				case "k3":
					k, dk = math.Exp(d)-d-1, -math.Exp(d)+1
				}
			}
			if mask[i][j] > 0 {
				tokens++
				kl += k
			}
			loss += float64(w[i][j]) * (pg + cfg.KLCoef*k)
			dLoss[i][j] = float64(w[i][j]) * (dpg + cfg.KLCoef*dk)
		}
	}
	return
}

func TestPolicyLoss(t *testing.T) {
	backend := testBackend(t)
	for _, tc := range []struct {
		name     string
		cfg      LossConfig
		perToken bool
	}{
		{"dapo clip, token mean", LossConfig{EpsLow: 0.2, EpsHigh: 0.28}, true},
		{"symmetric clip, sequence mean", LossConfig{EpsLow: 0.2, EpsHigh: 0.2}, false},
		{"k1 KL", LossConfig{EpsLow: 0.2, EpsHigh: 0.28, KLCoef: 0.1, KLType: "k1"}, true},
		{"k3 KL", LossConfig{EpsLow: 0.1, EpsHigh: 0.3, KLCoef: 0.05, KLType: "k3"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := TokenWeights(lcMask, tc.perToken)
			exec := MustNewExec(backend, func(logp, old, ref, adv, weights *Node) []*Node {
				out := PolicyLoss(LossInputs{LogProbs: logp, OldLogProbs: old, RefLogProbs: ref, Advantages: adv, Weights: weights}, tc.cfg)
				grad := Gradient(out.Loss, logp)[0]
				return []*Node{out.Loss, out.ClipTokens, out.Tokens, out.KLSum, grad}
			})
			res := exec.MustCall(lcLogp, lcOld, lcRef, lcAdv, w)
			wantLoss, wantClip, wantTokens, wantKL, wantGrad := refPolicyLoss(lcLogp, lcOld, lcRef, w, lcMask, lcAdv, tc.cfg)
			if got := float64(res[0].Value().(float32)); !near(got, wantLoss, 1e-5) {
				t.Errorf("loss = %.7f, want %.7f", got, wantLoss)
			}
			if got := float64(res[1].Value().(float32)); got != wantClip {
				t.Errorf("clipped tokens = %v, want %v", got, wantClip)
			}
			if wantClip == 0 {
				t.Errorf("test case clips no token; it should exercise the clip")
			}
			if got := float64(res[2].Value().(float32)); got != wantTokens {
				t.Errorf("tokens = %v, want %v", got, wantTokens)
			}
			if got := float64(res[3].Value().(float32)); !near(got, wantKL, 1e-5) {
				t.Errorf("KL sum = %.7f, want %.7f", got, wantKL)
			}
			grad := res[4].Value().([][]float32)
			for i := range grad {
				for j := range grad[i] {
					if !near(float64(grad[i][j]), wantGrad[i][j], 1e-5) {
						t.Errorf("dloss/dlogp[%d][%d] = %.7f, want %.7f", i, j, grad[i][j], wantGrad[i][j])
					}
				}
			}
		})
	}
}

// TestPolicyLossHandExample checks one token worked by hand: A = 1, logp − old
// = log 1.5, so the ratio 1.5 is clipped to 1.28 and the loss is −1.28 with zero
// gradient; with A = −1 the unclipped −(−1.5) = 1.5 is the larger and is kept.
func TestPolicyLossHandExample(t *testing.T) {
	backend := testBackend(t)
	for _, tc := range []struct {
		adv, want float32
	}{{1, -1.28}, {-1, 1.5}} {
		res := MustExecOnceN(backend, func(logp, old, adv, w *Node) []*Node {
			out := PolicyLoss(LossInputs{LogProbs: logp, OldLogProbs: old, Advantages: adv, Weights: w}, LossConfig{EpsLow: 0.2, EpsHigh: 0.28})
			return []*Node{out.Loss}
		}, [][]float32{{float32(math.Log(1.5))}}, [][]float32{{0}}, []float32{tc.adv}, [][]float32{{1}})
		if got := res[0].Value().(float32); math.Abs(float64(got-tc.want)) > 1e-6 {
			t.Errorf("A=%v: loss %v, want %v", tc.adv, got, tc.want)
		}
	}
}
