package grpo

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"slices"
	"strings"

	"github.com/mathrl/mathrl/analysis/scorer"
	"github.com/mathrl/mathrl/data/arith"
	"gopkg.in/yaml.v3"
)

// Config holds every knob of a GRPO run, once. YAML files (configs/*.yaml) and
// command-line flags write into the same struct; the resolved struct is saved as
// config.json in the run folder and inside every checkpoint. Key names follow
// slime's command-line flags (with '-' written '_') where slime has the knob;
// configs/README.md lists the mapping.
type Config struct {
	// --- policy model
	HFCheckpoint string `yaml:"hf_checkpoint" json:"hf_checkpoint"` // folder of the initial policy in Hugging Face format (config.json, *.safetensors, tokenizer.json)
	TinyModel    string `yaml:"tiny_model" json:"tiny_model"`       // when set, replace the policy by a random Qwen3 of this built-in shape ("tiny", "tiny-4l", "small", "qwen3-0.6b", ...): smoke runs of a full recipe
	Tokenizer    string `yaml:"tokenizer" json:"tokenizer"`         // tokenizer.json path; empty: the one in hf_checkpoint (with tiny_model of vocabulary 300: "bytes"); "bytes": the byte-level vocabulary
	DType        string `yaml:"dtype" json:"dtype"`                 // compute dtype of the policy: float32 or bfloat16
	Backend      string `yaml:"backend" json:"backend"`             // cpu, cuda or auto
	Seed         int64  `yaml:"seed" json:"seed"`                   // seeds data order, sampling and initialisation

	// --- data
	PromptData     string `yaml:"prompt_data" json:"prompt_data"`           // training prompts: a dataset name (math_train, dapo_math_17k, arith) or a JSONL file of {id, problem, answer}
	EvalPromptData string `yaml:"eval_prompt_data" json:"eval_prompt_data"` // evaluation prompts, same forms; empty disables evaluation
	EvalMaxPrompts int    `yaml:"eval_max_prompts" json:"eval_max_prompts"` // use only the first N evaluation prompts (0: all)
	RolloutShuffle bool   `yaml:"rollout_shuffle" json:"rollout_shuffle"`   // shuffle the training prompts every epoch
	ArithMaxDigits int    `yaml:"arith_max_digits" json:"arith_max_digits"` // largest operand length of the generated arithmetic tasks (prompt_data: arith)
	ArithOps       string `yaml:"arith_ops" json:"arith_ops"`               // operations of the generated tasks: "*+" (3 to 1), "*" or "+"

	// --- rollout
	NumRollout            int     `yaml:"num_rollout" json:"num_rollout"`                           // number of rollouts (sampling rounds) in the run
	RolloutBatchSize      int     `yaml:"rollout_batch_size" json:"rollout_batch_size"`             // prompts per rollout
	NSamplesPerPrompt     int     `yaml:"n_samples_per_prompt" json:"n_samples_per_prompt"`         // completions per prompt: the group size G
	RolloutMaxPromptLen   int     `yaml:"rollout_max_prompt_len" json:"rollout_max_prompt_len"`     // prompts longer than this (tokens) are skipped
	RolloutMaxResponseLen int     `yaml:"rollout_max_response_len" json:"rollout_max_response_len"` // response budget in tokens, counting tool responses too
	RolloutTemperature    float64 `yaml:"rollout_temperature" json:"rollout_temperature"`           // sampling temperature
	RolloutTopP           float64 `yaml:"rollout_top_p" json:"rollout_top_p"`                       // nucleus sampling threshold (1: off)
	RolloutTopK           int     `yaml:"rollout_top_k" json:"rollout_top_k"`                       // top-k sampling (0: off)
	SamplingBatchSize     int     `yaml:"sampling_batch_size" json:"sampling_batch_size"`           // sequences generated at once, rollouts and evaluation alike (0: a whole rollout); bounds the KV cache on a GPU

	// --- tools
	UseTools        bool    `yaml:"use_tools" json:"use_tools"`               // offer the code_interpreter tool and run its calls in the sandbox
	MaxTurns        int     `yaml:"max_turns" json:"max_turns"`               // tool calls allowed per sample; the next call ends it with finish reason tool-limit
	ToolTimeout     float64 `yaml:"tool_timeout" json:"tool_timeout"`         // seconds of wall time per tool call
	ToolConcurrency int     `yaml:"tool_concurrency" json:"tool_concurrency"` // tool calls run at once
	SystemPrompt    string  `yaml:"system_prompt" json:"system_prompt"`       // system message; empty: the seed's math prompt when the tool spec is offered, else none
	OfferToolSpec   bool    `yaml:"offer_tool_spec" json:"offer_tool_spec"`   // list the code_interpreter spec in the system turn (the template's # Tools block); the CPU demo leaves it out to keep prompts short

	// --- reward
	RMType string `yaml:"rm_type" json:"rm_type"` // reward: math (0/1), dapo (±1), deepscaler (0/1), retool (slime's retool reward: ±1 on the last boxed answer, a bonus for tool calls on wrong answers)

	// --- advantages and loss
	AdvantageEstimator          string  `yaml:"advantage_estimator" json:"advantage_estimator"`                       // grpo (the only one)
	DisableGRPOStdNormalization bool    `yaml:"disable_grpo_std_normalization" json:"disable_grpo_std_normalization"` // Dr.GRPO: advantages r - mean, without dividing by the group std
	AdvantageEps                float64 `yaml:"advantage_eps" json:"advantage_eps"`                                   // ε in (r - mean) / (std + ε)
	DynamicSampling             bool    `yaml:"dynamic_sampling" json:"dynamic_sampling"`                             // drop groups whose rewards are all equal (slime: --dynamic-sampling-filter-path check_reward_nonzero_std)
	EpsClip                     float64 `yaml:"eps_clip" json:"eps_clip"`                                             // PPO clip range below 1 (ε_low)
	EpsClipHigh                 float64 `yaml:"eps_clip_high" json:"eps_clip_high"`                                   // PPO clip range above 1 (ε_high)
	CalculatePerTokenLoss       bool    `yaml:"calculate_per_token_loss" json:"calculate_per_token_loss"`             // true: mean over all response tokens of the batch; false: mean of per-sequence means
	UseKLLoss                   bool    `yaml:"use_kl_loss" json:"use_kl_loss"`                                       // add a KL penalty against the frozen initial policy
	KLLossCoef                  float64 `yaml:"kl_loss_coef" json:"kl_loss_coef"`                                     // weight of the KL penalty
	KLLossType                  string  `yaml:"kl_loss_type" json:"kl_loss_type"`                                     // k1 or k3 (low_var_kl: k3 clamped to [-10, 10])
	EntropyCoef                 float64 `yaml:"entropy_coef" json:"entropy_coef"`                                     // weight of an entropy bonus (subtracted from the loss)

	// --- optimizer
	GlobalBatchSize int     `yaml:"global_batch_size" json:"global_batch_size"` // samples per optimizer step; a rollout of B×G samples gives B×G/global_batch_size steps
	MicroBatchSize  int     `yaml:"micro_batch_size" json:"micro_batch_size"`   // samples per forward/backward pass; gradients are summed over micro-batches (0: the global batch)
	LR              float64 `yaml:"lr" json:"lr"`                               // peak learning rate, after warmup
	LRDecayStyle    string  `yaml:"lr_decay_style" json:"lr_decay_style"`       // constant (the only schedule after warmup)
	LRWarmupIters   int     `yaml:"lr_warmup_iters" json:"lr_warmup_iters"`     // optimizer steps of linear warmup from 0
	WeightDecay     float64 `yaml:"weight_decay" json:"weight_decay"`           // AdamW decoupled weight decay
	AdamBeta1       float64 `yaml:"adam_beta1" json:"adam_beta1"`               // AdamW β1
	AdamBeta2       float64 `yaml:"adam_beta2" json:"adam_beta2"`               // AdamW β2
	AdamEps         float64 `yaml:"adam_eps" json:"adam_eps"`                   // AdamW ε
	ClipGrad        float64 `yaml:"clip_grad" json:"clip_grad"`                 // global gradient-norm clip (0: off)

	// --- supervised warm start (before GRPO; the demo uses it)
	SFTSteps             int     `yaml:"sft_steps" json:"sft_steps"`                           // optimizer steps on generated solution traces before GRPO (0: none)
	SFTBatchSize         int     `yaml:"sft_batch_size" json:"sft_batch_size"`                 // traces per warm-start step
	SFTLR                float64 `yaml:"sft_lr" json:"sft_lr"`                                 // warm-start learning rate
	SFTToolFraction      float64 `yaml:"sft_tool_fraction" json:"sft_tool_fraction"`           // share of the easy warm-start tasks (no two-digit operand) whose trace calls the tool; the others answer directly (tasks with a two-digit operand always call it)
	SFTUnprintedFraction float64 `yaml:"sft_unprinted_fraction" json:"sft_unprinted_fraction"` // share of the warm-start tool calls that evaluate the expression without print(): the tool shows "[no output]" and the trace answers from memory

	// --- evaluation
	EvalInterval          int     `yaml:"eval_interval" json:"eval_interval"`                         // evaluate every N rollouts (0: only at the start and the end)
	NSamplesPerEvalPrompt int     `yaml:"n_samples_per_eval_prompt" json:"n_samples_per_eval_prompt"` // completions per evaluation prompt (k of avg@k, pass@k)
	EvalMaxResponseLen    int     `yaml:"eval_max_response_len" json:"eval_max_response_len"`         // evaluation response budget in tokens
	EvalTemperature       float64 `yaml:"eval_temperature" json:"eval_temperature"`                   // evaluation sampling temperature (0: greedy)
	EvalTopP              float64 `yaml:"eval_top_p" json:"eval_top_p"`                               // evaluation nucleus threshold

	// --- run folder and checkpoints
	Save         string `yaml:"save" json:"save"`                   // run folder (config.json, train.jsonl, samples/, ckpt/, figures/)
	SaveInterval int    `yaml:"save_interval" json:"save_interval"` // checkpoint every N rollouts (0: only at the end)
	KeepCkpts    int    `yaml:"keep_ckpts" json:"keep_ckpts"`       // checkpoints kept in ckpt/ (older ones are removed; 0: all)
}

