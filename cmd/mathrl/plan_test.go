package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gomlx/compute/dtypes"

	"github.com/mathrl/mathrl/gomlx_trainer/memplan"
	"github.com/mathrl/mathrl/gomlx_trainer/precision"
	"github.com/mathrl/mathrl/gomlx_trainer/qwen3"
)

func TestNewPlanCmd(t *testing.T) {
	for _, tc := range []struct {
		name  string
		args  []string
		check func(t *testing.T, o *planOptions)
		err   string
	}{
		{"the recipe's numbers", []string{"--config", "retool-grpo-qwen3-4b", "--tiny-model", "qwen3-4b"}, func(t *testing.T, o *planOptions) {
			want := memplan.Recipe{DType: dtypes.BFloat16, GlobalBatch: 256, MicroBatch: 1, PromptLen: 2048, ResponseLen: 8192,
				RolloutSamples: 1024, SamplingBatch: 32, EvalResponseLen: 16384, Tools: true, RecomputeLayers: true, FusedAttention: true,
				State: memplan.State{Precision: precision.Optimizer{Master: precision.MasterFloat32, Seed: 1}, OffloadTrain: true}}
			if o.Recipe != want || o.Config.TinyModel != "qwen3-4b" || o.Limit != 141<<30 || o.Rules != memplan.XLA {
				t.Errorf("options %+v limit %d rules %v\nwant recipe %+v", o.Recipe, o.Limit, o.Rules, want)
			}
		}, ""},
		{"flags override the recipe", []string{"--config", "math-grpo-qwen3-8b", "--micro-batch-size", "1", "--sampling-batch-size", "16",
			"--logprob-chunk", "512", "--recompute-layers", "--max-tokens-per-micro-batch", "10240", "--gpu-memory", "80GB", "--rules", "cpu"},
			func(t *testing.T, o *planOptions) {
				r := o.Recipe
				if r.MicroBatch != 1 || r.SamplingBatch != 16 || r.LogProbChunk != 512 || !r.RecomputeLayers || r.MaxTokens != 10240 ||
					o.Limit != 80e9 || o.Rules != memplan.CPU || r.GlobalBatch != 128 {
					t.Errorf("options %+v limit %d rules %v", r, o.Limit, o.Rules)
				}
			}, ""},
		{"--hf-checkpoint replaces the recipe's tiny model", []string{"--hf-checkpoint", "/m"}, func(t *testing.T, o *planOptions) {
			if o.Config.HFCheckpoint != "/m" || o.Config.TinyModel != "" || o.Rules != memplan.CPU {
				t.Errorf("config %+v rules %v", o.Config, o.Rules)
			}
		}, ""},
		{"--fused-attention=false plans the decomposed graph", []string{"--config", "math-grpo-qwen3-8b", "--fused-attention=false"},
			func(t *testing.T, o *planOptions) {
				if o.Recipe.FusedAttention || o.Rules != memplan.XLA {
					t.Errorf("recipe %+v rules %v", o.Recipe, o.Rules)
				}
			}, ""},
		{"--fused-attention on the cpu rules", []string{"--config", "math-grpo-qwen3-8b", "--rules", "cpu", "--fused-attention"}, nil,
			"--fused-attention: fused attention runs under the xla rules"},
		{"the optimizer flags of mathrl train", []string{"--config", "math-grpo-qwen3-8b", "--optimizer-cpu-offload=false",
			"--store-param-remainders=false", "--exp-avg-dtype", "bfloat16", "--offload-train=false"}, func(t *testing.T, o *planOptions) {
			want := memplan.State{Precision: precision.Optimizer{Master: precision.MasterFloat32, Seed: 1, GradDType: dtypes.Float32,
				ExpAvgDType: dtypes.BFloat16, ExpAvgSqDType: dtypes.Float32}}
			if o.Recipe.State != want || o.Config.TinyModel != "" || o.Config.HFCheckpoint == "" {
				t.Errorf("state %+v, want %+v (config %+v)", o.Recipe.State, want, o.Config)
			}
		}, ""},
		{"--process-reward implicit plans the PRM and the reference", []string{"--config", "retool-grpo-qwen3-4b", "--tiny-model", "qwen3-4b",
			"--process-reward", "implicit"}, func(t *testing.T, o *planOptions) {
			if o.Config.ProcessReward != "implicit" || !o.Recipe.State.ImplicitPRM || !o.Recipe.Reference {
				t.Errorf("process_reward %q, recipe %+v: want the implicit PRM and the reference planned", o.Config.ProcessReward, o.Recipe)
			}
		}, ""},
		{"--process-reward implicit with the optimizer offloaded", []string{"--config", "math-grpo-qwen3-8b", "--process-reward", "implicit"}, nil,
			"process_reward: implicit: not with optimizer_cpu_offload yet"},
		{"--process-reward implicit, the offload turned off", []string{"--config", "math-grpo-qwen3-8b", "--process-reward", "implicit",
			"--optimizer-cpu-offload=false"}, func(t *testing.T, o *planOptions) {
			if !o.Recipe.State.ImplicitPRM || o.Recipe.State.OffloadFraction != 0 {
				t.Errorf("state %+v: want the implicit PRM, nothing offloaded", o.Recipe.State)
			}
		}, ""},
		{"unknown process reward", []string{"--process-reward", "explicit"}, nil, `process_reward: "explicit" is not none or implicit`},
		{"a precision flag mathrl train refuses", []string{"--config", "retool-grpo-qwen3-4b", "--exp-avg-dtype", "bfloat16"}, nil,
			"exp_avg_dtype: bfloat16 needs use_precision_aware_optimizer"},
		{"a teacher of a built-in shape", []string{"--config", "math-opd-qwen3-1.7b", "--tiny-model", "qwen3-1.7b", "--teacher-tiny-model", "qwen3-8b"},
			func(t *testing.T, o *planOptions) {
				shape, err := qwen3.NamedConfig("qwen3-8b")
				if err != nil {
					t.Fatal(err)
				}
				if o.Recipe.TeacherParams != shape.Params() {
					t.Errorf("teacher parameters %d, want qwen3-8b's %d", o.Recipe.TeacherParams, shape.Params())
				}
			}, ""},
		{"an imitation teacher samples the rollouts", []string{"--config", "math-sft-qwen3-1.7b", "--tiny-model", "qwen3-1.7b", "--teacher-tiny-model", "qwen3-8b"},
			func(t *testing.T, o *planOptions) {
				if s := o.Recipe.RolloutSampler; s == nil || s.Params() != o.Recipe.TeacherParams {
					t.Errorf("rollout sampler %+v, want the teacher's shape (%d parameters)", s, o.Recipe.TeacherParams)
				}
			}, ""},
		{"an on-policy teacher does not sample", []string{"--config", "math-opd-qwen3-1.7b", "--tiny-model", "qwen3-1.7b", "--teacher-tiny-model", "qwen3-8b"},
			func(t *testing.T, o *planOptions) {
				if o.Recipe.RolloutSampler != nil {
					t.Errorf("rollout sampler %+v, want none: the student samples", o.Recipe.RolloutSampler)
				}
			}, ""},
		{"an unknown teacher shape", []string{"--config", "math-opd-qwen3-1.7b", "--teacher-tiny-model", "qwen3-80b"}, nil, "--teacher-tiny-model"},
		{"two teacher shapes", []string{"--teacher", "/t", "--teacher-tiny-model", "qwen3-8b"}, nil, "give one"},
		{"implicit process rewards", []string{"--config", "retool-grpo-qwen3-4b", "--tiny-model", "qwen3-4b", "--process-reward", "implicit",
			"--optimizer-cpu-offload=false"}, func(t *testing.T, o *planOptions) {
			if !o.Recipe.State.ImplicitPRM || !o.Recipe.Reference {
				t.Errorf("implicit PRM %v, reference %v: want both planned", o.Recipe.State.ImplicitPRM, o.Recipe.Reference)
			}
		}, ""},
		{"an unknown process reward", []string{"--process-reward", "explicit"}, nil, `process_reward: "explicit" is not none or implicit`},
		{"bad memory size", []string{"--gpu-memory", "lots"}, nil, "memory size"},
		{"bad rules", []string{"--rules", "tpu"}, nil, "--rules"},
		{"negative override", []string{"--micro-batch-size", "-1"}, nil, "negative"},
		{"unknown recipe", []string{"--config", "nope"}, nil, "no recipe"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got *planOptions
			_, _, err := execute(newPlanCmd(func(o *planOptions) error { got = o; return nil }), "", tc.args...)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want one containing %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tc.check(t, got)
		})
	}
}

