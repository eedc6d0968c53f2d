package grpo

import (
	"context"
	"slices"
	"testing"

	"github.com/gomlx/compute/dtypes"

	"github.com/mathrl/mathrl/gomlx_trainer/engine"
	"github.com/mathrl/mathrl/gomlx_trainer/qwen3"
	"github.com/mathrl/mathrl/gomlx_trainer/rollout"
	"github.com/mathrl/mathrl/gomlx_trainer/sampler"
)

// TestEvalLoadsTheRequestedDType is the regression test of `mathrl eval
// --dtype bf16`, which once ran in float32 without a word: every spelling
// qwen3.ParseDType reads gives its dtype, and anything else is an error.
func TestEvalLoadsTheRequestedDType(t *testing.T) {
	cfg, err := qwen3.NamedConfig("tiny")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := qwen3.WriteRandom(cfg, dir, "F32", 1); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]dtypes.DType{"bf16": dtypes.BFloat16, "bfloat16": dtypes.BFloat16, "f32": dtypes.Float32, "float32": dtypes.Float32} {
		req := DefaultEvalRequest()
		req.Model, req.DType = dir, name
		m, err := req.loadModel()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got := m.Weight("model.embed_tokens.weight").Shape().DType; got != want {
			t.Errorf("--dtype %s: weights in %s, want %s", name, got, want)
		}
	}
	req := DefaultEvalRequest()
	req.Model, req.DType = dir, "fp16"
	if _, err := req.loadModel(); err == nil {
		t.Error("--dtype fp16: no error")
	}
}

// TestEvaluateBatchSeeds evaluates one prompt 4 times in batches of 2: batch
// b samples at Seed + b, so the two batches differ, and each equals an
// evaluation of that batch alone at its seed.
func TestEvaluateBatchSeeds(t *testing.T) {
	m := tinyModel(t, 3)
	cfg := Default()
	cfg.Tokenizer, cfg.UseTools = "bytes", false
	proto, _, err := newProtocol(cfg, m.Config.VocabSize)
	if err != nil {
		t.Fatal(err)
	}
	smp := engine.NewBuiltin(sampler.New(testBackend(t), m))
	opt := EvalOptions{Problems: []Problem{{ID: "p", Text: "What is 2+3?", Answer: "5"}}, K: 4, Budget: 12,
		Temperature: 1, TopP: 1, Scorer: "math", Seed: 40, BatchSize: 2}
	all, err := Evaluate(context.Background(), smp, proto, nil, opt)
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 4 {
		t.Fatalf("%d samples, want 4", len(all))
	}
	if all[0].Response == all[2].Response && all[1].Response == all[3].Response {
		t.Errorf("the two batches of one prompt sampled the same responses %q, %q", all[0].Response, all[1].Response)
	}
	for b := range 2 {
		one := opt
		one.K, one.Seed = 2, opt.Seed+uint64(b)
		alone, err := Evaluate(context.Background(), smp, proto, nil, one)
		if err != nil {
			t.Fatal(err)
		}
		for i, s := range alone {
			got := all[2*b+i]
			s.SampleIndex += 2 * b
			if got != s || got.Seed != int64(opt.Seed)+int64(b) {
				t.Errorf("batch %d, sample %d: %+v; alone at seed %d: %+v", b, i, got, one.Seed, s)
			}
		}
	}
}

// scriptedEngine answers every sequence of a session with one turn: the ids
// of "\boxed{5}" and <|im_end|>. It records the options of each session.
type scriptedEngine struct {
	answer []int
	starts []engine.Options
}

func (e *scriptedEngine) Start(_ context.Context, prompts [][]int, opts engine.Options) (engine.Session, error) {
	e.starts = append(e.starts, opts)
	return scriptedSession{e.answer}, nil
}

func (e *scriptedEngine) Sync(context.Context, int) error { return nil }

type scriptedSession struct{ answer []int }

func (s scriptedSession) Generate(_ context.Context, active, _ []int, _ func(rollout.StepReport)) ([]rollout.Turn, error) {
	turns := make([]rollout.Turn, len(active))
	for j := range turns {
		turns[j] = rollout.Turn{IDs: s.answer, LogProbs: make([]float32, len(s.answer))}
	}
	return turns, nil
}

func (scriptedSession) Append(int, []int) error { return nil }
func (scriptedSession) Close()                  {}

// TestEvaluateThroughAnEngine evaluates with an engine that is not the
// sampler: the samples are the engine's, scored, and each batch's session
// starts at the batch's seed with the budget and the stop ids.
func TestEvaluateThroughAnEngine(t *testing.T) {
	cfg := Default()
	cfg.Tokenizer, cfg.UseTools = "bytes", false
	proto, _, err := newProtocol(cfg, 1024)
	if err != nil {
		t.Fatal(err)
	}
	sp := proto.Tok.Special()
	eng := &scriptedEngine{answer: append(proto.Tok.Encode(`\boxed{5}`), sp.IMEnd)}
	opt := EvalOptions{Problems: []Problem{{ID: "p", Text: "What is 2+3?", Answer: "5"}}, K: 3, Budget: 20,
		Temperature: 1, TopP: 1, Scorer: "math", Seed: 40, BatchSize: 2}
	samples, err := Evaluate(context.Background(), eng, proto, nil, opt)
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range samples {
		if s.Response != `\boxed{5}<|im_end|>` || s.Score != 1 {
			t.Errorf("sample %d: %q scored %g, want the engine's answer scored 1", i, s.Response, s.Score)
		}
	}
	if len(eng.starts) != 2 || eng.starts[0].Seed != 40 || eng.starts[1].Seed != 41 || eng.starts[0].MaxNewTokens != 20 ||
		!slices.Contains(eng.starts[0].StopIDs, sp.IMEnd) {
		t.Errorf("sessions started with %+v; want 2, at seeds 40 and 41, budget 20, stopping at <|im_end|>", eng.starts)
	}
}
