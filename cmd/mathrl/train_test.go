package main

import (
	"bytes"
	"context"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/mathrl/mathrl/configs"
	"github.com/mathrl/mathrl/gomlx_trainer/grpo"
	"github.com/mathrl/mathrl/gomlx_trainer/layout"
)

func TestNewTrainCmd(t *testing.T) {
	demo, err := grpo.LoadRecipe("demo")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		args  []string
		check func(t *testing.T, o *trainOptions)
		err   string
	}{
		{"no arguments runs the demo", nil, func(t *testing.T, o *trainOptions) {
			if !reflect.DeepEqual(o.Config, demo) || o.Resume {
				t.Errorf("config %+v, want the demo recipe", o.Config)
			}
		}, ""},
		{"flags override the recipe", []string{"--config", "math-grpo-qwen3-8b", "--tiny-model", "tiny", "--num-rollout", "1", "--lr", "2e-6", "--use-tools"}, func(t *testing.T, o *trainOptions) {
			c := o.Config
			if c.TinyModel != "tiny" || c.NumRollout != 1 || c.LR != 2e-6 || !c.UseTools || c.RMType != "math" {
				t.Errorf("config %+v", c)
			}
		}, ""},
		{"a tiny stand-in cuts the recipe, but not the flags set", []string{"--config", "math-grpo-qwen3-8b", "--tiny-model", "tiny", "--num-rollout", "1", "--eval-max-response-len", "100"}, func(t *testing.T, o *trainOptions) {
			c := o.Config
			if c.NumRollout != 1 || c.EvalMaxResponseLen != 100 || c.RolloutMaxResponseLen != 64 || c.RolloutBatchSize != 4 {
				t.Errorf("config %+v", c)
			}
			out := o.Out.(*bytes.Buffer).String()
			if !strings.Contains(out, "mathrl: smoke: rollout_max_response_len 4096 -> 64\n") || strings.Contains(out, "num_rollout") || strings.Contains(out, "eval_max_response_len") {
				t.Errorf("printed\n%s", out)
			}
		}, ""},
		{"a recipe's checkpoint cleared keeps its sizes", []string{"--config", "math-grpo-qwen3-8b", "--tiny-model", "tiny", "--hf-checkpoint", ""}, func(t *testing.T, o *trainOptions) {
			if c := o.Config; c.RolloutMaxResponseLen != 4096 || c.RolloutBatchSize != 16 || o.Out.(*bytes.Buffer).Len() != 0 {
				t.Errorf("config %+v, printed %q", c, o.Out)
			}
		}, ""},
		{"distillation flags", []string{"--tiny-model", "tiny", "--teacher", "/models/teacher", "--teacher-engine", "sglang", "--teacher-urls", "http://a,http://b",
			"--distill-coef", "0.5", "--distill-outcome-coef", "1"}, func(t *testing.T, o *trainOptions) {
			c := o.Config
			if c.Teacher != "/models/teacher" || c.TeacherEngine != "sglang" || !reflect.DeepEqual(c.TeacherURLs, []string{"http://a", "http://b"}) ||
				c.DistillCoef != 0.5 || c.DistillOutcomeCoef != 1 {
				t.Errorf("config %+v", c)
			}
		}, ""},
		{"a flag left unset keeps the recipe's value", []string{"--config", "retool-grpo-qwen3-4b", "--resume"}, func(t *testing.T, o *trainOptions) {
			if o.Config.GlobalBatchSize != 256 || o.Config.WeightDecay != 0.1 || !o.Resume {
				t.Errorf("config %+v resume %v", o.Config, o.Resume)
			}
		}, ""},
		{"a flag set to its default still overrides the recipe", []string{"--adam-beta2", "0.999", "--arith-max-digits", "4", "--use-tools=false", "--save", "/tmp/x"}, func(t *testing.T, o *trainOptions) {
			want := demo
			want.AdamBeta2, want.ArithMaxDigits, want.UseTools, want.Save = grpo.Default().AdamBeta2, grpo.Default().ArithMaxDigits, false, "/tmp/x"
			if demo.AdamBeta2 == want.AdamBeta2 || demo.ArithMaxDigits == want.ArithMaxDigits || !demo.UseTools || want.ArithMaxDigits != 4 {
				t.Fatalf("the demo recipe no longer sets adam_beta2, arith_max_digits and use_tools away from their defaults: %+v", demo)
			}
			if !reflect.DeepEqual(o.Config, want) {
				t.Errorf("config %+v\nwant %+v", o.Config, want)
			}
		}, ""},
		{"--devices sets num_devices", []string{"--backend", "xla-cpu", "--devices", "2", "--sharding", "data"}, func(t *testing.T, o *trainOptions) {
			if o.Config.NumDevices != 2 || o.Config.Sharding != layout.Data {
				t.Errorf("num_devices %d, sharding %q", o.Config.NumDevices, o.Config.Sharding)
			}
		}, ""},
		{"devices on the Go backend", []string{"--devices", "2", "--sharding", "data"}, nil, "num_devices: 2 on backend cpu"},
		{"bad value", []string{"--eps-clip", "2"}, nil, "eps_clip"},
		{"ill-typed flag", []string{"--rollout-batch-size", "many"}, nil, "rollout-batch-size"},
		{"unknown recipe", []string{"--config", "nope"}, nil, "no recipe"},
		{"argument", []string{"extra"}, nil, "unknown command"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got *trainOptions
			cmd := newTrainCmd(func(_ context.Context, o *trainOptions) error { got = o; return nil })
			cmd.SetArgs(tc.args)
			cmd.SetOut(&bytes.Buffer{})
			cmd.SetErr(&bytes.Buffer{})
			err := cmd.Execute()
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("train %q: err = %v, want %q", tc.args, err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("train %q: %v", tc.args, err)
			}
			tc.check(t, got)
		})
	}
}

