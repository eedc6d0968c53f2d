package grpo

import (
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/dtypes/bfloat16"
	. "github.com/gomlx/gomlx/core/graph" //nolint:staticcheck
	"github.com/gomlx/gomlx/core/tensors"

	"github.com/mathrl/mathrl/gomlx_trainer/precision"
	"github.com/mathrl/mathrl/gomlx_trainer/qwen3"
)

// remainderOf is SplitRemainder computed on the host, bit by bit, as
// Transformer Engine describes it: the high half rounded half away from zero,
// the low half kept as a signed 16-bit number.
func remainderOf(x float32) (uint16, int16) {
	bits := math.Float32bits(x)
	return uint16((bits + 0x8000) >> 16), int16(uint16(bits))
}

// finiteFloats returns n float32s with random bits (every exponent, both
// signs) that are finite, and the ties and near-ties of a few numbers.
func finiteFloats(n int) []float32 {
	rng := rand.New(rand.NewPCG(7, 7))
	var out []float32
	for _, bits := range []uint32{0x3F808000, 0x3F818000, 0xBF808000, 0x3F807FFF, 0xBF80FFFF, 0x00008000, 0x80000000, 0} {
		out = append(out, math.Float32frombits(bits))
	}
	for len(out) < n {
		x := math.Float32frombits(rng.Uint32())
		if !math.IsNaN(float64(x)) && !math.IsInf(float64(x), 0) && math.Abs(float64(x)) < 3e38 {
			out = append(out, x)
		}
	}
	return out
}

// TestRemainderIsTheFloat32Master checks on the test backend that
// SplitRemainder gives the host's reference pair for random float32s and
// ties, and that JoinRemainder gives every float32 back bit for bit.
func TestRemainderIsTheFloat32Master(t *testing.T) {
	xs := finiteFloats(4096)
	out := MustExecOnceN(testBackend(t), func(x *Node) []*Node {
		w, r := SplitRemainder(x)
		return []*Node{w, r, JoinRemainder(w, r)}
	}, xs)
	ws, rs, back := out[0].Value().([]bfloat16.BFloat16), out[1].Value().([]int16), out[2].Value().([]float32)
	for i, x := range xs {
		wantW, wantR := remainderOf(x)
		if uint16(ws[i]) != wantW || rs[i] != wantR {
			t.Fatalf("SplitRemainder(%#08x) = %#04x, %d; want %#04x, %d", math.Float32bits(x), uint16(ws[i]), rs[i], wantW, wantR)
		}
		if math.Float32bits(back[i]) != math.Float32bits(x) {
			t.Fatalf("JoinRemainder(SplitRemainder(%#08x)) = %#08x", math.Float32bits(x), math.Float32bits(back[i]))
		}
		// The weight is x rounded to nearest: it differs from round-to-nearest-even only at a tie.
		if rne := bfloat16.FromFloat32(x); rne != ws[i] && uint16(math.Float32bits(x)) != 0x8000 {
			t.Fatalf("weight of %#08x is %#04x, nearest even %#04x, and it is no tie", math.Float32bits(x), uint16(ws[i]), uint16(rne))
		}
	}
}

