package grpo

import (
	"slices"
	"testing"

	"github.com/gomlx/compute/dtypes"
	mlmodel "github.com/gomlx/gomlx/ml/model"

	"github.com/mathrl/mathrl/gomlx_trainer/memplan"
	"github.com/mathrl/mathrl/gomlx_trainer/qwen3"
)

// TestPackBatchPromptLens: each row's PromptLens, which FlowRL's log Z head
// averages over (positions 0 … PromptLens−2), is the prompt's token count:
// the row's first PromptLens ids are the prompt, and the first response
// token is scored (its old log-prob and weight) at position PromptLens−1,
// the prompt's last token, the one the mean leaves out.
func TestPackBatchPromptLens(t *testing.T) {
	var seqs []Sequence
	for i, p := range []int{1, 3, 6} {
		s := Sequence{Advantage: float64(i)}
		for k := range p {
			s.Prompt = append(s.Prompt, 10+k)
		}
		for k := range 2 + i {
			s.Response = append(s.Response, 50+k)
			s.Mask, s.LogProbs, s.Weights = append(s.Mask, 1), append(s.LogProbs, -float32(k+1)), append(s.Weights, 1)
		}
		seqs = append(seqs, s)
	}
	b, err := packBatch(seqs)
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range seqs {
		p := int(b.PromptLens[i])
		if p != len(s.Prompt) {
			t.Fatalf("row %d: PromptLens %v, the prompt has %d tokens", i, b.PromptLens[i], len(s.Prompt))
		}
		ids := make([]int, p)
		for k := range p {
			ids[k] = int(b.IDs[i][k])
		}
		if !slices.Equal(ids, s.Prompt) || int(b.IDs[i][p]) != s.Response[0] {
			t.Errorf("row %d: ids %v, prompt %v then %v", i, b.IDs[i], s.Prompt, s.Response)
		}
		if b.OldLogProbs[i][p-1] != s.LogProbs[0] || b.Weights[i][p-1] == 0 || int(b.Targets[i][p-1]) != s.Response[0] {
			t.Errorf("row %d: position %d (PromptLens−1) does not score the first response token", i, p-1)
		}
	}
}

// TestMemoryPlanHeadInBFloat16: with a bfloat16 policy the head stays
// float32 (InitFlowRLHead's variables), so the plan's head term is the bytes
// of those variables plus, per parameter, the accumulator and the two
// moments in the recipe's precision dtypes, not the policy's 2 bytes a
// weight.
func TestMemoryPlanHeadInBFloat16(t *testing.T) {
	shape, err := qwen3.NamedConfig("tiny")
	if err != nil {
		t.Fatal(err)
	}
	store := mlmodel.NewStore()
	if err := InitFlowRLHead(store, shape.Hidden, 3, 1); err != nil {
		t.Fatal(err)
	}
	var params, weightBytes int64
	for _, v := range flowHeadVars(store) {
		params += int64(v.Shape().Size())
		weightBytes += int64(v.Shape().Size()) * int64(v.DType().Size())
	}
	cfg := Default()
	cfg.TinyModel, cfg.DType, cfg.PromptData, cfg.AdvantageEstimator, cfg.FlowRLLogZ = "tiny", "bfloat16", "arith", "flowrl", "head"
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	rc, err := cfg.MemoryRecipe()
	if err != nil {
		t.Fatal(err)
	}
	size := func(d dtypes.DType) int64 {
		if d == dtypes.InvalidDType {
			return 4 // unset: float32 (precision.Optimizer's zero value)
		}
		return int64(d.Size())
	}
	pr := PrecisionOf(cfg)
	want := weightBytes + params*(size(pr.GradDType)+size(pr.ExpAvgDType)+size(pr.ExpAvgSqDType))
	rep := memplan.Plan(shape, rc, 1<<40, memplan.CPU)
	if got := rep.Train.Term(memplan.TermFlowRLHead); got != want {
		t.Errorf("bfloat16 policy: the head term is %d bytes, want %d (float32 weights %d bytes)", got, want, weightBytes)
	}
}