// TestPlanRun runs the whole command: the seed recipes on their models' shapes
// fit one 141 GiB device as written (with micro-batches of one sequence and
// recomputed layers), not with the card's micro-batches, and never in 40 GiB;
// a recipe that does not fit is an error wrapping ErrDoesNotFit after the
// report.
func TestPlanRun(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		fits bool
	}{
		{"demo on the CPU", []string{"--hf-checkpoint", filepath.Join("..", "..", "configs", "demo-base")}, true}, // the demo names its policy from the repository's root
		{"retool as written", []string{"--config", "retool-grpo-qwen3-4b", "--tiny-model", "qwen3-4b"}, true},
		{"retool with the card's micro-batches", []string{"--config", "retool-grpo-qwen3-4b", "--tiny-model", "qwen3-4b",
			"--micro-batch-size", "4", "--recompute-layers=false", "--sampling-batch-size", "32"}, false},
		{"retool on 40 GiB", []string{"--config", "retool-grpo-qwen3-4b", "--tiny-model", "qwen3-4b",
			"--micro-batch-size", "1", "--recompute-layers", "--sampling-batch-size", "16", "--gpu-memory", "40GiB"}, false},
		{"math as written", []string{"--config", "math-grpo-qwen3-8b", "--tiny-model", "qwen3-8b"}, true},
		{"math with the card's micro-batches", []string{"--config", "math-grpo-qwen3-8b", "--tiny-model", "qwen3-8b",
			"--micro-batch-size", "8", "--recompute-layers=false"}, false},
		// the studies' seed-scale recipes (docs/algorithms.md): the objectives' arms beside card A on one H200,
		// the distillation students beside the 8B teacher on card B's 93 GiB
		{"retool FlowRL as written", []string{"--config", "retool-flowrl-qwen3-4b", "--tiny-model", "qwen3-4b"}, true},
		{"retool PRIME as written", []string{"--config", "retool-prime-qwen3-4b", "--tiny-model", "qwen3-4b"}, true},
		{"retool PRIME with the control's memory settings", []string{"--config", "retool-prime-qwen3-4b", "--tiny-model", "qwen3-4b",
			"--logprob-chunk", "0", "--sampling-batch-size", "32"}, false},
		{"math student GRPO", []string{"--config", "math-grpo-qwen3-1.7b", "--tiny-model", "qwen3-1.7b", "--gpu-memory", "93GiB"}, true},
		{"math student on-policy distillation", []string{"--config", "math-opd-qwen3-1.7b", "--tiny-model", "qwen3-1.7b",
			"--teacher-tiny-model", "qwen3-8b", "--gpu-memory", "93GiB"}, true},
		{"math student imitation", []string{"--config", "math-sft-qwen3-1.7b", "--tiny-model", "qwen3-1.7b",
			"--teacher-tiny-model", "qwen3-8b", "--gpu-memory", "93GiB"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stdout, _, err := runCLI(t, "", append([]string{"plan"}, tc.args...)...)
			if tc.fits != (err == nil) || (err != nil && !errors.Is(err, memplan.ErrDoesNotFit)) {
				t.Fatalf("error %v, want fits=%v\n%s", err, tc.fits, stdout)
			}
			verdict := "verdict: FITS"
			if !tc.fits {
				verdict = "verdict: DOES NOT FIT"
			}
			if !strings.Contains(stdout, verdict) || !strings.Contains(stdout, "dominant term:") {
				t.Errorf("output lacks %q or the dominant term:\n%s", verdict, stdout)
			}
		})
	}
}

