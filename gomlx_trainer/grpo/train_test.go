package grpo

import (
	"context"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/mathrl/mathrl/gomlx_trainer/rollout"
)

// arithTools answers the warm-start traces' calls, print(A*B) and print(A+B),
// exactly (with math/big) and fails on anything else, as Python would.
type arithTools struct{}

var printCall = regexp.MustCompile(`^print\((\d+)([*+])(\d+)\)$`)

func (arithTools) Run(_ context.Context, code string) (rollout.ToolOutput, error) {
	m := printCall.FindStringSubmatch(code)
	if m == nil {
		return rollout.ToolOutput{Text: "Traceback (most recent call last):\nSyntaxError: invalid syntax\n[exit status 1]", Failed: true}, nil
	}
	a, _ := new(big.Int).SetString(m[1], 10)
	b, _ := new(big.Int).SetString(m[3], 10)
	if m[2] == "*" {
		a.Mul(a, b)
	} else {
		a.Add(a, b)
	}
	return rollout.ToolOutput{Text: a.String() + "\n"}, nil
}

// smokeConfig is the demo recipe cut down to a few seconds.
func smokeConfig(t *testing.T) Config {
	t.Helper()
	cfg, err := LoadRecipe(filepath.Join("..", "..", "configs", "demo.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	cfg.TinyModel = "tiny"
	cfg.Save = filepath.Join(t.TempDir(), "run")
	cfg.NumRollout, cfg.RolloutBatchSize, cfg.NSamplesPerPrompt = 2, 2, 4
	cfg.GlobalBatchSize, cfg.MicroBatchSize = 4, 2
	cfg.RolloutMaxResponseLen, cfg.EvalMaxResponseLen = 48, 48
	cfg.SFTSteps, cfg.SFTBatchSize = 2, 4
	cfg.EvalMaxPrompts, cfg.EvalInterval, cfg.SaveInterval = 4, 1, 1
	return cfg
}

func TestTrainSmoke(t *testing.T) {
	if testing.Short() {
		t.Skip("trains a tiny model")
	}
	cfg := smokeConfig(t)
	var log testLog
	err := Train(context.Background(), cfg, TrainOptions{Backend: testBackend(t), Tools: arithTools{}, Progress: &log})
	if err != nil {
		t.Fatalf("%v\n%s", err, log)
	}
	run := RunFolder(cfg.Save)
	steps, err := run.ReadSteps(1 << 30)
	if err != nil {
		t.Fatal(err)
	}
	if len(steps) != cfg.NumRollout*cfg.StepsPerRollout() {
		t.Errorf("%d metric lines, want %d", len(steps), cfg.NumRollout*cfg.StepsPerRollout())
	}
	for _, f := range []string{"config.json", "provenance.json", "eval.jsonl", "samples/step-000000.jsonl", "figures/train.png"} {
		if _, err := os.Stat(filepath.Join(cfg.Save, f)); err != nil {
			t.Errorf("run folder: %v", err)
		}
	}
	if dir, _ := LatestCheckpoint(run.CkptDir()); filepath.Base(dir) != CheckpointName(len(steps)) {
		t.Errorf("latest checkpoint %q", dir)
	}
	t.Logf("%s", log)
}

type testLog struct{ b []byte }

func (l *testLog) Write(p []byte) (int, error) { l.b = append(l.b, p...); return len(p), nil }
func (l *testLog) String() string              { return string(l.b) }

var _ = fmt.Sprint

// TestSeedRecipesRunOnTinyModel loads both seed recipes, swaps in a random
// tiny model and small sizes (the rest of each recipe, loss, optimizer,
// scorer and tools, stays as it is) and runs one rollout with its optimizer
// steps: 4 for the retool recipe (samples / global batch as in the card), 1
// for the math recipe.
func TestSeedRecipesRunOnTinyModel(t *testing.T) {
	if testing.Short() {
		t.Skip("trains a tiny model")
	}
	problems := filepath.Join("testdata", "problems.jsonl")
	for _, tc := range []struct {
		recipe                string
		prompts, group, batch int
		wantSteps             int
	}{
		{"retool-grpo-qwen3-4b.yaml", 2, 16, 8, 4},
		{"math-grpo-qwen3-8b.yaml", 2, 8, 16, 1},
	} {
		t.Run(tc.recipe, func(t *testing.T) {
			cfg, err := LoadRecipe(filepath.Join("..", "..", "configs", tc.recipe))
			if err != nil {
				t.Fatal(err)
			}
			cfg.TinyModel, cfg.Backend, cfg.DType = "tiny", "cpu", "float32"
			cfg.PromptData, cfg.EvalPromptData, cfg.EvalMaxPrompts = problems, problems, 2
			cfg.NumRollout, cfg.RolloutBatchSize, cfg.NSamplesPerPrompt = 1, tc.prompts, tc.group
			cfg.GlobalBatchSize, cfg.MicroBatchSize = tc.batch, 4
			cfg.RolloutMaxResponseLen, cfg.EvalMaxResponseLen, cfg.NSamplesPerEvalPrompt = 24, 24, 2
			cfg.Save = filepath.Join(t.TempDir(), "run")
			var log testLog
			if err := Train(context.Background(), cfg, TrainOptions{Backend: testBackend(t), Tools: arithTools{}, Progress: &log}); err != nil {
				t.Fatalf("%v\n%s", err, log)
			}
			steps, err := RunFolder(cfg.Save).ReadSteps(1 << 30)
			if err != nil {
				t.Fatal(err)
			}
			if len(steps) != tc.wantSteps {
				t.Errorf("%d optimizer steps, want %d", len(steps), tc.wantSteps)
			}
			for _, s := range steps {
				if s.LR != cfg.LR || s.Samples != tc.prompts*tc.group {
					t.Errorf("step %+v", s)
				}
			}
		})
	}
}
