package grpo

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mathrl/mathrl/data"
	"github.com/mathrl/mathrl/gomlx_trainer/precision"
	"github.com/mathrl/mathrl/gomlx_trainer/qwen3"
)

// TestRecipeToLossAndOptimizer checks that every loss and optimizer knob of a
// recipe lands in its own field (distinct values, so a swap shows).
func TestRecipeToLossAndOptimizer(t *testing.T) {
	cfg := Default()
	cfg.EpsClip, cfg.EpsClipHigh = 0.1, 0.3
	cfg.UseKLLoss, cfg.KLLossCoef, cfg.KLLossType, cfg.EntropyCoef = true, 0.05, "k1", 0.002
	cfg.AdamBeta1, cfg.AdamBeta2, cfg.AdamEps, cfg.WeightDecay, cfg.ClipGrad = 0.8, 0.95, 1e-7, 0.01, 2
	if got, want := lossConfig(cfg), (LossConfig{EpsLow: 0.1, EpsHigh: 0.3, KLCoef: 0.05, KLType: "k1", EntropyCoef: 0.002}); got != want {
		t.Errorf("lossConfig = %+v, want %+v", got, want)
	}
	cfg.UseKLLoss = false
	if got := lossConfig(cfg); got.KLCoef != 0 {
		t.Errorf("use_kl_loss false: KL coefficient %v, want 0", got.KLCoef)
	}
	cfg.RecomputeLayers, cfg.LogProbChunk = true, 512
	if got, want := modelOptions(cfg), (qwen3.ModelOptions{Remat: true, LogProbChunk: 512}); got != want {
		t.Errorf("modelOptions = %+v, want %+v", got, want)
	}
	if got, want := adamConfig(cfg), (AdamWConfig{Beta1: 0.8, Beta2: 0.95, Eps: 1e-7, WeightDecay: 0.01, ClipNorm: 2, Precision: precision.Optimizer{Master: precision.MasterFloat32, Seed: uint32(cfg.Seed)}}); got != want {
		t.Errorf("adamConfig = %+v, want %+v", got, want)
	}
}

// TestSmokeSampleStandsIn loads the retool recipe's training set where it has
// not been pulled: a smoke run takes the set's built-in sample and says so in
// one line; a full run fails with one error that says how to get the set; a
// pulled set is used as it is.
func TestSmokeSampleStandsIn(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(data.DataDirEnv, dir)
	cfg := recipe(t, "retool-grpo-qwen3-4b")
	cfg.EvalPromptData = ""
	load := func(cfg Config) (*trainer, string, error) {
		var log bytes.Buffer
		tr := &trainer{cfg: cfg, log: newProgress(&log)}
		err := tr.loadData()
		return tr, log.String(), err
	}

	smoke := cfg
	smoke.TinyModel = "tiny"
	tr, log, err := load(smoke)
	sample, _ := data.Sample(data.DAPOSet)
	if err != nil || len(tr.train) != len(sample) || tr.train[0].Text != sample[0].Problem || *sample[0].Answer != tr.train[0].Answer {
		t.Fatalf("smoke run without the set: %d problems, %v", len(tr.train), err)
	}
	if want := "mathrl: smoke run: dapo_math_17k is not in " + dir + ", so it trains on the set's built-in 16-problem sample"; strings.Count(log, "\n") != 1 || !strings.HasPrefix(log, want) {
		t.Errorf("smoke run without the set printed %q, want one line starting %q", log, want)
	}

	if _, log, err := load(cfg); err == nil || !strings.Contains(err.Error(), "run `mathrl data pull --set dapo_math_17k` to get it") || log != "" {
		t.Errorf("full run without the set: error %v, printed %q", err, log)
	}

	row := `{"id": "7", "problem": "p", "answer": "1", "solution": null, "level": null, "subject": null, "source": "dapo"}` + "\n"
	if err := os.WriteFile(filepath.Join(dir, "dapo_math_17k.jsonl"), []byte(row), 0o644); err != nil {
		t.Fatal(err)
	}
	if tr, log, err := load(smoke); err != nil || len(tr.train) != 1 || tr.train[0].ID != "7" || log != "" {
		t.Errorf("smoke run with the set: %+v, printed %q, %v", tr.train, log, err)
	}
}

// TestDifferingKey changes each knob of Default() in turn: resume accepts
// the change of a knob that says how long the run goes, how often it
// evaluates, saves and writes records, how many checkpoints it keeps,
// where it computes or where and when it samples, and names any other.
func TestDifferingKey(t *testing.T) {
	free := map[string]bool{"num_rollout": true, "eval_interval": true, "save_interval": true, "keep_ckpts": true,
		"backend": true, "num_devices": true, "sharding": true, "save_rollouts_every": true, "save_rollouts_groups": true,
		"rollout_engine": true, "rollout_engine_urls": true, "weights_dir": true, "async_rollouts": true,
		"rollout_engine_api_key": true, "teacher_urls": true}
	if len(resumeFree) != len(free) {
		t.Errorf("resumeFree %v, want the keys of %v", resumeFree, free)
	}
	for _, k := range Knobs() {
		c := Default()
		switch p := k.Ptr(&c).(type) {
		case *string:
			*p += "x"
		case *int:
			*p++
		case *int64:
			*p++
		case *float64:
			*p += 0.5
		case *bool:
			*p = !*p
		case *[]string:
			*p = append(*p, "x")
		default:
			t.Fatalf("knob %s: type %T", k.Key, p)
		}
		want := k.Key
		if free[k.Key] {
			want = ""
		}
		if got := differingKey(Default(), c); got != want {
			t.Errorf("%s changed: differingKey %q, want %q", k.Key, got, want)
		}
	}
}