// Default returns the defaults: slime's where slime has the knob, and a small
// single-machine run otherwise. A recipe file only needs the keys it changes.
func Default() Config {
	return Config{
		DType:   "float32",
		Backend: "auto",
		Seed:    1,

		RolloutShuffle: true,
		ArithMaxDigits: 4,
		ArithOps:       "*+",

		NumRollout:            10,
		RolloutBatchSize:      8,
		NSamplesPerPrompt:     8,
		RolloutMaxPromptLen:   1024,
		RolloutMaxResponseLen: 1024,
		RolloutTemperature:    1,
		RolloutTopP:           1,

		MaxTurns:        16,
		OfferToolSpec:   true,
		ToolTimeout:     10,
		ToolConcurrency: 4,

		RMType: "math",

		AdvantageEstimator:    "grpo",
		AdvantageEps:          1e-6,
		EpsClip:               0.2,
		EpsClipHigh:           0.28,
		CalculatePerTokenLoss: true,
		KLLossType:            "k3",

		GlobalBatchSize: 64,
		LR:              1e-6,
		LRDecayStyle:    "constant",
		AdamBeta1:       0.9,
		AdamBeta2:       0.999,
		AdamEps:         1e-8,
		ClipGrad:        1,

		SFTBatchSize: 16,
		SFTLR:        1e-3,

		NSamplesPerEvalPrompt: 4,
		EvalMaxResponseLen:    1024,
		EvalTemperature:       1,
		EvalTopP:              1,

		Save: "results/runs/run",
	}
}

