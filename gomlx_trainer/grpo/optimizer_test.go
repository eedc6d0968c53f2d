package grpo

import (
	"math"
	"testing"

	. "github.com/gomlx/gomlx/core/graph" //nolint:staticcheck
	mlmodel "github.com/gomlx/gomlx/ml/model"

	"github.com/mathrl/mathrl/gomlx_trainer/gomlxfix"
)

// refAdamW is PyTorch's AdamW step written out one number at a time, after
// clipping the gradients to a global norm (torch.nn.utils.clip_grad_norm_).
type refAdamW struct {
	cfg  AdamWConfig
	m, v []float64
	t    int
}

func (o *refAdamW) step(p, g []float64, lr float64) (norm float64) {
	if o.m == nil {
		o.m, o.v = make([]float64, len(p)), make([]float64, len(p))
	}
	for _, x := range g {
		norm += x * x
	}
	norm = math.Sqrt(norm)
	scale := 1.0
	if o.cfg.ClipNorm > 0 && norm > o.cfg.ClipNorm {
		scale = o.cfg.ClipNorm / norm
	}
	o.t++
	for i := range p {
		gi := g[i] * scale
		p[i] *= 1 - lr*o.cfg.WeightDecay
		o.m[i] = o.cfg.Beta1*o.m[i] + (1-o.cfg.Beta1)*gi
		o.v[i] = o.cfg.Beta2*o.v[i] + (1-o.cfg.Beta2)*gi*gi
		mhat := o.m[i] / (1 - math.Pow(o.cfg.Beta1, float64(o.t)))
		vhat := o.v[i] / (1 - math.Pow(o.cfg.Beta2, float64(o.t)))
		p[i] -= lr * mhat / (math.Sqrt(vhat) + o.cfg.Eps)
	}
	return norm
}

// TestAdamWWithAccumulation runs three optimizer steps, each summing the
// gradients of two micro-batches, and compares every parameter with refAdamW.
// The loss of a micro-batch is Σ c·p + ½ Σ p², so its gradient is c + p.
func TestAdamWWithAccumulation(t *testing.T) {
	backend := testBackend(t)
	for _, clip := range []float64{0, 0.5} {
		cfg := AdamWConfig{Beta1: 0.9, Beta2: 0.98, Eps: 1e-8, WeightDecay: 0.1, ClipNorm: clip}
		store := mlmodel.NewStore()
		store.VariableWithValue("/layer/w", []float32{0.5, -1, 2})
		store.VariableWithValue("/other/b", [][]float32{{0.1, 0.2}, {-0.3, 0.4}})
		vars := TrainableVariables(store)
		if len(vars) != 2 {
			t.Fatalf("TrainableVariables = %d, want 2", len(vars))
		}
		accumulate := mlmodel.MustNewExec(backend, store, func(_ *mlmodel.Scope, c1, c2 *Node) *Node {
			g := c1.Graph()
			loss := Add(
				Add(ReduceAllSum(Mul(c1, gomlxfix.VariableNode(vars[0], g))), ReduceAllSum(Mul(c2, gomlxfix.VariableNode(vars[1], g)))),
				MulScalar(Add(ReduceAllSum(Square(gomlxfix.VariableNode(vars[0], g))), ReduceAllSum(Square(gomlxfix.VariableNode(vars[1], g)))), 0.5))
			AccumulateGradients(store, vars, loss)
			return loss
		})
		apply := mlmodel.MustNewExec(backend, store, func(_ *mlmodel.Scope, lr *Node) *Node {
			return ApplyAdamW(store, vars, AccumulatedGradients(store, vars, lr.Graph(), true), lr, cfg)
		})

		p := []float64{0.5, -1, 2, 0.1, 0.2, -0.3, 0.4}
		ref := refAdamW{cfg: cfg}
		micro := [][2][]float32{
			{{1, 2, -1}, {0.5, 0.5, 0.5, 0.5}},
			{{-3, 0, 1}, {1, -1, 2, 0}},
		}
		for step := 0; step < 3; step++ {
			lr := LearningRate(step, 2, 0.01)
			// reference: gradient of the two micro-batches summed, at the current p
			g := make([]float64, len(p))
			for _, mb := range micro {
				c := append(append([]float32{}, mb[0]...), mb[1]...)
				for i := range p {
					g[i] += float64(c[i]) + p[i]
				}
				accumulate.MustCall(mb[0], [][]float32{mb[1][:2], mb[1][2:]})
			}
			wantNorm := ref.step(p, g, lr)
			gotNorm := float64(apply.MustCall(float32(lr))[0].Value().(float32))
			if !near(gotNorm, wantNorm, 1e-5) {
				t.Errorf("clip %v step %d: grad norm %v, want %v", clip, step, gotNorm, wantNorm)
			}
			w := vars[0].MustValue().Value().([]float32)
			b := vars[1].MustValue().Value().([][]float32)
			got := []float32{w[0], w[1], w[2], b[0][0], b[0][1], b[1][0], b[1][1]}
			for i := range p {
				if !near(float64(got[i]), p[i], 1e-5) {
					t.Errorf("clip %v step %d: param %d = %v, want %v", clip, step, i, got[i], p[i])
				}
			}
		}
	}
}

func TestLearningRate(t *testing.T) {
	for _, tc := range []struct {
		step, warmup int
		want         float64
	}{{0, 0, 1e-6}, {0, 4, 0.25e-6}, {3, 4, 1e-6}, {10, 4, 1e-6}} {
		if got := LearningRate(tc.step, tc.warmup, 1e-6); math.Abs(got-tc.want) > 1e-18 {
			t.Errorf("LearningRate(%d, %d) = %g, want %g", tc.step, tc.warmup, got, tc.want)
		}
	}
}

// TestClipByGlobalNorm checks the clip itself (AdamW's first step is blind to a
// uniform scale of the gradients, so a wrong scale can hide behind it): the
// gradients (3, 4) and (12) have global norm 13; a limit of 6.5 halves them,
// a limit of 20 or 0 leaves them as they are.
func TestClipByGlobalNorm(t *testing.T) {
	backend := testBackend(t)
	for _, tc := range []struct {
		limit, scale float64
	}{{6.5, 0.5}, {20, 1}, {0, 1}} {
		res := MustExecOnceN(backend, func(a, b *Node) []*Node {
			clipped, norm := ClipByGlobalNorm([]*Node{a, b}, tc.limit)
			return []*Node{clipped[0], clipped[1], norm}
		}, []float32{3, 4}, []float32{12})
		a, b, norm := res[0].Value().([]float32), res[1].Value().([]float32), res[2].Value().(float32)
		if !near(float64(norm), 13, 1e-6) {
			t.Errorf("limit %g: norm %v, want 13", tc.limit, norm)
		}
		want := []float64{3 * tc.scale, 4 * tc.scale, 12 * tc.scale}
		for i, got := range []float32{a[0], a[1], b[0]} {
			if !near(float64(got), want[i], 1e-6) {
				t.Errorf("limit %g: clipped gradient %d = %v, want %v", tc.limit, i, got, want[i])
			}
		}
	}
}