// TestStochasticRoundingIsUnbiased rounds 1 + 0.3 ulp (an ulp of bfloat16 at 1
// is 2^-7) 65,536 times: every result is one of the two neighbours, the share
// rounded up is 0.3 within 4 standard deviations, the same step draws the
// same and another step draws otherwise.
func TestStochasticRoundingIsUnbiased(t *testing.T) {
	const n = 1 << 16
	ulp := math.Pow(2, -7)
	x := float32(1 + 0.3*ulp)
	xs := make([]float32, n)
	for i := range xs {
		xs[i] = x
	}
	round := func(step uint32) []bfloat16.BFloat16 {
		out := MustExecOnce(testBackend(t), func(x, s *Node) *Node {
			return StochasticBFloat16(x, drawBits(x.Shape(), s, 11, Scalar(s.Graph(), dtypes.Uint32, 3)))
		}, xs, step)
		return out.Value().([]bfloat16.BFloat16)
	}
	first, again, next := round(5), round(5), round(6)
	up, same, differ := 0, 0, 0
	for i, w := range first {
		switch w.Float32() {
		case 1:
		case float32(1 + ulp):
			up++
		default:
			t.Fatalf("element %d rounded to %v, not a neighbour of %v", i, w.Float32(), x)
		}
		if again[i] == w {
			same++
		}
		if next[i] != w {
			differ++
		}
	}
	share, sd := float64(up)/n, math.Sqrt(0.3*0.7/n)
	if math.Abs(share-0.3) > 4*sd {
		t.Errorf("rounded up %.4f of the time, want 0.3 ± %.4f", share, 4*sd)
	}
	if same != n {
		t.Errorf("the same step drew differently at %d of %d elements", n-same, n)
	}
	if differ < n/4 { // two independent draws differ at 2·0.3·0.7 = 42% of the elements
		t.Errorf("the next step rounded only %d of %d elements otherwise", differ, n)
	}
}

// startingModels returns a bfloat16 tiny model and a float32 one holding the
// same (bfloat16) values, so that a difference after training comes from the
// precision of the training alone.
func startingModels(t *testing.T, seed uint64) (bf16, f32 *qwen3.Model) {
	t.Helper()
	cfg, err := qwen3.NamedConfig("tiny")
	if err != nil {
		t.Fatal(err)
	}
	if bf16, err = qwen3.NewRandom(cfg, dtypes.BFloat16, seed); err != nil {
		t.Fatal(err)
	}
	f32 = tinyModel(t, seed)
	for name, vals := range weightsOf(t, bf16) {
		if err := f32.Weight(name).SetValue(tensors.FromFlatDataAndDimensions(vals, f32.Weight(name).Shape().Dimensions...)); err != nil {
			t.Fatal(err)
		}
	}
	return bf16, f32
}

// sftSteps takes n warm-start steps at lr on the test sequences.
func sftSteps(t *testing.T, l *Learner, n int, lr float64) {
	t.Helper()
	for range n {
		if _, _, err := l.Step(testSequences(), StepOptions{SFT: true, LR: lr}); err != nil {
			t.Fatal(err)
		}
	}
}

// movement compares the change of the weights from init to got with the
// change from init to want: the ratio of their norms and their cosine, over
// all the weights.
func movement(init, got, want map[string][]float32) (ratio, cosine float64) {
	var dot, gg, ww float64
	for name, w := range want {
		for i := range w {
			dg, dw := float64(got[name][i]-init[name][i]), float64(w[i]-init[name][i])
			dot, gg, ww = dot+dg*dw, gg+dg*dg, ww+dw*dw
		}
	}
	return math.Sqrt(gg / ww), dot / math.Sqrt(gg*ww)
}

// mastersOf returns the float32 value each weight of l's model carries into
// its next update, read on the host: the float32 copy, the bfloat16 weight
// joined with its remainder (JoinRemainder on the host), else the weight.
func mastersOf(t *testing.T, l *Learner) map[string][]float32 {
	t.Helper()
	out := weightsOf(t, l.Model)
	for name := range out {
		v := l.Model.Weight(name)
		mode := masterOf(l.prec, v)
		if mode != precision.MasterFloat32 && mode != precision.MasterRemainder {
			continue
		}
		master, err := qwen3.Float32s(l.Model.Store.GetVariable(masterPath(v, mode)).MustValue())
		if mode == precision.MasterRemainder {
			master, err = joinedOnHost(out[name], l.Model.Store.GetVariable(masterPath(v, mode)).MustValue())
		}
		if err != nil {
			t.Fatal(err)
		}
		out[name] = master
	}
	return out
}