// Samples returns the number of samples of one rollout: prompts × group size.
func (c Config) Samples() int { return c.RolloutBatchSize * c.NSamplesPerPrompt }

// StepsPerRollout returns the optimizer steps taken on one rollout (before any
// dynamic-sampling filter): samples / global_batch_size.
func (c Config) StepsPerRollout() int { return c.Samples() / c.GlobalBatchSize }

// Validate reports the first knob with an impossible value, naming its key.
func (c Config) Validate() error {
	bad := func(key string, format string, args ...any) error {
		return fmt.Errorf("grpo: config %s: %s", key, fmt.Sprintf(format, args...))
	}
	switch {
	case c.HFCheckpoint == "" && c.TinyModel == "":
		return bad("hf_checkpoint", "empty (set it, or tiny_model for a random stand-in)")
	case c.TinyModel != "" && !validTinyModel(c.TinyModel):
		return bad("tiny_model", "%q is not one of %s", c.TinyModel, strings.Join(TinyModelNames(), ", "))
	case c.DType != "float32" && c.DType != "bfloat16":
		return bad("dtype", "%q is not float32 or bfloat16", c.DType)
	case c.Backend != "cpu" && c.Backend != "cuda" && c.Backend != "auto":
		return bad("backend", "%q is not cpu, cuda or auto", c.Backend)
	case c.PromptData == "":
		return bad("prompt_data", "empty")
	case c.ArithMaxDigits < 1 || c.ArithMaxDigits > 18:
		return bad("arith_max_digits", "%d is outside 1..18", c.ArithMaxDigits)
	case !slices.Contains(arith.Ops, c.ArithOps):
		return bad("arith_ops", "%q, want one of %q", c.ArithOps, arith.Ops)
	case c.NumRollout < 0:
		return bad("num_rollout", "%d is negative", c.NumRollout)
	case c.RolloutBatchSize < 1:
		return bad("rollout_batch_size", "%d, want at least 1", c.RolloutBatchSize)
	case c.NSamplesPerPrompt < 1:
		return bad("n_samples_per_prompt", "%d, want at least 1", c.NSamplesPerPrompt)
	case c.RolloutMaxPromptLen < 1:
		return bad("rollout_max_prompt_len", "%d, want at least 1", c.RolloutMaxPromptLen)
	case c.RolloutMaxResponseLen < 1:
		return bad("rollout_max_response_len", "%d, want at least 1", c.RolloutMaxResponseLen)
	case c.RolloutTemperature < 0:
		return bad("rollout_temperature", "%g is negative", c.RolloutTemperature)
	case c.RolloutTopP <= 0 || c.RolloutTopP > 1:
		return bad("rollout_top_p", "%g is outside (0, 1]", c.RolloutTopP)
	case c.RolloutTopK < 0:
		return bad("rollout_top_k", "%d is negative", c.RolloutTopK)
	case c.SamplingBatchSize < 0:
		return bad("sampling_batch_size", "%d is negative", c.SamplingBatchSize)
	case c.MaxTurns < 0:
		return bad("max_turns", "%d is negative", c.MaxTurns)
	case c.ToolTimeout <= 0:
		return bad("tool_timeout", "%g, want > 0 seconds", c.ToolTimeout)
	case c.ToolConcurrency < 1:
		return bad("tool_concurrency", "%d, want at least 1", c.ToolConcurrency)
	case scorer.Check(c.RMType) != nil:
		return bad("rm_type", "%v", scorer.Check(c.RMType))
	case c.AdvantageEstimator != "grpo":
		return bad("advantage_estimator", "%q is not grpo", c.AdvantageEstimator)
	case c.AdvantageEps < 0:
		return bad("advantage_eps", "%g is negative", c.AdvantageEps)
	case c.EpsClip < 0 || c.EpsClip >= 1:
		return bad("eps_clip", "%g is outside [0, 1)", c.EpsClip)
	case c.EpsClipHigh < 0:
		return bad("eps_clip_high", "%g is negative", c.EpsClipHigh)
	case c.KLLossType != "k1" && c.KLLossType != "k3" && c.KLLossType != "low_var_kl":
		return bad("kl_loss_type", "%q is not k1, k3 or low_var_kl", c.KLLossType)
	case c.KLLossCoef < 0:
		return bad("kl_loss_coef", "%g is negative", c.KLLossCoef)
	case c.GlobalBatchSize < 1:
		return bad("global_batch_size", "%d, want at least 1", c.GlobalBatchSize)
	case c.Samples()%c.GlobalBatchSize != 0:
		return bad("global_batch_size", "%d does not divide rollout_batch_size × n_samples_per_prompt = %d", c.GlobalBatchSize, c.Samples())
	case c.MicroBatchSize < 0 || (c.MicroBatchSize > 0 && c.GlobalBatchSize%c.MicroBatchSize != 0):
		return bad("micro_batch_size", "%d does not divide global_batch_size %d", c.MicroBatchSize, c.GlobalBatchSize)
	case c.LR < 0:
		return bad("lr", "%g is negative", c.LR)
	case c.LRDecayStyle != "constant":
		return bad("lr_decay_style", "%q is not constant", c.LRDecayStyle)
	case c.LRWarmupIters < 0:
		return bad("lr_warmup_iters", "%d is negative", c.LRWarmupIters)
	case c.WeightDecay < 0:
		return bad("weight_decay", "%g is negative", c.WeightDecay)
	case c.AdamBeta1 < 0 || c.AdamBeta1 >= 1:
		return bad("adam_beta1", "%g is outside [0, 1)", c.AdamBeta1)
	case c.AdamBeta2 < 0 || c.AdamBeta2 >= 1:
		return bad("adam_beta2", "%g is outside [0, 1)", c.AdamBeta2)
	case c.AdamEps <= 0:
		return bad("adam_eps", "%g, want > 0", c.AdamEps)
	case c.ClipGrad < 0:
		return bad("clip_grad", "%g is negative", c.ClipGrad)
	case c.SFTSteps < 0:
		return bad("sft_steps", "%d is negative", c.SFTSteps)
	case c.SFTSteps > 0 && c.SFTBatchSize < 1:
		return bad("sft_batch_size", "%d, want at least 1", c.SFTBatchSize)
	case c.SFTLR < 0:
		return bad("sft_lr", "%g is negative", c.SFTLR)
	case c.SFTToolFraction < 0 || c.SFTToolFraction > 1:
		return bad("sft_tool_fraction", "%g outside [0, 1]", c.SFTToolFraction)
	case c.SFTUnprintedFraction < 0 || c.SFTUnprintedFraction > 1:
		return bad("sft_unprinted_fraction", "%g outside [0, 1]", c.SFTUnprintedFraction)
	case c.EvalInterval < 0:
		return bad("eval_interval", "%d is negative", c.EvalInterval)
	case c.EvalMaxPrompts < 0:
		return bad("eval_max_prompts", "%d is negative", c.EvalMaxPrompts)
	case c.NSamplesPerEvalPrompt < 1:
		return bad("n_samples_per_eval_prompt", "%d, want at least 1", c.NSamplesPerEvalPrompt)
	case c.EvalMaxResponseLen < 1:
		return bad("eval_max_response_len", "%d, want at least 1", c.EvalMaxResponseLen)
	case c.EvalTemperature < 0:
		return bad("eval_temperature", "%g is negative", c.EvalTemperature)
	case c.EvalTopP <= 0 || c.EvalTopP > 1:
		return bad("eval_top_p", "%g is outside (0, 1]", c.EvalTopP)
	case c.Save == "":
		return bad("save", "empty")
	case c.SaveInterval < 0:
		return bad("save_interval", "%d is negative", c.SaveInterval)
	case c.KeepCkpts < 0:
		return bad("keep_ckpts", "%d is negative", c.KeepCkpts)
	}
	return nil
}

