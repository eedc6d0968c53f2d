package grpo

import (
	"math"
	"path/filepath"
	"testing"

	"github.com/mathrl/mathrl/internal/hfref"
)

// TestTrainedCheckpointLoadsInTransformers trains two steps, saves the
// checkpoint as the trainer does, and has transformers load it (live): its
// log-probs of the targets must equal the learner's within 1e-5 of their
// largest magnitude. A check that the steps moved the log-probs far past that
// bound makes sure a trained checkpoint, not the initial one, is compared.
func TestTrainedCheckpointLoadsInTransformers(t *testing.T) {
	backend := testBackend(t)
	adam := AdamWConfig{Beta1: 0.9, Beta2: 0.98, Eps: 1e-8, WeightDecay: 0.1, ClipNorm: 1}
	l := NewLearner(backend, tinyModel(t, 3), LossConfig{EpsLow: 0.2, EpsHigh: 0.28}, adam, 1)
	b, _ := packBatch(testSequences())
	before, err := l.LogProbs(b.IDs, b.Targets)
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if _, _, err := l.Step(testSequences(), StepOptions{SFT: true, MicroBatch: 2, LR: 3e-2}); err != nil {
			t.Fatal(err)
		}
	}
	got, err := l.LogProbs(b.IDs, b.Targets)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), CheckpointName(2))
	if err := SaveCheckpoint(dir, l.Model, nil, TrainState{Step: 2, Config: Default()}); err != nil {
		t.Fatal(err)
	}
	logits := hfref.Logits(t, dir, b.IDs)

	scale, worst, moved := 0.0, 0.0, 0.0
	for r := range b.IDs {
		for p, target := range b.Targets[r] {
			want := logSoftmaxAt(logits[r][p], int(target))
			scale = math.Max(scale, math.Abs(want))
			worst = math.Max(worst, math.Abs(float64(got[r][p])-want))
			moved = math.Max(moved, math.Abs(float64(before[r][p])-want))
		}
	}
	t.Logf("trained checkpoint in transformers: log-probs differ from the learner's by %.2e of the largest %.2f; "+
		"the two steps moved them by up to %.2f", worst/scale, scale, moved)
	if worst > 1e-5*scale {
		t.Errorf("transformers' log-probs of the trained checkpoint differ from the learner's by %.2e of the largest", worst/scale)
	}
	if moved < 1e-2 {
		t.Errorf("the two steps moved the log-probs by %.2e only: the check cannot tell a trained checkpoint from the initial one", moved)
	}
}

// logSoftmaxAt is log softmax(row)[k], in float64.
func logSoftmaxAt(row []float64, k int) float64 {
	top := math.Inf(-1)
	for _, v := range row {
		top = math.Max(top, v)
	}
	sum := 0.0
	for _, v := range row {
		sum += math.Exp(v - top)
	}
	return row[k] - top - math.Log(sum)
}
