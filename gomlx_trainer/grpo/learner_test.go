package grpo

import (
	"math"
	"path/filepath"
	"testing"

	"github.com/gomlx/compute/dtypes"
	. "github.com/gomlx/gomlx/core/graph" //nolint:staticcheck
	mlmodel "github.com/gomlx/gomlx/ml/model"

	"github.com/mathrl/mathrl/gomlx_trainer/qwen3"
)

func tinyModel(t testing.TB, seed uint64) *qwen3.Model {
	t.Helper()
	cfg, err := qwen3.NamedConfig("tiny")
	if err != nil {
		t.Fatal(err)
	}
	m, err := qwen3.NewRandom(cfg, dtypes.Float32, seed)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func testSequences() []Sequence {
	mk := func(prompt, resp []int, mask []float32, adv float64) Sequence {
		lp := make([]float32, len(resp))
		for i := range lp {
			if mask[i] > 0 {
				lp[i] = -5.6 // about log(1/300): what a random tiny model gives
			}
		}
		return Sequence{Prompt: prompt, Response: resp, Mask: mask, LogProbs: lp, Advantage: adv}
	}
	seqs := []Sequence{
		mk([]int{256, 10, 20, 30}, []int{40, 41, 42, 257}, []float32{1, 1, 1, 1}, 1.2),
		mk([]int{256, 11}, []int{50, 51, 99, 98, 52, 257}, []float32{1, 1, 0, 0, 1, 1}, -0.7),
		mk([]int{256, 12, 13}, []int{60}, []float32{1}, 0.4),
	}
	masks := make([][]float32, len(seqs))
	for i, s := range seqs {
		masks[i] = s.Mask
	}
	for i, w := range TokenWeights(masks, true) {
		seqs[i].Weights = w
	}
	return seqs
}

func TestPackBatchAlignment(t *testing.T) {
	b, err := packBatch(testSequences())
	if err != nil {
		t.Fatal(err)
	}
	if len(b.IDs[0]) != 32 {
		t.Fatalf("padded length %d, want 32", len(b.IDs[0]))
	}
	// row 1: prompt [256 11], response [50 51 99 98 52 257] with 99, 98 masked.
	// Response token k sits at 2+k and is scored at position 1+k.
	row := 1
	if b.IDs[row][2] != 50 || b.Targets[row][1] != 50 || b.Targets[row][4] != 98 {
		t.Errorf("ids %v targets %v", b.IDs[row][:8], b.Targets[row][:8])
	}
	const w9 = float32(1) / 9
	wantW := []float32{0, w9, w9, 0, 0, w9, w9, 0} // 9 sampled tokens in the batch
	for i, w := range wantW {
		if math.Abs(float64(b.Weights[row][i]-w)) > 1e-7 {
			t.Errorf("weights %v, want %v", b.Weights[row][:8], wantW)
			break
		}
	}
	if b.OldLogProbs[row][1] != -5.6 || b.OldLogProbs[row][3] != 0 {
		t.Errorf("old log-probs %v", b.OldLogProbs[row][:8])
	}
}

// TestLearnerLogProbsMatchModel checks the alignment of the trainer's packed
// batches: its log-probs of the targets at position t equal
// qwen3.TokenLogProbs of the whole row (which shifts the ids itself) at t+1.
func TestLearnerLogProbsMatchModel(t *testing.T) {
	backend := testBackend(t)
	m := tinyModel(t, 7)
	l := NewLearner(backend, m, LossConfig{EpsLow: 0.2, EpsHigh: 0.28}, AdamWConfig{Beta1: 0.9, Beta2: 0.999, Eps: 1e-8}, 1)
	b, _ := packBatch(testSequences())
	got, err := l.LogProbs(b.IDs, b.Targets)
	if err != nil {
		t.Fatal(err)
	}
	want := mlmodel.MustCallOnce(backend, m.Store, func(scope *mlmodel.Scope, ids *Node) *Node {
		return qwen3.TokenLogProbs(scope, m.Config, ids, 1)
	}, b.IDs).Value().([][]float32)
	for i := range got {
		for p := 0; p+1 < len(got[i]); p++ {
			if !near(float64(got[i][p]), float64(want[i][p+1]), 1e-5) {
				t.Fatalf("row %d position %d: %v, model gives %v", i, p, got[i][p], want[i][p+1])
			}
		}
	}
}

// trainSteps runs n optimizer steps on the test batch, alternating a warm-start
// step and a GRPO step made of two micro-batches.
func trainSteps(t *testing.T, l *Learner, from, n int) {
	t.Helper()
	trainStepsWith(t, l, from, n, l.Apply)
}

// trainStepsWith is trainSteps with the optimizer step apply, and returns
// the gradient norm of each step.
func trainStepsWith(t *testing.T, l *Learner, from, n int, apply func(lr float64) (float64, error)) []float64 {
	t.Helper()
	seqs := testSequences()
	var norms []float64
	for step := from; step < from+n; step++ {
		b1, _ := packBatch(seqs[:2])
		b2, _ := packBatch(seqs[2:])
		if step%2 == 0 {
			if _, err := l.accumulateSFT(b1); err != nil {
				t.Fatal(err)
			}
		} else {
			for _, b := range []Batch{b1, b2} {
				if _, err := l.accumulatePolicy(b); err != nil {
					t.Fatal(err)
				}
			}
		}
		norm, err := apply(LearningRate(step, 2, 1e-2))
		if err != nil {
			t.Fatal(err)
		}
		norms = append(norms, norm)
	}
	return norms
}

func weightsOf(t *testing.T, m *qwen3.Model) map[string][]float32 {
	t.Helper()
	out := map[string][]float32{}
	for _, spec := range m.Config.Tensors() {
		v, err := qwen3.Float32s(m.Weight(spec.Name).MustValue())
		if err != nil {
			t.Fatal(err)
		}
		out[spec.Name] = v
	}
	return out
}

// TestResumeIsExact trains 4 steps in one go, and 2 steps + checkpoint + load +
// 2 steps, and requires bitwise identical weights: the checkpoint must carry the
// optimizer moments and step counter, not just the weights.
func TestResumeIsExact(t *testing.T) {
	backend := testBackend(t)
	lossCfg := LossConfig{EpsLow: 0.2, EpsHigh: 0.28}
	adam := AdamWConfig{Beta1: 0.9, Beta2: 0.98, Eps: 1e-8, WeightDecay: 0.1, ClipNorm: 1}

	straight := NewLearner(backend, tinyModel(t, 3), lossCfg, adam, 1)
	trainSteps(t, straight, 0, 4)

	first := NewLearner(backend, tinyModel(t, 3), lossCfg, adam, 1)
	trainSteps(t, first, 0, 2)
	dir := filepath.Join(t.TempDir(), "ckpt", CheckpointName(2))
	if err := SaveCheckpoint(dir, first.Model, nil, TrainState{Step: 2, Config: Default()}); err != nil {
		t.Fatal(err)
	}
	model, st, err := LoadCheckpoint(dir, dtypes.Float32)
	if err != nil {
		t.Fatal(err)
	}
	if st.Step != 2 {
		t.Errorf("state step %d", st.Step)
	}
	resumed := NewLearner(backend, model, lossCfg, adam, 1)
	trainSteps(t, resumed, 2, 2)

	want, got := weightsOf(t, straight.Model), weightsOf(t, resumed.Model)
	init := weightsOf(t, tinyModel(t, 3))
	moved := false
	for name, w := range want {
		for i := range w {
			if got[name][i] != w[i] {
				t.Fatalf("%s[%d]: resumed %v, uninterrupted %v", name, i, got[name][i], w[i])
			}
			if w[i] != init[name][i] {
				moved = true
			}
		}
	}
	if !moved {
		t.Fatal("training did not change any weight")
	}
}

// TestWarmStartLearns checks that supervised steps lower the loss of the batch.
func TestWarmStartLearns(t *testing.T) {
	backend := testBackend(t)
	l := NewLearner(backend, tinyModel(t, 5), LossConfig{EpsLow: 0.2, EpsHigh: 0.28}, AdamWConfig{Beta1: 0.9, Beta2: 0.999, Eps: 1e-8}, 1)
	b, _ := packBatch(testSequences())
	var first, last float64
	for i := 0; i < 15; i++ {
		st, err := l.accumulateSFT(b)
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			first = st.Loss
		}
		last = st.Loss
		if _, err := l.Apply(3e-3); err != nil {
			t.Fatal(err)
		}
	}
	if !(last < first*0.7) {
		t.Errorf("warm-start loss went from %.4f to %.4f, want a clear drop", first, last)
	}
}