// TestPlanModelFromCheckpoint reads the shape from a folder's config.json, and
// names --tiny-model when the folder has none.
func TestPlanModelFromCheckpoint(t *testing.T) {
	dir := t.TempDir()
	cfg, err := qwen3.NamedConfig("small")
	if err != nil {
		t.Fatal(err)
	}
	data, err := cfg.MarshalHF()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "config.json"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	stdout := mustRunCLI(t, "plan", "--hf-checkpoint", dir)
	if !strings.Contains(stdout, "model "+dir+": 4.80M parameters") {
		t.Errorf("output does not name the checkpoint's shape:\n%s", stdout)
	}
	_, _, err = runCLI(t, "", "plan", "--hf-checkpoint", filepath.Join(dir, "missing"))
	if err == nil || !strings.Contains(err.Error(), "--tiny-model") {
		t.Errorf("error %v, want one that suggests --tiny-model", err)
	}
}

// TestReadmePlanOutput runs the `mathrl plan` command that README.md shows and
// compares its output with the README's copy.
func TestReadmePlanOutput(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, block, ok := strings.Cut(string(data), "```\n$ mathrl plan ")
	if !ok {
		t.Fatal("README.md has no ```-block starting with `$ mathrl plan`")
	}
	block, _, _ = strings.Cut(block, "```")
	cmdLine, want, _ := strings.Cut(block, "\n")
	got := mustRunCLI(t, append([]string{"plan"}, strings.Fields(cmdLine)...)...)
	if got != want {
		t.Errorf("README.md shows for `mathrl plan %s`:\n%s\nthe command prints:\n%s", cmdLine, want, got)
	}
}