// LoadConfigFile reads a YAML recipe over base (usually Default()).
func LoadConfigFile(path string, base Config) (Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return base, fmt.Errorf("grpo: %w", err)
	}
	c, err := DecodeConfig(bytes.NewReader(data), path, base)
	if err != nil {
		return base, err
	}
	return c, nil
}

// DecodeConfig reads YAML from r over base. Only the keys present change; a key
// that is not a Config knob, or a value of the wrong type, is an error naming the
// file, line and key.
func DecodeConfig(r io.Reader, name string, base Config) (Config, error) {
	var root yaml.Node
	dec := yaml.NewDecoder(r)
	if err := dec.Decode(&root); err != nil {
		if errors.Is(err, io.EOF) {
			return base, nil
		}
		return base, fmt.Errorf("grpo: %s: %w", name, err)
	}
	if len(root.Content) == 0 {
		return base, nil
	}
	doc := root.Content[0]
	if doc.Kind != yaml.MappingNode {
		return base, fmt.Errorf("grpo: %s:%d: want a mapping of key: value", name, doc.Line)
	}
	fields := configFields()
	c := base
	v := reflect.ValueOf(&c).Elem()
	seen := map[string]int{}
	for i := 0; i+1 < len(doc.Content); i += 2 {
		k, val := doc.Content[i], doc.Content[i+1]
		idx, ok := fields[k.Value]
		if !ok {
			return base, fmt.Errorf("grpo: %s:%d: unknown key %q", name, k.Line, k.Value)
		}
		if prev, dup := seen[k.Value]; dup {
			return base, fmt.Errorf("grpo: %s:%d: key %q repeats line %d", name, k.Line, k.Value, prev)
		}
		seen[k.Value] = k.Line
		if val.Kind != yaml.ScalarNode {
			return base, fmt.Errorf("grpo: %s:%d: key %q: want a single value", name, val.Line, k.Value)
		}
		if val.Tag == "!!null" {
			return base, fmt.Errorf("grpo: %s:%d: key %q: no value", name, val.Line, k.Value)
		}
		f := v.Field(idx)
		if f.Kind() == reflect.String && val.Tag != "!!str" {
			return base, fmt.Errorf("grpo: %s:%d: key %q: want a string, got %s (quote it)", name, val.Line, k.Value, val.Value)
		}
		if err := val.Decode(f.Addr().Interface()); err != nil {
			return base, fmt.Errorf("grpo: %s:%d: key %q: want %s, got %q", name, val.Line, k.Value, kindName(f.Kind()), val.Value)
		}
	}
	return c, nil
}

// ConfigKeys returns the YAML key of every knob, in declaration order.
func ConfigKeys() []string {
	t := reflect.TypeOf(Config{})
	keys := make([]string, t.NumField())
	for i := range keys {
		keys[i] = yamlKey(t.Field(i))
	}
	return keys
}

func configFields() map[string]int {
	t := reflect.TypeOf(Config{})
	m := make(map[string]int, t.NumField())
	for i := 0; i < t.NumField(); i++ {
		m[yamlKey(t.Field(i))] = i
	}
	return m
}

func yamlKey(f reflect.StructField) string {
	k, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
	return k
}

func kindName(k reflect.Kind) string {
	switch k {
	case reflect.Int, reflect.Int64:
		return "an integer"
	case reflect.Float64:
		return "a number"
	case reflect.Bool:
		return "true or false"
	default:
		return k.String()
	}
}

// arithTasks returns the generated tasks the config asks for (prompt_data: arith).
func (c Config) arithTasks() ArithTasks {
	return ArithTasks{MaxDigits: c.ArithMaxDigits, Ops: c.ArithOps}
}
