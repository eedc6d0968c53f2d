package grpo

import (
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/mathrl/mathrl/analysis/scorer"
	"github.com/mathrl/mathrl/configs"
	"github.com/mathrl/mathrl/gomlx_trainer/engine/inprocess"
	"github.com/mathrl/mathrl/gomlx_trainer/layout"
)

func TestDecodeConfigErrors(t *testing.T) {
	for _, tc := range []struct {
		name, yaml, want string
	}{
		{"unknown key", "lr: 1e-6\nlearning_rate: 1e-6\n", `x.yaml:2: unknown key "learning_rate"`},
		{"misspelt key", "rollout_batchsize: 8\n", `x.yaml:1: unknown key "rollout_batchsize" (did you mean "rollout_batch_size"?)`},
		{"ill-typed int", "n_samples_per_prompt: many\n", `x.yaml:1: key "n_samples_per_prompt": want an integer, got "many"`},
		{"ill-typed float", "lr: fast\n", `key "lr": want a number`},
		{"ill-typed bool", "use_tools: maybe\n", `key "use_tools": want true or false`},
		{"number for a string", "rm_type: 3\n", `key "rm_type": want a string`},
		{"list value", "lr: [1, 2]\n", `key "lr": want a single value`},
		{"empty value", "lr:\n", `key "lr": no value`},
		{"number in a list", "rollout_engine_urls: [\"http://a\", 3]\n", `x.yaml:1: key "rollout_engine_urls": item 2: want a string, got "3"`},
		{"mapping for a list", "rollout_engine_urls: {a: 1}\n", `key "rollout_engine_urls": want a list of strings`},
		{"unknown engine", "prompt_data: arith\ntiny_model: tiny\nrollout_engine: vllm\n", `rollout_engine: "vllm"`},
		{"engine without a server", "prompt_data: arith\ntiny_model: tiny\nrollout_engine: sglang\n", `rollout_engine_urls: empty, but rollout_engine sglang needs a server`},
		{"server for the builtin", "prompt_data: arith\ntiny_model: tiny\nrollout_engine_urls: http://a:1\n", `rollout_engine_urls: set, but rollout_engine is builtin`},
		{"batches over openai", "prompt_data: arith\ntiny_model: tiny\nrollout_engine: openai\nrollout_engine_urls: http://a:1\nrollout_engine_batch: 8\n", `rollout_engine_batch: 8, but only rollout_engine sglang`},
		{"async on several devices", "prompt_data: arith\ntiny_model: tiny\nbackend: xla-cpu\nnum_devices: 2\nsharding: data\nasync_rollouts: true\n", `async_rollouts: with rollout_engine builtin on num_devices 2`},
		{"server without a scheme", "prompt_data: arith\ntiny_model: tiny\nrollout_engine: openai\nrollout_engine_urls: [\"http://a:1\", \"b:2\"]\n", `rollout_engine_urls: "b:2", want http:// or https://`},
		{"repeated key", "lr: 1\nlr: 2\n", `key "lr" repeats line 1`},
		{"not a mapping", "- 1\n", "want a mapping"},
		{"NaN", "lr: 1e-6\nrollout_temperature: .nan\n", `x.yaml:2: key "rollout_temperature": want a finite number, got ".nan"`},
		{"infinity", "eps_clip: -.Inf\n", `x.yaml:1: key "eps_clip": want a finite number`},
		{"int overflow", "num_rollout: 99999999999999999999\n", `x.yaml:1: key "num_rollout": want an integer`},
		{"second document", "lr: 1\n---\nlr: 2\n", `x.yaml:2: a second YAML document`},
		{"truncated quote", "rm_type: \"math\nlr: 1\n", `grpo: x.yaml: yaml: line 3: found unexpected end of stream`},
		{"invalid UTF-8", "rm_type: \"\xff\"\n", `grpo: x.yaml: yaml: invalid`},
		{"alias", "lr: &a 1\neps_clip: *a\n", `x.yaml:2: key "eps_clip": want a single value`},
		{"huge line", "rollout_batch_size: " + strings.Repeat("9", 1<<20) + "\n", `x.yaml:1: key "rollout_batch_size": want an integer`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := DecodeConfig(strings.NewReader(tc.yaml), "x.yaml", Default())
			if err == nil {
				err = c.Validate()
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

func TestDidYouMean(t *testing.T) {
	for key, want := range map[string]string{
		"rollout_batchsize":  ` (did you mean "rollout_batch_size"?)`,
		"rollout-top-p":      ` (did you mean "rollout_top_p"?)`,
		"Eval_Temperature":   ` (did you mean "eval_temperature"?)`,
		"learning_rate":      "",
		"eps":                "",
		"n_sample_per_promt": ` (did you mean "n_samples_per_prompt"?)`,
	} {
		if got := didYouMean(key); got != want {
			t.Errorf("didYouMean(%q) = %q, want %q", key, got, want)
		}
	}
}

// TestDecodeListKey reads rollout_engine_urls as a YAML list and as one
// string, a list of one.
func TestDecodeListKey(t *testing.T) {
	for text, want := range map[string][]string{
		"rollout_engine_urls: [\"http://a:1\", \"http://b:2\"]\n": {"http://a:1", "http://b:2"},
		"rollout_engine_urls:\n  - http://a:1\n":                  {"http://a:1"},
		"rollout_engine_urls: http://a:1\n":                       {"http://a:1"},
	} {
		c, err := DecodeConfig(strings.NewReader(text), "x.yaml", Default())
		if err != nil || !slices.Equal(c.RolloutEngineURLs, want) {
			t.Errorf("%q: %q, %v; want %q", text, c.RolloutEngineURLs, err, want)
		}
	}
}

func TestDecodeConfigOverBase(t *testing.T) {
	c, err := DecodeConfig(strings.NewReader("lr: 2.5e-6\nuse_tools: true\nrm_type: dapo\n"), "x.yaml", Default())
	if err != nil {
		t.Fatal(err)
	}
	if c.LR != 2.5e-6 || !c.UseTools || c.RMType != "dapo" {
		t.Errorf("decoded %+v", c)
	}
	if c.EpsClipHigh != Default().EpsClipHigh {
		t.Errorf("absent key changed: eps_clip_high %v", c.EpsClipHigh)
	}
}

func TestValidateNamesKey(t *testing.T) {
	c := Default()
	c.PromptData = "arith"
	c.TinyModel = "tiny"
	if err := c.Validate(); err != nil {
		t.Fatalf("default with data and model: %v", err)
	}
	c.GlobalBatchSize = 48 // 64 samples
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "global_batch_size") {
		t.Errorf("Validate = %v, want a global_batch_size error", err)
	}
}

// TestRecipes loads every file of configs/ and checks the two seed recipes
// carry their cards' numbers.
func TestRecipes(t *testing.T) {
	dir := filepath.Join("..", "..", "configs")
	files, _ := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if len(files) < 3 {
		t.Fatalf("found %d recipes in %s, want at least 3", len(files), dir)
	}
	got := map[string]Config{}
	for _, f := range files {
		c, err := LoadConfigFile(f, Default())
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Validate(); err != nil {
			t.Errorf("%s: %v", f, err)
		}
		got[filepath.Base(f)] = c
	}
	a := got["retool-grpo-qwen3-4b.yaml"]
	if a.RolloutBatchSize != 64 || a.NSamplesPerPrompt != 16 || a.GlobalBatchSize != 256 || a.StepsPerRollout() != 4 ||
		a.LR != 1e-6 || a.UseKLLoss || a.EpsClip != 0.2 || a.EpsClipHigh != 0.28 || a.RolloutMaxResponseLen != 8192 ||
		a.EvalMaxResponseLen != 16384 || !a.UseTools || a.RMType != scorer.Retool {
		t.Errorf("retool recipe: %+v", a)
	}
	b := got["math-grpo-qwen3-8b.yaml"]
	if b.RolloutBatchSize != 16 || b.NSamplesPerPrompt != 8 || b.NumRollout*b.StepsPerRollout() != 120 ||
		b.LR != 1e-6 || b.RolloutMaxResponseLen != 4096 || b.RMType != "math" || b.UseTools {
		t.Errorf("math recipe: %+v", b)
	}
}

var update = flag.Bool("update", false, "rewrite the key table of configs/README.md from grpo.Config's tags")

const (
	readmeTableStart = "<!-- key table: generated from the tags of grpo.Config"
	readmeTableEnd   = "<!-- end of key table -->"
)

// TestReadmeKeyTable checks that the key table of configs/README.md is the one
// the tags of Config give; -update rewrites it.
func TestReadmeKeyTable(t *testing.T) {
	path := filepath.Join("..", "..", "configs", "README.md")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	readme := string(data)
	start, end := strings.Index(readme, readmeTableStart), strings.Index(readme, readmeTableEnd)
	if start < 0 || end < start {
		t.Fatalf("%s: no %q ... %q block", path, readmeTableStart, readmeTableEnd)
	}
	start += strings.Index(readme[start:], "\n") + 1 // the table starts after the marker's line
	want := keyTable()
	if readme[start:end] == want {
		return
	}
	if *update {
		if err := os.WriteFile(path, []byte(readme[:start]+want+readme[end:]), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("rewrote the key table of %s", path)
		return
	}
	t.Errorf("%s: the key table differs from grpo.Config's tags; rerun with -update to rewrite it, or paste:\n%s", path, want)
}

// keyTable is the Markdown table of every knob (key, type, default, slime's
// equivalent and description), between blank lines.
func keyTable() string {
	var b strings.Builder
	b.WriteString("\n| key | type | default | slime | meaning |\n|---|---|---|---|---|\n")
	def := reflect.ValueOf(Default())
	for _, k := range Knobs() {
		slime := "—"
		if k.Slime != "" {
			slime = "`" + k.Slime + "`"
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s | %s |\n", k.Key, typeName(k.Type), defaultCell(def.Field(k.Index)), slime, markdownText(k.Help))
	}
	b.WriteString("\n")
	return b.String()
}

func typeName(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Int, reflect.Int64:
		return "integer"
	case reflect.Float64:
		return "number"
	case reflect.Slice:
		return "list of strings"
	default:
		return t.Kind().String() // string, bool
	}
}

// defaultCell is a default value as code, or nothing for an empty string.
func defaultCell(v reflect.Value) string {
	s := fmt.Sprint(v.Interface())
	if s == "" {
		return ""
	}
	return "`" + s + "`"
}

// markdownText escapes the characters of s that Markdown would read as
// emphasis or as a table cell's end.
func markdownText(s string) string {
	return strings.NewReplacer("*", `\*`, "|", `\|`, "<", "&lt;").Replace(s)
}

func TestKnobs(t *testing.T) {
	knobs := Knobs()
	if len(knobs) != reflect.TypeOf(Config{}).NumField() {
		t.Fatalf("%d knobs for %d fields", len(knobs), reflect.TypeOf(Config{}).NumField())
	}
	var c Config
	seen := map[string]bool{}
	for _, k := range knobs {
		if k.Key == "" || seen[k.Key] || k.Help == "" || strings.ContainsAny(k.Help, "\n`") {
			t.Errorf("knob %d: key %q (repeated: %v), help %q: want a unique key and a one-line help without backquotes", k.Index, k.Key, seen[k.Key], k.Help)
		}
		seen[k.Key] = true
		if k.Slime != "" && strings.Contains(k.Slime, "`") {
			t.Errorf("knob %s: slime %q has a backquote", k.Key, k.Slime)
		}
		p := reflect.ValueOf(k.Ptr(&c))
		if p.Type().Elem() != k.Type || p.Pointer() != reflect.ValueOf(&c).Elem().Field(k.Index).Addr().Pointer() {
			t.Errorf("knob %s: Ptr gives a %s, not the field's address", k.Key, p.Type())
		}
	}
	if got := strings.Join(ConfigKeys(), " "); !strings.HasPrefix(got, "hf_checkpoint tiny_model ") || !strings.HasSuffix(got, " keep_ckpts save_rollouts_every save_rollouts_groups") {
		t.Errorf("ConfigKeys = %s, want declaration order", got)
	}
}

// TestValidateDevices accepts a data-parallel recipe whose micro-batches
// split over the devices, and one whose micro-batches are packed by tokens.
func TestValidateDevices(t *testing.T) {
	c := Default()
	c.PromptData, c.TinyModel = "arith", "tiny"
	c.NumDevices, c.Sharding, c.MicroBatchSize, c.Backend = 4, layout.Data, 8, "xla-cpu"
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	c.MaxTokensPerMicroBatch, c.Sharding = 4096, layout.FSDP // packed micro-batches are padded to split
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
}

func TestValidateErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		set  func(*Config)
		want string
	}{
		{"range, with the description", func(c *Config) { c.RolloutTopP = 1.5 }, "grpo: config rollout_top_p: 1.5 is outside (0, 1] — nucleus sampling threshold (1: off)"},
		{"empty, with the description", func(c *Config) { c.Save = "" }, "grpo: config save: empty — run folder ("},
		{"choices, listed", func(c *Config) { c.KLLossType = "k4" }, `grpo: config kl_loss_type: "k4" is not k1, k2, k3 or low_var_kl`},
		{"one choice", func(c *Config) { c.LRDecayStyle = "cosine" }, `grpo: config lr_decay_style: "cosine" is not constant`},
		{"NaN, as a flag gives it", func(c *Config) { c.RolloutTemperature = math.NaN() }, "grpo: config rollout_temperature: NaN, want a finite number"},
		{"infinity", func(c *Config) { c.WeightDecay = math.Inf(1) }, "grpo: config weight_decay: +Inf, want a finite number"},
		{"negative recording interval", func(c *Config) { c.SaveRolloutsEvery = -1 }, "grpo: config save_rollouts_every: -1 is negative — record the training rollouts"},
		{"negative recorded groups", func(c *Config) { c.SaveRolloutsGroups = -2 }, "grpo: config save_rollouts_groups: -2 is negative — prompt groups"},
		{"no devices", func(c *Config) { c.NumDevices = 0 }, "grpo: config num_devices: 0, want at least 1 — devices"},
		{"unknown sharding", func(c *Config) { c.Sharding = "zero" }, `grpo: config sharding: "zero" is not replicate, data or fsdp`},
		{"fsdp on the Go backend", func(c *Config) { c.Backend, c.Sharding = "cpu", layout.FSDP }, `grpo: config sharding: "fsdp" on backend cpu, whose one device cannot hold shards; use backend xla-cpu or cuda, or sharding replicate`},
		{"devices replicated", func(c *Config) { c.NumDevices = 2 }, `grpo: config sharding: "replicate" runs on one device, but num_devices is 2; set sharding data or fsdp, or num_devices 1`},
		{"devices on the Go backend", func(c *Config) { c.NumDevices, c.Sharding, c.Backend = 2, layout.Data, "cpu" }, "grpo: config num_devices: 2 on backend cpu, which has one device; use backend xla-cpu or cuda"},
		{"micro-batch does not split", func(c *Config) { c.NumDevices, c.Sharding, c.MicroBatchSize = 4, layout.Data, 2 },
			"grpo: config micro_batch_size: 2 rows per micro-batch do not split over num_devices 4; want a multiple of 4"},
		{"whole batch does not split", func(c *Config) { c.NumDevices, c.Sharding, c.GlobalBatchSize = 3, layout.Data, 16 },
			"grpo: config global_batch_size: 16 rows per micro-batch do not split over num_devices 3"},
		{"warm start does not split", func(c *Config) { c.NumDevices, c.Sharding, c.SFTSteps, c.SFTBatchSize = 4, layout.Data, 1, 6 },
			"grpo: config sft_batch_size: 6 warm-start traces per step do not split over num_devices 4"},
		{"flowrl: β", func(c *Config) { c.AdvantageEstimator, c.FlowRLBeta = "flowrl", 0 }, "grpo: config flowrl_beta: 0, want > 0 — with advantage_estimator flowrl: β"},
		{"flowrl: log Z estimator", func(c *Config) { c.FlowRLLogZ = "mean" }, `grpo: config flowrl_log_z: "mean" is not vargrad or head`},
		{"flowrl: head layers", func(c *Config) { c.FlowRLHeadLayers = 0 }, "grpo: config flowrl_head_layers: 0, want at least 1"},
		{"flowrl: head with the optimizer offloaded", func(c *Config) { c.AdvantageEstimator, c.FlowRLLogZ, c.OptimizerCPUOffload = "flowrl", "head", true },
			"grpo: config flowrl_log_z: head: not with optimizer_cpu_offload yet"},
		{"flowrl: head under fsdp", func(c *Config) {
			c.AdvantageEstimator, c.FlowRLLogZ, c.Backend, c.NumDevices, c.Sharding = "flowrl", "head", "xla-cpu", 2, layout.FSDP
		}, "grpo: config flowrl_log_z: head: not with sharding fsdp yet"},
		{"flowrl: KL penalty", func(c *Config) { c.AdvantageEstimator, c.UseKLLoss, c.KLLossCoef = "flowrl", true, 0.01 },
			"grpo: config kl_loss_coef: 0.01 with advantage_estimator flowrl, whose loss already holds log π_ref"},
		{"flowrl: entropy bonus", func(c *Config) { c.AdvantageEstimator, c.EntropyCoef = "flowrl", 0.01 }, "grpo: config entropy_coef: 0.01 with advantage_estimator flowrl"},
		{"flowrl: TIS", func(c *Config) { c.AdvantageEstimator, c.UseTIS = "flowrl", true }, "grpo: config use_tis: not with advantage_estimator flowrl"},
		{"unknown estimator", func(c *Config) { c.AdvantageEstimator = "ppo" }, `grpo: config advantage_estimator: "ppo" is not grpo, gspo, rloo, reinforce_plus_plus_baseline or flowrl`},
		{"unknown teacher engine", func(c *Config) { c.Teacher, c.TeacherEngine = "t", "vllm" }, `grpo: config teacher_engine: "vllm" is not builtin or sglang`},
		{"negative distillation weight", func(c *Config) { c.Teacher, c.DistillCoef = "t", -1 }, "grpo: config distill_coef: -1 is negative — with teacher"},
		{"negative outcome weight", func(c *Config) { c.Teacher, c.DistillOutcomeCoef = "t", -0.5 }, "grpo: config distill_outcome_coef: -0.5 is negative"},
		{"both distillation weights 0", func(c *Config) { c.Teacher, c.DistillCoef = "t", 0 }, "grpo: config distill_coef: 0 with distill_outcome_coef 0"},
		{"served teacher without URLs", func(c *Config) { c.Teacher, c.TeacherEngine = "t", "sglang" }, "grpo: config teacher_urls: empty with teacher_engine sglang"},
		{"URLs of an in-process teacher", func(c *Config) { c.Teacher, c.TeacherURLs = "t", []string{"http://x"} }, "grpo: config teacher_urls: set with teacher_engine builtin"},
		{"a teacher with FlowRL", func(c *Config) { c.Teacher, c.AdvantageEstimator = "t", "flowrl" }, "grpo: config teacher: not with advantage_estimator flowrl"},
		{"URLs without a teacher", func(c *Config) { c.TeacherURLs = []string{"http://x"} }, "grpo: config teacher: empty with teacher_urls set"},
		{"unknown distillation mode", func(c *Config) { c.Teacher, c.DistillMode = "t", "offline" }, `grpo: config distill_mode: "offline" is not on_policy or sft`},
		{"imitation from a served teacher", func(c *Config) {
			c.Teacher, c.DistillMode, c.TeacherEngine, c.TeacherURLs = "t", "sft", "sglang", []string{"http://x"}
		},
			"grpo: config distill_mode: sft samples with the teacher in process; set teacher_engine builtin"},
		{"imitation with dynamic sampling", func(c *Config) { c.Teacher, c.DistillMode, c.DynamicSampling = "t", "sft", true },
			"grpo: config distill_mode: sft: not with dynamic_sampling"},
		{"imitation with async rollouts", func(c *Config) { c.Teacher, c.DistillMode, c.AsyncRollouts = "t", "sft", true },
			"grpo: config distill_mode: sft: not with async_rollouts"},
		{"unknown process reward", func(c *Config) { c.ProcessReward = "explicit" }, `grpo: config process_reward: "explicit" is not none or implicit`},
		{"PRM β", func(c *Config) { c.ProcessReward, c.PRMBeta = "implicit", 0 }, "grpo: config prm_beta: 0, want > 0"},
		{"PRM weight", func(c *Config) { c.PRMCoef = -1 }, "grpo: config prm_coef: -1 is negative"},
		{"PRM learning rate", func(c *Config) { c.PRMLR = -1e-6 }, "grpo: config prm_lr: -1e-06 is negative"},
		{"PRM with FlowRL", func(c *Config) { c.ProcessReward, c.AdvantageEstimator = "implicit", "flowrl" }, "grpo: config process_reward: implicit: not with advantage_estimator flowrl"},
		{"PRM with a teacher", func(c *Config) { c.ProcessReward, c.Teacher = "implicit", "t" }, "grpo: config process_reward: implicit: not with a teacher"},
		{"PRM with the optimizer offloaded", func(c *Config) { c.ProcessReward, c.OptimizerCPUOffload = "implicit", true },
			"grpo: config process_reward: implicit: not with optimizer_cpu_offload yet"},
		{"PRM on devices", func(c *Config) {
			c.ProcessReward, c.NumDevices, c.Sharding, c.Backend = "implicit", 2, layout.Data, "xla-cpu"
		},
			"grpo: config process_reward: implicit: not with num_devices 2 yet"},
		{"PRM with one sample a prompt", func(c *Config) { c.ProcessReward, c.NSamplesPerPrompt, c.GlobalBatchSize = "implicit", 1, 8 },
			"grpo: config n_samples_per_prompt: 1 with process_reward implicit"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := Default()
			c.PromptData, c.TinyModel = "arith", "tiny"
			tc.set(&c)
			err := c.Validate()
			if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
				t.Fatalf("Validate = %v, want %q...", err, tc.want)
			}
			if strings.Contains(tc.want, "is not") && strings.Contains(err.Error(), "—") {
				t.Errorf("Validate = %v: a list of choices needs no description", err)
			}
		})
	}
}

