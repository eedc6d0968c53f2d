package grpo

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mathrl/mathrl/analysis/metrics"
)

// TestDemoLearnsToPrint runs the CPU demo (configs/demo.yaml: its base policy,
// tasks, reward, learning rate and the real sandbox) at a smaller size, 12
// rollouts of 4 prompts, and checks the direction of what the full demo shows:
// from the first evaluation to the last, more of the tool calls print and more
// answers are right.
func TestDemoLearnsToPrint(t *testing.T) {
	if testing.Short() {
		t.Skip("trains for a minute or two")
	}
	cfg := demoRecipe(t)
	cfg.Save = filepath.Join(t.TempDir(), "run")
	cfg.NumRollout, cfg.RolloutBatchSize, cfg.GlobalBatchSize = 12, 4, 32
	cfg.EvalInterval, cfg.SaveInterval = 12, 12
	var log testLog
	if err := Train(context.Background(), cfg, TrainOptions{Backend: testBackend(t), Progress: &log}); err != nil {
		t.Fatalf("%v\n%s", err, log)
	}
	first, last := demoEval(t, cfg, 0), demoEval(t, cfg, cfg.NumRollout)
	t.Logf("print share %.3f -> %.3f, accuracy %.3f -> %.3f", first.printShare, last.printShare, first.accuracy, last.accuracy)
	if last.printShare < first.printShare+0.1 {
		t.Errorf("the share of tool calls that print went %.3f -> %.3f, want a rise of 0.1 or more", first.printShare, last.printShare)
	}
	if last.accuracy <= first.accuracy {
		t.Errorf("evaluation accuracy went %.3f -> %.3f, want a rise", first.accuracy, last.accuracy)
	}
}

type demoPoint struct{ printShare, accuracy float64 }

// demoEval reads the evaluation samples the run wrote at step: the share of
// responses whose tool call prints, and the share scored right.
func demoEval(t *testing.T, cfg Config, step int) demoPoint {
	t.Helper()
	path := filepath.Join(RunFolder(cfg.Save).SamplesDir(), fmt.Sprintf("step-%06d.jsonl", step))
	samples, err := metrics.ReadSamplesFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(samples) != cfg.EvalMaxPrompts*cfg.NSamplesPerEvalPrompt {
		t.Fatalf("%s: %d samples, want %d", path, len(samples), cfg.EvalMaxPrompts*cfg.NSamplesPerEvalPrompt)
	}
	var p demoPoint
	for _, s := range samples {
		if strings.Contains(s.Response, `"code": "print(`) {
			p.printShare++
		}
		if s.Correct() {
			p.accuracy++
		}
	}
	n := float64(len(samples))
	return demoPoint{p.printShare / n, p.accuracy / n}
}
