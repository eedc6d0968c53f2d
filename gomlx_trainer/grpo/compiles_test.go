package grpo

import (
	"context"
	"fmt"
	"testing"

	"github.com/mathrl/mathrl/gomlx_trainer/backend"
	"github.com/mathrl/mathrl/gomlx_trainer/layout"
	"github.com/mathrl/mathrl/gomlx_trainer/qwen3"
	"github.com/mathrl/mathrl/gomlx_trainer/sampler"
	"github.com/mathrl/mathrl/gomlx_trainer/toolloop"
)

// TestStepCompiles trains three rollouts of one step each whose shapes are
// all the same: prompts of one length, responses too short to grow the
// sampler's cache past its first length or a sequence past its padded
// length, whatever they sample (the test checks this from the sequences).
// The first step must show graphs compiled, and time spent on them, in both
// phases; the later steps, which run on the same graphs, none. With
// async_rollouts the next rollout is sampled while a step compiles: each
// must still count only its own graphs.
func TestStepCompiles(t *testing.T) {
	if testing.Short() {
		t.Skip("trains a tiny model")
	}
	for _, async := range []bool{false, true} {
		t.Run(fmt.Sprintf("async_rollouts=%v", async), func(t *testing.T) {
			cfg := smokeConfig(t)
			cfg.SFTSteps, cfg.UseTools, cfg.EvalPromptData, cfg.SaveInterval, cfg.AsyncRollouts = 0, false, "", 0, async
			cfg.NumRollout, cfg.RolloutBatchSize, cfg.NSamplesPerPrompt, cfg.GlobalBatchSize = 3, 2, 2, 4
			// a system prompt takes the prompts from 31 tokens (one short of a
			// padded length) to 50: room for 14 more in the padded length and
			// the cache length they start with (64)
			cfg.SystemPrompt, cfg.RolloutMaxResponseLen = "Be brief.", 12
			checkStepCompiles(t, cfg)
		})
	}
}

// checkStepCompiles trains cfg and checks its train.jsonl as
// TestStepCompiles says.
func checkStepCompiles(t *testing.T, cfg Config) {
	var seqs []Sequence
	var log testLog
	err := Train(context.Background(), cfg, TrainOptions{Backend: testBackend(t), Tools: arithTools{}, Progress: &log,
		OnRollout: func(r RolloutLog) { seqs = append(seqs, r.Sequences...) }})
	if err != nil {
		t.Fatalf("%v\n%s", err, log)
	}
	sameShapes(t, seqs, cfg.RolloutMaxResponseLen)
	steps, err := RunFolder(cfg.Save).ReadSteps(1 << 30)
	if err != nil {
		t.Fatal(err)
	}
	if len(steps) != cfg.NumRollout {
		t.Fatalf("%d steps, want %d", len(steps), cfg.NumRollout)
	}
	for i, m := range steps {
		for _, ph := range []struct {
			name            string
			seconds, graphs *float64
		}{
			{"rollout", m.RolloutCompileSeconds, m.RolloutCompiles},
			{"train", m.TrainCompileSeconds, m.TrainCompiles},
		} {
			switch {
			case ph.seconds == nil || ph.graphs == nil:
				t.Errorf("step %d: %s compile fields missing", m.Step, ph.name)
			case i == 0 && (*ph.graphs < 1 || *ph.seconds <= 0):
				t.Errorf("step %d: %g %s graphs compiled in %g s, want some", m.Step, *ph.graphs, ph.name, *ph.seconds)
			case i > 0 && (*ph.graphs != 0 || *ph.seconds != 0):
				t.Errorf("step %d, shapes of step 1: %g %s graphs compiled in %g s, want none", m.Step, *ph.graphs, ph.name, *ph.seconds)
			}
		}
		t.Logf("step %d: rollout %.3fs (compiling %v graphs: %.3fs), train %.3fs (compiling %v: %.3fs)", m.Step,
			m.RolloutSeconds, deref(m.RolloutCompiles), deref(m.RolloutCompileSeconds), m.TrainSeconds, deref(m.TrainCompiles), deref(m.TrainCompileSeconds))
	}
}

