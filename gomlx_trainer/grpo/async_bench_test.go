package grpo

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mathrl/mathrl/gomlx_trainer/backend"
)

// BenchmarkAsyncRollouts measures one-step off-policy rollouts on the demo
// recipe (configs/demo.yaml, on its backend as `mathrl train` opens it): it
// runs the warm start once (MATHRL_BENCH_SFT_STEPS steps, default the
// recipe's), then from that checkpoint MATHRL_BENCH_ROLLOUTS rollouts
// (default 10) synchronously and the same with async_rollouts, back to back
// in this process. It reports each run's wall time per rollout (the mean
// time between the ends of two rollouts, leaving out those with an
// evaluation between them), their ratio async/sync, and both learning
// curves (eval avg@2 by rollout).
//
//	go test ./gomlx_trainer/grpo -run '^$' -bench AsyncRollouts -benchtime 1x -timeout 60m
func BenchmarkAsyncRollouts(b *testing.B) {
	cfg := demoRecipe(b)
	cfg.SFTSteps = benchInt(b, "MATHRL_BENCH_SFT_STEPS", cfg.SFTSteps)
	rollouts := benchInt(b, "MATHRL_BENCH_ROLLOUTS", 10)
	bk, plan, err := backend.New(backend.Options{Kind: cfg.Backend})
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("%s; warm start %d steps, then %d rollouts each way", plan.Line(), cfg.SFTSteps, rollouts)
	dir := b.TempDir()

	// --- the warm start, once: both runs resume from its checkpoint, in its
	// folder (resume keeps the save key), one after the other
	warm := cfg
	warm.Save, warm.NumRollout = filepath.Join(dir, "run"), 0
	if err := Train(context.Background(), warm, TrainOptions{Backend: bk}); err != nil {
		b.Fatal(err)
	}
	saved := filepath.Join(dir, "warm")
	if err := os.CopyFS(saved, os.DirFS(warm.Save)); err != nil {
		b.Fatal(err)
	}

	per := map[bool]time.Duration{}
	curves := map[bool]string{}
	for _, async := range []bool{false, true} {
		run := warm
		run.NumRollout, run.AsyncRollouts = rollouts, async
		if err := os.RemoveAll(run.Save); err != nil {
			b.Fatal(err)
		}
		if err := os.CopyFS(run.Save, os.DirFS(saved)); err != nil {
			b.Fatal(err)
		}
		var ends []time.Time
		opt := TrainOptions{Backend: bk, Resume: true, OnRollout: func(RolloutLog) { ends = append(ends, time.Now()) }}
		if err := Train(context.Background(), run, opt); err != nil {
			b.Fatal(err)
		}
		var sum time.Duration
		n := 0
		for r := 1; r < len(ends); r++ { // the interval that ends rollout r+1
			if run.EvalInterval > 0 && r%run.EvalInterval == 0 {
				continue // an evaluation ran before rollout r+1
			}
			sum += ends[r].Sub(ends[r-1])
			n++
		}
		if n == 0 {
			b.Fatalf("%d rollouts: no interval without an evaluation", rollouts)
		}
		per[async] = sum / time.Duration(n)
		evals, err := RunFolder(run.Save).ReadEvals()
		if err != nil {
			b.Fatal(err)
		}
		var points []string
		for _, e := range evals {
			points = append(points, fmt.Sprintf("%d:%.3f", e.Rollout, e.AvgAtK))
		}
		curves[async] = strings.Join(points, " ")
	}
	ratio := per[true].Seconds() / per[false].Seconds()
	b.Logf("wall time per rollout: sync %.2fs, async %.2fs, async/sync %.2fx", per[false].Seconds(), per[true].Seconds(), ratio)
	b.Logf("eval avg@2 by rollout: sync %s", curves[false])
	b.Logf("eval avg@2 by rollout: async %s", curves[true])
	b.ReportMetric(per[false].Seconds(), "s/rollout-sync")
	b.ReportMetric(per[true].Seconds(), "s/rollout-async")
	b.ReportMetric(ratio, "async/sync")
}

// benchInt is the environment variable name as a count, or def when unset.
func benchInt(b *testing.B, name string, def int) int {
	s := os.Getenv(name)
	if s == "" {
		return def
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 {
		b.Fatalf("%s=%q: want a count", name, s)
	}
	return n
}