// TestPlanDevices: --devices and --sharding reach the recipe (one device
// under replicate leaves them zero, as the recipe's defaults do), a count
// below 1 is refused at once, and a micro-batch that does not split is one
// error naming the flag.
func TestPlanDevices(t *testing.T) {
	var got *planOptions
	args := []string{"--config", "math-grpo-qwen3-8b", "--devices", "8", "--sharding", "fsdp", "--micro-batch-size", "64"}
	if _, _, err := execute(newPlanCmd(func(o *planOptions) error { got = o; return nil }), "", args...); err != nil {
		t.Fatal(err)
	}
	if got.Recipe.Devices != 8 || got.Recipe.Sharding != "fsdp" {
		t.Errorf("recipe %+v, want 8 devices under fsdp", got.Recipe)
	}
	if _, _, err := execute(newPlanCmd(func(o *planOptions) error { got = o; return nil }), "", "--devices", "1", "--sharding", "replicate"); err != nil ||
		got.Recipe.Devices != 0 || got.Recipe.Sharding != "" {
		t.Errorf("one device: %v, recipe %+v", err, got.Recipe)
	}
	if _, _, err := execute(newPlanCmd(nil), "", "--devices", "0"); err == nil || !strings.Contains(err.Error(), "--devices 0: want at least 1") {
		t.Errorf("--devices 0: %v", err)
	}
	_, _, err := runCLI(t, "", "plan", "--config", "math-grpo-qwen3-8b", "--tiny-model", "qwen3-8b", "--devices", "8", "--sharding", "data", "--micro-batch-size", "4")
	if err == nil || !strings.Contains(err.Error(), "micro_batch_size (--micro-batch-size): 4 rows per micro-batch do not split over num_devices (--devices) 8") {
		t.Errorf("4 rows on 8 devices: %v", err)
	}
}
