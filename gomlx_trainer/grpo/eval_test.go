package grpo

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gomlx/compute/dtypes"

	"github.com/mathrl/mathrl/gomlx_trainer/engine"
	"github.com/mathrl/mathrl/gomlx_trainer/engine/inprocess"
	"github.com/mathrl/mathrl/gomlx_trainer/qwen3"
	"github.com/mathrl/mathrl/gomlx_trainer/sampler"
	"github.com/mathrl/mathrl/gomlx_trainer/toolloop"
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
	smp := inprocess.New(sampler.New(testBackend(t), m))
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

func (s scriptedSession) Generate(_ context.Context, active, _ []int, _ func(toolloop.StepReport)) ([]toolloop.Turn, error) {
	turns := make([]toolloop.Turn, len(active))
	for j := range turns {
		turns[j] = toolloop.Turn{IDs: s.answer, LogProbs: make([]float32, len(s.answer))}
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

// TestEvalBatchDefault: without sampling_batch_size, a run evaluates
// max(rollout_batch_size × n_samples_per_prompt, 16) sequences at once, and
// `mathrl eval` of its checkpoint defaults to the same batch and the run's
// seed; so an evaluation of more samples than one batch (10 problems × 4 =
// 40 in batches of 16) regroups nothing: sessions of 16, 16 and 8 at seeds
// 7, 8 and 9, as the run's own evaluations sampled them.
func TestEvalBatchDefault(t *testing.T) {
	for _, tc := range []struct {
		sampling, prompts, group, want int
	}{{0, 2, 4, 16}, {0, 4, 4, 16}, {0, 5, 5, 25}, {0, 8, 8, 64}, {3, 8, 8, 3}} {
		cfg := Default()
		cfg.SamplingBatchSize, cfg.RolloutBatchSize, cfg.NSamplesPerPrompt, cfg.Seed = tc.sampling, tc.prompts, tc.group, 7
		if got := evalBatch(cfg); got != tc.want {
			t.Errorf("sampling_batch_size %d, %d×%d samples: evaluation batch %d, want %d", tc.sampling, tc.prompts, tc.group, got, tc.want)
		}
		req, err := EvalDefaults(writeRunState(t, cfg))
		if err != nil {
			t.Fatal(err)
		}
		if req.BatchSize != tc.want || req.Seed != 7 {
			t.Errorf("sampling_batch_size %d, %d×%d samples: mathrl eval defaults to batch %d at seed %d, want %d at 7",
				tc.sampling, tc.prompts, tc.group, req.BatchSize, req.Seed, tc.want)
		}
	}
	cfg := Default()
	cfg.RolloutBatchSize, cfg.NSamplesPerPrompt, cfg.Seed = 2, 4, 7
	req, err := EvalDefaults(writeRunState(t, cfg))
	if err != nil {
		t.Fatal(err)
	}
	cfg.Tokenizer, cfg.UseTools = "bytes", false
	proto, _, err := newProtocol(cfg, 1024)
	if err != nil {
		t.Fatal(err)
	}
	var problems []Problem
	for i := range 10 {
		problems = append(problems, Problem{ID: fmt.Sprint(i), Text: "What is 2+3?", Answer: "5"})
	}
	eng := &sizedEngine{scriptedEngine: scriptedEngine{answer: append(proto.Tok.Encode(`\boxed{5}`), proto.Tok.Special().IMEnd)}}
	opt := EvalOptions{Problems: problems, K: 4, Budget: 20, Temperature: 1, TopP: 1, Scorer: "math", Seed: req.Seed, BatchSize: req.BatchSize}
	if _, err := Evaluate(context.Background(), eng, proto, nil, opt); err != nil {
		t.Fatal(err)
	}
	var seeds []uint64
	for _, o := range eng.starts {
		seeds = append(seeds, o.Seed)
	}
	if !slices.Equal(eng.sizes, []int{16, 16, 8}) || !slices.Equal(seeds, []uint64{7, 8, 9}) {
		t.Errorf("sessions of %v sequences at seeds %v, want 16, 16 and 8 at 7, 8 and 9", eng.sizes, seeds)
	}
}

// sizedEngine is a scriptedEngine that records each session's size too.
type sizedEngine struct {
	scriptedEngine
	sizes []int
}

func (e *sizedEngine) Start(ctx context.Context, prompts [][]int, opts engine.Options) (engine.Session, error) {
	e.sizes = append(e.sizes, len(prompts))
	return e.scriptedEngine.Start(ctx, prompts, opts)
}

// writeRunState writes a checkpoint folder holding only the
// trainer_state.json of a run of cfg, which is all EvalDefaults reads.
func writeRunState(t *testing.T, cfg Config) string {
	t.Helper()
	dir := t.TempDir()
	data, err := json.Marshal(TrainState{Version: CheckpointVersion, Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, stateFile), data, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestEvalRefusesATiedCheckpointForVLLM: an evaluated checkpoint goes to vLLM
// servers as it is when untied, and a tied one is refused, naming the
// command that writes an untied copy, with nothing written into its folder.
func TestEvalRefusesATiedCheckpointForVLLM(t *testing.T) {
	cfg, err := qwen3.NamedConfig("tiny")
	if err != nil {
		t.Fatal(err)
	}
	cfg.TieEmbeddings = true
	tied, untied := filepath.Join(t.TempDir(), "tied"), filepath.Join(t.TempDir(), "untied")
	if err := qwen3.WriteRandom(cfg, tied, "F32", 1); err != nil {
		t.Fatal(err)
	}
	if err := qwen3.WriteUntied(tied, untied); err != nil {
		t.Fatal(err)
	}
	if dir, err := refuseTied(tied); err == nil || !strings.Contains(err.Error(), "mathrl model untie") {
		t.Errorf("refuseTied(tied) = %q, %v; want an error naming mathrl model untie", dir, err)
	}
	if entries, _ := os.ReadDir(tied); len(entries) != 2 {
		t.Errorf("the tied checkpoint holds %d files after the refusal, want its 2", len(entries))
	}
	if dir, err := refuseTied(untied); err != nil || dir != untied {
		t.Errorf("refuseTied(untied) = %q, %v; want the folder itself", dir, err)
	}
}
