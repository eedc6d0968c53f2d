package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/mathrl/mathrl/gomlx_trainer/grpo"
)

// TestNewEvalCmd checks what `mathrl eval` parses, and that bad flags fail
// before any work (the run function is never reached).
func TestNewEvalCmd(t *testing.T) {
	base := []string{"--model", "m", "--data", "aime24"}
	for _, tc := range []struct {
		name  string
		args  []string
		check func(t *testing.T, o *evalOptions)
		err   string
	}{
		{"defaults are the recipe defaults", base, func(t *testing.T, o *evalOptions) {
			want := grpo.DefaultEvalRequest()
			want.Model, want.Data = "m", "aime24"
			d := grpo.Default()
			got := o.Request
			if len(got.EngineURLs) != 0 {
				t.Errorf("rollout engine URLs %q by default", got.EngineURLs)
			}
			got.EngineURLs = nil
			if !reflect.DeepEqual(got, want) || want.Engine != d.RolloutEngine || want.K != d.NSamplesPerEvalPrompt || want.Budget != d.EvalMaxResponseLen || want.Scorer != d.RMType {
				t.Errorf("request %+v, want %+v", o.Request, want)
			}
		}, ""},
		{"flags", append(base, "--samples", "16", "--max-tokens", "16384", "--scorer", "dapo", "--tools"), func(t *testing.T, o *evalOptions) {
			r := o.Request
			if r.K != 16 || r.Budget != 16384 || r.Scorer != "dapo" || !r.UseTools || r.Out != "eval-samples.jsonl" {
				t.Errorf("request %+v", r)
			}
		}, ""},
		{"bf16 is a dtype", append(base, "--dtype", "bf16", "--scorer", "retool"), func(t *testing.T, o *evalOptions) {
			if o.Request.DType != "bf16" || o.Request.Scorer != "retool" {
				t.Errorf("request %+v", o.Request)
			}
		}, ""},
		{"servers", append(base, "--rollout-engine", "sglang", "--rollout-engine-urls", "http://a:1,http://b:2", "--rollout-engine-batch", "64"), func(t *testing.T, o *evalOptions) {
			r := o.Request
			if r.Engine != "sglang" || !slices.Equal(r.EngineURLs, []string{"http://a:1", "http://b:2"}) || r.EngineBatch != 64 {
				t.Errorf("request %+v", r)
			}
		}, ""},
		{"servers need URLs", append(base, "--rollout-engine", "openai"), nil, "--rollout-engine-urls: empty"},
		{"a URL without its scheme", append(base, "--rollout-engine", "sglang", "--rollout-engine-urls", "a:1"), nil, `--rollout-engine-urls: "a:1", want http://`},
		{"batches are SGLang's", append(base, "--rollout-engine", "openai", "--rollout-engine-urls", "http://a:1", "--rollout-engine-batch", "2"), nil, "--rollout-engine-batch: 2, but only"},
		{"the in-process engine takes no URL", append(base, "--rollout-engine-urls", "http://a:1"), nil, "--rollout-engine-urls: set, but rollout_engine is builtin"},
		{"unknown engine", append(base, "--rollout-engine", "vllm"), nil, `--rollout-engine: "vllm" is not builtin, openai or sglang`},
		{"unknown scorer", append(base, "--scorer", "maths"), nil, `unknown scorer "maths"`},
		{"unknown dtype", append(base, "--dtype", "bf17"), nil, `dtype "bf17"`},
		{"no samples", append(base, "--samples", "0"), nil, "0 samples"},
		{"no model", []string{"--data", "aime24"}, nil, `"model" not set`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got *evalOptions
			cmd := newEvalCmd(func(_ context.Context, o *evalOptions) error { got = o; return nil })
			cmd.SetArgs(tc.args)
			cmd.SetOut(&bytes.Buffer{})
			cmd.SetErr(&bytes.Buffer{})
			err := cmd.Execute()
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) || got != nil {
					t.Fatalf("eval %q: err = %v (ran: %v), want %q before any work", tc.args, err, got != nil, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("eval %q: %v", tc.args, err)
			}
			tc.check(t, got)
		})
	}
}

// TestEvalDefaultsOfCheckpoint checks that on a run's checkpoint --seed and
// --batch default to the run's seed and evaluation batch (its
// sampling_batch_size), that flags given win, and that a damaged
// trainer_state.json is an error naming it.
func TestEvalDefaultsOfCheckpoint(t *testing.T) {
	cfg := grpo.Default()
	cfg.Seed, cfg.SamplingBatchSize = 7, 3
	ckpt := t.TempDir()
	data, err := json.Marshal(grpo.TrainState{Version: grpo.CheckpointVersion, Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ckpt, "trainer_state.json"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	damaged := t.TempDir()
	if err := os.WriteFile(filepath.Join(damaged, "trainer_state.json"), data[:len(data)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	d := grpo.DefaultEvalRequest()
	for _, tc := range []struct {
		name        string
		args        []string
		seed, batch int
		err         string
	}{
		{"a run's checkpoint", []string{"--model", ckpt}, 7, 3, ""},
		{"flags win", []string{"--model", ckpt, "--seed", "1", "--batch", "64"}, 1, 64, ""},
		{"a model folder", []string{"--model", t.TempDir()}, int(d.Seed), d.BatchSize, ""},
		{"a damaged state", []string{"--model", damaged}, 0, 0, "trainer_state.json"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got *evalOptions
			cmd := newEvalCmd(func(_ context.Context, o *evalOptions) error { got = o; return nil })
			_, _, err := execute(cmd, "", append(tc.args, "--data", "arith")...)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) || got != nil {
					t.Fatalf("err = %v (ran: %v), want %q before any work", err, got != nil, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if r := got.Request; r.Seed != uint64(tc.seed) || r.BatchSize != tc.batch {
				t.Errorf("seed %d, batch %d; want %d, %d", r.Seed, r.BatchSize, tc.seed, tc.batch)
			}
		})
	}
}