// joinedOnHost is JoinRemainder on the host: the bfloat16 weights w (as
// float32s, so their low 16 bits are zero) plus their int16 remainders.
func joinedOnHost(w []float32, remainders *tensors.Tensor) ([]float32, error) {
	var r []int16
	var err error
	remainders.ConstFlatData(func(flat any) {
		rs, ok := flat.([]int16)
		if !ok {
			err = fmt.Errorf("remainder of dtype %s, want int16", remainders.DType())
			return
		}
		r = append(r, rs...)
	})
	if err != nil {
		return nil, err
	}
	out := make([]float32, len(w))
	for i, x := range w {
		out[i] = math.Float32frombits(math.Float32bits(x) + uint32(int32(r[i])))
	}
	return out, nil
}

// bounds are the accepted range of movement's ratio and cosine.
type bounds struct{ minRatio, maxRatio, minCosine, maxCosine float64 }

// holds reports whether ratio and cosine are within b.
func (b bounds) holds(ratio, cosine float64) bool {
	return ratio >= b.minRatio && ratio <= b.maxRatio && cosine >= b.minCosine && cosine <= b.maxCosine
}

// TestBFloat16TracksFloat32 takes 40 warm-start steps from the same start in
// float32 and in bfloat16, at lr 1e-5 and at the seed recipes' lr 1e-6: an
// AdamW step then moves a weight by about lr, below half a bfloat16 ulp of most
// of the tiny model's weights. With a master (the default float32 copy, the
// remainder) the bfloat16 weights move as the float32 ones do, in size and
// direction; stochastic rounding follows them on average; rounding to nearest
// (no master, mathrl before masters) loses most of the updates, and at 1e-6
// nearly all. At 1e-6, 40 steps move a weight by about 4e-5, under half an
// ulp of most weights, so the bfloat16 weights show only the updates that
// crossed a rounding boundary: what must track float32 there is the master,
// the value the next update starts from (mastersOf), and the weights are
// only logged. scripts/device/check_h200.sh runs it on the GPU too.
func TestBFloat16TracksFloat32(t *testing.T) {
	const steps = 40
	adam := AdamWConfig{Beta1: 0.9, Beta2: 0.999, Eps: 1e-8, ClipNorm: 1}
	backend := testBackend(t)
	bf16Start, f32Start := startingModels(t, 9)
	init := weightsOf(t, f32Start)
	for _, lr := range []struct {
		lr           float64
		weightsTrack bool   // the bfloat16 weights, not only the masters, stay within the bounds
		stochastic   bounds // stochastic rounding: its noise, about an ulp a weight, is larger against smaller steps
		nearest      bounds // rounded to nearest; the masters' bounds are the same at both rates
	}{
		// Measured on both CPU backends (ratio, cosine) at 1e-5: 1.006, 0.993
		// with a master (float32 copy or remainder, float32 or bfloat16
		// moments); stochastic 1.134, 0.883 (its rounding noise adds length);
		// rounded to nearest 0.485, 0.353; the masters 0.997, 1.000. At 1e-6 the
		// masters 1.001, 0.996 (the weights 0.933, 0.722); stochastic 1.918,
		// 0.521; rounded to nearest 0.202, 0.131.
		{1e-5, true, bounds{0.9, 1.25, 0.8, 1}, bounds{0, 0.7, 0, 0.6}},
		{1e-6, false, bounds{1.2, 2.6, 0.35, 0.8}, bounds{0, 0.3, -1, 0.3}},
	} {
		f32Model, err := f32Start.Copy()
		if err != nil {
			t.Fatal(err)
		}
		f32 := NewLearner(backend, f32Model, LossConfig{}, adam, 1)
		sftSteps(t, f32, steps, lr.lr)
		want := weightsOf(t, f32.Model)
		for _, tc := range []struct {
			name string
			prec precision.Optimizer
			bounds
		}{
			{"default float32 master", precision.Optimizer{}, bounds{0.95, 1.05, 0.98, 1}},
			{"remainder", precision.Optimizer{Master: precision.MasterRemainder}, bounds{0.95, 1.05, 0.98, 1}},
			{"stochastic", precision.Optimizer{Master: precision.MasterStochastic, Seed: 1}, lr.stochastic},
			{"bfloat16 moments", precision.Optimizer{Master: precision.MasterRemainder, ExpAvgDType: dtypes.BFloat16, ExpAvgSqDType: dtypes.BFloat16}, bounds{0.95, 1.05, 0.98, 1}},
			{"rounded to nearest", precision.Optimizer{Master: precision.MasterNone}, lr.nearest},
		} {
			t.Run(fmt.Sprintf("lr %g/%s", lr.lr, tc.name), func(t *testing.T) {
				model, err := bf16Start.Copy()
				if err != nil {
					t.Fatal(err)
				}
				a := adam
				a.Precision = tc.prec
				l := NewLearner(backend, model, LossConfig{}, a, 1)
				sftSteps(t, l, steps, lr.lr)
				ratio, cosine := movement(init, mastersOf(t, l), want)
				wRatio, wCosine := movement(init, weightsOf(t, l.Model), want)
				t.Logf("lr %g, %s: masters moved %.3f× as far as float32's weights, cosine %.3f; bfloat16 weights %.3f×, cosine %.3f",
					lr.lr, tc.name, ratio, cosine, wRatio, wCosine)
				if !tc.holds(ratio, cosine) {
					t.Errorf("%s: masters ratio %.3f (want %g to %g), cosine %.3f (want %g to %g)", tc.name, ratio, tc.minRatio, tc.maxRatio,
						cosine, tc.minCosine, tc.maxCosine)
				}
				if lr.weightsTrack && !tc.holds(wRatio, wCosine) {
					t.Errorf("%s: weights ratio %.3f (want %g to %g), cosine %.3f (want %g to %g)", tc.name, wRatio, tc.minRatio, tc.maxRatio,
						wCosine, tc.minCosine, tc.maxCosine)
				}
			})
		}
	}
}