// FuzzDecodeConfig decodes arbitrary recipes: no panic; an error names the
// file; what decodes either validates or fails Validate naming a key, and
// never holds a NaN or infinite number.
func FuzzDecodeConfig(f *testing.F) {
	for _, name := range configs.Names() {
		data, err := configs.Read(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(data))
	}
	for _, s := range []string{"lr: .nan\n", "lr: &a 1\neps_clip: *a\n", "lr: 1\n---\nlr: 2\n", "- 1\n", "lr: [1, 2]\n", "{lr: 1, lr: 2}"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, recipe string) {
		c, err := DecodeConfig(strings.NewReader(recipe), "x.yaml", Default())
		if err != nil {
			if !strings.HasPrefix(err.Error(), "grpo: x.yaml") {
				t.Fatalf("error %q does not name the file", err)
			}
			return
		}
		if err := c.validateFinite(); err != nil {
			t.Fatalf("decoded a non-finite number: %v", err)
		}
		if err := c.Validate(); err != nil && !strings.HasPrefix(err.Error(), "grpo: config ") {
			t.Fatalf("Validate error %q does not name a key", err)
		}
	})
}

// TestValidateAcceptsWhatRuns: recipes that sample on servers, spread over
// several devices or overlap sampling with training (async_rollouts) pass
// Validate, and a near miss of each, one knob off, fails with an error
// naming that knob.
func TestValidateAcceptsWhatRuns(t *testing.T) {
	servers := func(c *Config) {
		c.RolloutEngine, c.RolloutEngineURLs, c.WeightsDir, c.RolloutEngineBatch = "sglang", []string{"http://a:1", "https://b:2"}, "/tmp/weights", 8
	}
	devices := func(c *Config) {
		c.Backend, c.NumDevices, c.Sharding, c.MicroBatchSize, c.SFTSteps, c.SFTBatchSize = "xla-cpu", 4, layout.Data, 8, 2, 8
	}
	for _, tc := range []struct {
		name     string
		valid    func(*Config)
		nearMiss func(*Config)
		key      string
	}{
		{"sglang servers", servers, func(c *Config) { c.RolloutEngineURLs[1] = "b:2" }, "rollout_engine_urls"},
		{"openai servers", func(c *Config) {
			c.RolloutEngine, c.RolloutEngineURLs, c.WeightsDir = "openai", []string{"http://a:1"}, "w"
		},
			func(c *Config) { c.RolloutEngineBatch = 8 }, "rollout_engine_batch"},
		{"servers need a URL", servers, func(c *Config) { c.RolloutEngineURLs = nil }, "rollout_engine_urls"},
		{"data on 4 devices", devices, func(c *Config) { c.SFTBatchSize = 6 }, "sft_batch_size"},
		{"micro-batches on 4 devices", devices, func(c *Config) { c.MicroBatchSize = 2 }, "micro_batch_size"},
		{"fsdp on 2 CUDA devices", func(c *Config) { c.Backend, c.NumDevices, c.Sharding = "cuda", 2, layout.FSDP },
			func(c *Config) { c.Backend = "cpu" }, "sharding"},
		{"several devices, sharded", devices, func(c *Config) { c.Sharding = layout.Replicate }, "sharding"},
		{"flowrl, a KL reference without the penalty", func(c *Config) { c.AdvantageEstimator, c.UseKLLoss = "flowrl", true },
			func(c *Config) { c.KLLossCoef = 0.001 }, "kl_loss_coef"},
		{"async, builtin on one device", func(c *Config) { c.AsyncRollouts = true },
			func(c *Config) { c.Backend, c.NumDevices, c.Sharding = "xla-cpu", 2, layout.Data }, "async_rollouts"},
		{"async, servers on 4 devices", func(c *Config) { c.AsyncRollouts = true; servers(c); devices(c) },
			func(c *Config) {
				c.RolloutEngine, c.RolloutEngineURLs, c.WeightsDir, c.RolloutEngineBatch = inprocess.Name, nil, "", 0
			}, "async_rollouts"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := Default()
			c.PromptData, c.TinyModel = "arith", "tiny"
			tc.valid(&c)
			if err := c.Validate(); err != nil {
				t.Fatalf("valid recipe: %v", err)
			}
			c.RolloutEngineURLs = slices.Clone(c.RolloutEngineURLs)
			tc.nearMiss(&c)
			err := c.Validate()
			if want := "grpo: config " + tc.key + ":"; err == nil || !strings.HasPrefix(err.Error(), want) {
				t.Errorf("near miss: Validate = %v, want an error starting %q", err, want)
			}
		})
	}
}

// TestDistillSFTNeedsATeacher: distill_mode applies with a teacher only.
// Without one, distill_mode sft is inert: the recipe passes Validate, even
// with dynamic_sampling (which sft refuses beside a teacher), and the policy
// learns from its own samples (distillSFT false, no teacher's sampler, no
// imitation); with a teacher, sft imitates and on_policy does not.
func TestDistillSFTNeedsATeacher(t *testing.T) {
	c := Default()
	c.PromptData, c.TinyModel = "arith", "tiny"
	c.DistillMode, c.DynamicSampling = "sft", true
	if err := c.Validate(); err != nil {
		t.Fatalf("distill_mode sft without a teacher: %v", err)
	}
	for _, tc := range []struct {
		teacher, mode string
		want          bool
	}{
		{"", "sft", false},
		{"", "on_policy", false},
		{"/teacher", "sft", true},
		{"/teacher", "on_policy", false},
	} {
		c.Teacher, c.DistillMode = tc.teacher, tc.mode
		if got := c.distillSFT(); got != tc.want {
			t.Errorf("teacher %q, distill_mode %s: distillSFT %v, want %v", tc.teacher, tc.mode, got, tc.want)
		}
	}
}