// TestTrainHelp checks that `mathrl train --help` lists every recipe key as a
// flag, in declaration order, with its description.
func TestTrainHelp(t *testing.T) {
	cmd := newTrainCmd(func(context.Context, *trainOptions) error { t.Fatal("--help ran the command"); return nil })
	var out bytes.Buffer
	cmd.SetArgs([]string{"--help"})
	cmd.SetOut(&out)
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	_, help, _ := strings.Cut(out.String(), "\nFlags:\n")
	last := 0
	for _, k := range grpo.Knobs() {
		i := strings.Index(help[last:], "  --"+knobFlag(k)+" ")
		if i < 0 {
			t.Errorf("help: flag --%s missing or out of order", knobFlag(k))
			continue
		}
		last += i
		line, _, _ := strings.Cut(help[last:], "\n")
		if !strings.Contains(line, k.Help) {
			t.Errorf("help line %q lacks the description %q", line, k.Help)
		}
	}
	if !strings.Contains(help, "nucleus sampling threshold (1: off) (default 1)\n") {
		t.Errorf("help does not show --rollout-top-p's default:\n%s", help)
	}
}

// TestRunFoldersGitIgnores checks that `mathrl train` (the main job), every
// other recipe, and a recipe that leaves save out write their run where git
// ignores it and no committed file lives, so a newcomer's run changes nothing
// that `git status` shows.
func TestRunFoldersGitIgnores(t *testing.T) {
	root := filepath.Join("..", "..")
	if err := exec.Command("git", "-C", root, "rev-parse", "--show-toplevel").Run(); err != nil {
		t.Skip("not a git checkout:", err)
	}
	folders := map[string]string{"a recipe without save": grpo.Default().Save}
	for _, name := range configs.Names() {
		cfg, err := grpo.LoadRecipe(name)
		if err != nil {
			t.Fatal(err)
		}
		folders[name] = cfg.Save
	}
	var got *trainOptions
	cmd := newTrainCmd(func(_ context.Context, o *trainOptions) error { got = o; return nil })
	cmd.SetArgs(nil)
	cmd.SetOut(&bytes.Buffer{})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	folders["mathrl train"] = got.Config.Save
	for what, save := range folders {
		// A file the run writes, such as train.jsonl, must be ignored.
		if err := exec.Command("git", "-C", root, "check-ignore", "-q", "--no-index", filepath.Join(save, "train.jsonl")).Run(); err != nil {
			t.Errorf("%s writes into %s, which git does not ignore (git check-ignore: %v)", what, save, err)
		}
		out, err := exec.Command("git", "-C", root, "ls-files", "--", save).Output()
		if err != nil {
			t.Fatal(err)
		}
		if len(out) > 0 {
			t.Errorf("%s writes into %s, which holds committed files:\n%s", what, save, out)
		}
	}
}