// TestResumeIsExactInBFloat16 is TestResumeIsExact with bfloat16 weights
// under each way of keeping their master: the checkpoint carries the master
// (the float32 copy or the remainders) and, for stochastic rounding, the step
// that keys its draws.
func TestResumeIsExactInBFloat16(t *testing.T) {
	backend := testBackend(t)
	for _, prec := range []precision.Optimizer{{}, {Master: precision.MasterRemainder, ExpAvgDType: dtypes.BFloat16}, {Master: precision.MasterStochastic, Seed: 3, GradDType: dtypes.BFloat16}} {
		t.Run(masterName(prec), func(t *testing.T) {
			adam := AdamWConfig{Beta1: 0.9, Beta2: 0.98, Eps: 1e-8, WeightDecay: 0.1, ClipNorm: 1, Precision: prec}
			start, _ := startingModels(t, 3)
			fresh := func() *qwen3.Model {
				m, err := start.Copy()
				if err != nil {
					t.Fatal(err)
				}
				return m
			}
			straight := NewLearner(backend, fresh(), LossConfig{EpsLow: 0.2, EpsHigh: 0.28}, adam, 1)
			trainSteps(t, straight, 0, 4)
			first := NewLearner(backend, fresh(), LossConfig{EpsLow: 0.2, EpsHigh: 0.28}, adam, 1)
			trainSteps(t, first, 0, 2)
			dir := filepath.Join(t.TempDir(), "ckpt", CheckpointName(2))
			if err := SaveCheckpoint(dir, first.Model, nil, TrainState{Step: 2, Config: Default()}); err != nil {
				t.Fatal(err)
			}
			model, _, err := LoadCheckpoint(dir, dtypes.BFloat16)
			if err != nil {
				t.Fatal(err)
			}
			resumed := NewLearner(backend, model, LossConfig{EpsLow: 0.2, EpsHigh: 0.28}, adam, 1)
			trainSteps(t, resumed, 2, 2)
			want, got, init := weightsOf(t, straight.Model), weightsOf(t, resumed.Model), weightsOf(t, start)
			moved := 0
			for name, w := range want {
				for i := range w {
					if got[name][i] != w[i] {
						t.Fatalf("%s[%d]: resumed %v, uninterrupted %v", name, i, got[name][i], w[i])
					}
					if w[i] != init[name][i] {
						moved++
					}
				}
			}
			if moved == 0 {
				t.Fatal("training did not change any weight")
			}
			for v := range resumed.Model.Store.IterVariables() {
				if w := straight.Model.Store.GetVariable(v.Path()); w == nil || !w.Shape().Equal(v.Shape()) {
					t.Errorf("resumed state %s %s has no twin of that shape in the uninterrupted run", v.Path(), v.Shape())
				}
			}
		})
	}
}