// sameShapes fails t unless seqs (responses of at most budget tokens) have
// prompts of one length, and every length from a one-token response to a
// full one takes the same sampler cache length and the same padded length.
func sameShapes(t *testing.T, seqs []Sequence, budget int) {
	t.Helper()
	p := len(seqs[0].Prompt)
	for _, s := range seqs {
		if len(s.Prompt) != p {
			t.Fatalf("prompts of %d and %d tokens: the test needs one length", p, len(s.Prompt))
		}
	}
	if a, b := sampler.CacheBucket(p, 1<<20), sampler.CacheBucket(p+budget, 1<<20); a != b {
		t.Fatalf("prompts of %d tokens: cache length %d, %d after %d tokens; the test needs one", p, a, b, budget)
	}
	if a, b := layout.PadLength(p+1), layout.PadLength(p+budget); a != b {
		t.Fatalf("prompts of %d tokens: padded to %d or %d; the test needs one length", p, a, b)
	}
}

func deref(x *float64) any {
	if x == nil {
		return "?"
	}
	return *x
}

// TestRolloutCompilesShared checks a train.jsonl line's rollout compile
// fields: the rollout's graphs and seconds shared out between its steps as
// its seconds are, and absent (unknown) when servers sample.
func TestRolloutCompilesShared(t *testing.T) {
	mc, err := qwen3.NamedConfig("tiny")
	if err != nil {
		t.Fatal(err)
	}
	b := batch{draw: draw{sampleSeconds: 8, compiled: backend.CompileStats{Graphs: 3, Seconds: 1.5}}}
	for _, local := range []bool{true, false} {
		tr := &trainer{cfg: Default(), learner: &Learner{Model: &qwen3.Model{Config: mc}}, localRollouts: local}
		m := tr.stepMetrics(b, mismatchStats{}, nil, 4, 2, 0, StepStats{}, 0, 1e-6)
		switch {
		case m.RolloutSeconds != 4:
			t.Errorf("local %v: rollout_seconds %g, want 8 s over 2 steps", local, m.RolloutSeconds)
		case !local && (m.RolloutCompileSeconds != nil || m.RolloutCompiles != nil):
			t.Errorf("rollouts on servers: rollout compiles %v in %v s, want unknown", deref(m.RolloutCompiles), deref(m.RolloutCompileSeconds))
		case local && (m.RolloutCompileSeconds == nil || *m.RolloutCompileSeconds != 0.75 || m.RolloutCompiles == nil || *m.RolloutCompiles != 1.5):
			t.Errorf("in process: rollout compiles %v in %v s, want 3 graphs in 1.5 s over 2 steps", deref(m.RolloutCompiles), deref(m.RolloutCompileSeconds))
		}
	}
}

// TestDrawPlusAddsCompiles joins two draws, as dynamic sampling joins a
// rollout's draws: the samples follow one another, and the times, tokens and
// graphs compiled are the two draws' together.
func TestDrawPlusAddsCompiles(t *testing.T) {
	a := draw{problems: []Problem{{}}, prompts: [][]int{{1}, {1}}, samples: make([]toolloop.Sample, 2),
		gen: toolloop.Stats{GenerateSeconds: 1, ToolSeconds: 0.5, SampledTokens: 10}, sampleSeconds: 2,
		compiled: backend.CompileStats{Graphs: 3, Seconds: 1.5}}
	b := draw{problems: []Problem{{}}, prompts: [][]int{{2}, {2}}, samples: make([]toolloop.Sample, 2),
		gen: toolloop.Stats{GenerateSeconds: 0.25, ToolSeconds: 0.125, SampledTokens: 4}, sampleSeconds: 0.5,
		compiled: backend.CompileStats{Graphs: 1, Seconds: 0.25}}
	d := a.plus(b)
	if len(d.problems) != 2 || len(d.prompts) != 4 || d.prompts[2][0] != 2 || len(d.samples) != 4 {
		t.Errorf("joined draw: %d problems, prompts %v, %d samples; want 2, a's then b's, 4", len(d.problems), d.prompts, len(d.samples))
	}
	want := toolloop.Stats{GenerateSeconds: 1.25, ToolSeconds: 0.625, SampledTokens: 14}
	if d.gen != want || d.sampleSeconds != 2.5 || d.compiled != (backend.CompileStats{Graphs: 4, Seconds: 1.75}) {
		t.Errorf("joined draw: %+v, %g s, compiled %+v; want %+v, 2.5 s, 4 graphs in 1.75 s", d.gen, d.sampleSeconds, d.compiled, want)
	}
}