// masterName names p's master mode in test names.
func masterName(p precision.Optimizer) string {
	if p.Master == "" {
		return precision.MasterFloat32
	}
	return p.Master
}

// TestPrecisionKeys checks how the Megatron keys resolve into the optimizer's
// precision, and that Validate refuses what Megatron refuses, naming the key.
func TestPrecisionKeys(t *testing.T) {
	base := demoRecipe(t)
	base.DType = "bfloat16"
	aware := base
	aware.UsePrecisionAwareOptimizer = true
	with := func(c Config, set func(*Config)) Config { set(&c); return c }
	for _, tc := range []struct {
		name string
		cfg  Config
		want precision.Optimizer
	}{
		{"plain: a float32 master copy", base, precision.Optimizer{Master: precision.MasterFloat32, Seed: uint32(base.Seed)}},
		{"precision-aware: remainders", aware, precision.Optimizer{Master: precision.MasterRemainder, Seed: uint32(base.Seed), GradDType: dtypes.Float32, ExpAvgDType: dtypes.Float32, ExpAvgSqDType: dtypes.Float32}},
		{"precision-aware without remainders", with(aware, func(c *Config) { c.StoreParamRemainders = false }),
			precision.Optimizer{Master: precision.MasterFloat32, Seed: uint32(base.Seed), GradDType: dtypes.Float32, ExpAvgDType: dtypes.Float32, ExpAvgSqDType: dtypes.Float32}},
		{"bfloat16 master, stochastic", with(aware, func(c *Config) {
			c.MainParamsDType, c.StochasticRounding, c.ExpAvgDType, c.MainGradsDType, c.Seed = "bfloat16", true, "bfloat16", "bfloat16", 7
		}), precision.Optimizer{Master: precision.MasterStochastic, Seed: 7, GradDType: dtypes.BFloat16, ExpAvgDType: dtypes.BFloat16, ExpAvgSqDType: dtypes.Float32}},
		{"bfloat16 master, nearest", with(aware, func(c *Config) { c.MainParamsDType, c.ExpAvgSqDType = "bfloat16", "bfloat16" }),
			precision.Optimizer{Master: precision.MasterNone, Seed: uint32(base.Seed), GradDType: dtypes.Float32, ExpAvgDType: dtypes.Float32, ExpAvgSqDType: dtypes.BFloat16}},
	} {
		if err := tc.cfg.Validate(); err != nil {
			t.Errorf("%s: %v", tc.name, err)
		}
		if got := PrecisionOf(tc.cfg); got != tc.want {
			t.Errorf("%s: precision %+v, want %+v", tc.name, got, tc.want)
		}
	}
	for _, tc := range []struct {
		name, key string
		cfg       Config
	}{
		{"a dtype without the flag", "exp_avg_dtype", with(base, func(c *Config) { c.ExpAvgDType = "bfloat16" })},
		{"an unknown dtype", "main_grads_dtype", with(aware, func(c *Config) { c.MainGradsDType = "float16" })},
		{"a bfloat16 master of float32 weights", "main_params_dtype", with(aware, func(c *Config) { c.DType, c.MainParamsDType = "float32", "bfloat16" })},
		{"stochastic rounding with a float32 master", "stochastic_rounding", with(aware, func(c *Config) { c.StochasticRounding = true })},
	} {
		err := tc.cfg.Validate()
		if err == nil || !strings.Contains(err.Error(), "config "+tc.key+":") {
			t.Errorf("%s: Validate() = %v, want an error naming %s", tc.name, err, tc.key)
		}
	}
}
