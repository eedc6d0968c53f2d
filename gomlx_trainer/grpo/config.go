package grpo

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"reflect"
	"slices"
	"strings"
	"sync"

	"github.com/mathrl/mathrl/analysis/scorer"
	"github.com/mathrl/mathrl/configs"
	"github.com/mathrl/mathrl/data/arith"
	"github.com/mathrl/mathrl/gomlx_trainer/backend"
	"github.com/mathrl/mathrl/gomlx_trainer/engine"
	"github.com/mathrl/mathrl/gomlx_trainer/engine/inprocess"
	"github.com/mathrl/mathrl/gomlx_trainer/layout"
	"github.com/mathrl/mathrl/gomlx_trainer/qwen3"
	"github.com/mathrl/mathrl/internal/english"
	"gopkg.in/yaml.v3"
)

// Config holds every knob of a GRPO run, once. YAML files (configs/*.yaml) and
// the flags of `mathrl train` write into the same struct; the resolved struct is
// saved as config.json in the run folder and inside every checkpoint.
//
// A field's tags are all there is to say about it: yaml is its recipe key
// (slime's command-line flag, with '-' written '_', where slime has the knob),
// help its one-line description, and slime slime's equivalent. Knobs reads them;
// the flag help, the key table of configs/README.md and Validate's errors all
// come from there.
type Config struct {
	// --- policy model
	HFCheckpoint string `yaml:"hf_checkpoint" json:"hf_checkpoint" slime:"--hf-checkpoint" help:"folder of the initial policy in Hugging Face format (config.json, *.safetensors, tokenizer.json)"`
	TinyModel    string `yaml:"tiny_model" json:"tiny_model" help:"when set, replace the policy by a random Qwen3 of this built-in shape (tiny, tiny-4l, small, qwen3-0.6b, ...); standing in for hf_checkpoint, it makes mathrl train a smoke run (the recipe's sizes cut, each cut printed)"`
	Tokenizer    string `yaml:"tokenizer" json:"tokenizer" help:"tokenizer.json path, or bytes for the byte-level vocabulary; empty: the one in hf_checkpoint (bytes for a tiny_model whose vocabulary is under 1000)"`
	DType        string `yaml:"dtype" json:"dtype" help:"dtype of the policy's weights and compute: float32 or bfloat16"`
	Backend      string `yaml:"backend" json:"backend" help:"where the model runs: cpu (GoMLX's pure Go backend), xla-cpu (XLA's CPU compiler), cuda, or auto (cuda when a PJRT plugin and an NVIDIA driver are found, else xla-cpu when its plugin is installed, else cpu)"`
	NumDevices   int    `yaml:"num_devices" json:"num_devices" flag:"devices" slime:"--actor-num-gpus-per-node" help:"devices the learner's train step spreads over (flag --devices), one host's: GPUs with cuda, or the CPU devices XLA's CPU plugin opens with xla-cpu; more than 1 needs sharding data or fsdp and an XLA backend"`
	Sharding     string `yaml:"sharding" json:"sharding" help:"how the train step uses num_devices: replicate (one device), data (each micro-batch split over the devices on its batch axis, weights, gradients and AdamW moments replicated, XLA's SPMD partitioner reducing the gradients) or fsdp (also the weights, gradient accumulators and AdamW moments, each split along its largest axis, XLA gathering a weight where a layer needs it; every such axis must divide by num_devices)"`
	Seed         int64  `yaml:"seed" json:"seed" slime:"--seed" help:"seeds the prompt order, generated tasks, sampling and the tiny_model initialisation"`

	// --- data
	PromptData     string `yaml:"prompt_data" json:"prompt_data" slime:"--prompt-data" help:"training prompts: a dataset name (math_train, dapo_math_17k, ...), arith for generated arithmetic, or a JSONL file of {id, problem, answer}"`
	EvalPromptData string `yaml:"eval_prompt_data" json:"eval_prompt_data" slime:"--eval-prompt-data" help:"evaluation prompts, in the same forms; empty disables evaluation"`
	EvalMaxPrompts int    `yaml:"eval_max_prompts" json:"eval_max_prompts" help:"use only the first N evaluation prompts (0: all, or 64 generated tasks for arith)"`
	RolloutShuffle bool   `yaml:"rollout_shuffle" json:"rollout_shuffle" slime:"--rollout-shuffle" help:"shuffle the training prompts every epoch"`
	ArithMaxDigits int    `yaml:"arith_max_digits" json:"arith_max_digits" help:"largest operand length of the generated arithmetic tasks (prompt_data arith), 1 to 18"`
	ArithOps       string `yaml:"arith_ops" json:"arith_ops" help:"operations of the generated tasks: *+ (multiplication 3 times in 4, else addition), * or +"`

	// --- rollout
	NumRollout            int     `yaml:"num_rollout" json:"num_rollout" slime:"--num-rollout" help:"rollouts (sampling rounds) in the run, each followed by its optimizer steps"`
	RolloutBatchSize      int     `yaml:"rollout_batch_size" json:"rollout_batch_size" slime:"--rollout-batch-size" help:"prompts per rollout (B)"`
	NSamplesPerPrompt     int     `yaml:"n_samples_per_prompt" json:"n_samples_per_prompt" slime:"--n-samples-per-prompt" help:"completions per prompt: the group size G"`
	RolloutMaxPromptLen   int     `yaml:"rollout_max_prompt_len" json:"rollout_max_prompt_len" slime:"--rollout-max-prompt-len" help:"longest prompt in tokens; longer training prompts are skipped"`
	RolloutMaxResponseLen int     `yaml:"rollout_max_response_len" json:"rollout_max_response_len" slime:"--rollout-max-response-len" help:"response budget in tokens, tool responses included"`
	RolloutTemperature    float64 `yaml:"rollout_temperature" json:"rollout_temperature" slime:"--rollout-temperature" help:"sampling temperature of the rollouts; the learner computes log-probabilities at it too"`
	RolloutTopP           float64 `yaml:"rollout_top_p" json:"rollout_top_p" slime:"--rollout-top-p" help:"nucleus sampling threshold (1: off)"`
	RolloutTopK           int     `yaml:"rollout_top_k" json:"rollout_top_k" slime:"--rollout-top-k" help:"top-k sampling (0: off)"`
	SamplingBatchSize     int     `yaml:"sampling_batch_size" json:"sampling_batch_size" help:"sequences generated at once, in rollouts and evaluation (0: a whole rollout); bounds the KV cache on a GPU"`

	// --- where rollouts are sampled (package engine)
	RolloutEngine      string   `yaml:"rollout_engine" json:"rollout_engine" help:"what samples the rollouts and evaluations: builtin (the in-process sampler), sglang (servers speaking SGLang's POST /generate) or openai (servers speaking POST /v1/completions with token ids, as vLLM serves it)"`
	RolloutEngineURLs  []string `yaml:"rollout_engine_urls" json:"rollout_engine_urls" help:"with rollout_engine sglang or openai: the base URLs of a router, a server or several servers (requests go round them in turn)"`
	RolloutEngineBatch int      `yaml:"rollout_engine_batch" json:"rollout_engine_batch" help:"with rollout_engine sglang: 0 sends each sequence in its own request (as slime does, so a router spreads them); N sends up to N in one request, which a mathrl serve worker samples as a batch of its own, with the in-process sampler's numbers bit for bit"`
	WeightsDir         string   `yaml:"weights_dir" json:"weights_dir" help:"with rollout_engine sglang or openai: where the trainer writes the policy for the servers to load after each update (one folder per version, the newest two kept; empty: the run folder's weights/); the servers must see the same path"`
	AsyncRollouts      bool     `yaml:"async_rollouts" json:"async_rollouts,omitempty" slime:"train_async.py" help:"one-step off-policy rollouts: sample the next rollout with the weights as they are while the trainer optimizes on this one, so every rollout after the first comes from weights one rollout's updates old (train.jsonl: rollout_staleness); get_mismatch_metrics measures the gap and use_tis corrects for it. The builtin engine samples from its own copy of the weights, on one device"`
	// The servers' key: json "-" keeps it out of config.json and checkpoints.
	RolloutEngineAPIKey string `yaml:"rollout_engine_api_key" json:"-" help:"with rollout_engine sglang or openai: the key sent to the servers (or their router) with every request as Authorization: Bearer, their --api-key (empty: the environment variable MATHRL_ROLLOUT_API_KEY, which keeps it out of recipes and command lines); never written to config.json, a checkpoint or the log"`

	// --- tools
	UseTools        bool    `yaml:"use_tools" json:"use_tools" help:"let the policy call the code_interpreter tool and run its calls in the sandbox"`
	MaxTurns        int     `yaml:"max_turns" json:"max_turns" slime:"TOOL_CONFIGS['max_tool_calls']" help:"tool calls allowed per sample; the next call ends it with finish reason tool-limit"`
	ToolTimeout     float64 `yaml:"tool_timeout" json:"tool_timeout" slime:"TOOL_CONFIGS['python_timeout']" help:"CPU seconds per tool call, rounded up (RLIMIT_CPU: the limit that decides, the same under load); a call that waits instead is killed after 10 times as long in wall time, at least 30 s"`
	ToolConcurrency int     `yaml:"tool_concurrency" json:"tool_concurrency" slime:"TOOL_CONFIGS['tool_concurrency']" help:"tool calls run at once"`
	SystemPrompt    string  `yaml:"system_prompt" json:"system_prompt" help:"system message; empty: the built-in math prompt when the tool spec is offered, else none"`
	OfferToolSpec   bool    `yaml:"offer_tool_spec" json:"offer_tool_spec" help:"with use_tools, list the code_interpreter spec in the system turn (the template's # Tools block); the CPU demo leaves it out to keep prompts short"`

	// --- reward
	RMType string `yaml:"rm_type" json:"rm_type" slime:"--rm-type" help:"reward: math (0/1), dapo (±1), deepscaler (0/1), verify (0/1, mathrl's verifier), retool (slime's retool reward: ±1 on the last boxed answer, a bonus for tool calls on wrong answers)"`

	// --- advantages and loss
	AdvantageEstimator          string  `yaml:"advantage_estimator" json:"advantage_estimator" slime:"--advantage-estimator" help:"grpo: group-normalised rewards; gspo: grpo's advantages with one importance ratio per sequence (the geometric mean of its tokens') clipped at gspo_eps_clip(_high); rloo: r minus the mean of the group's other rewards (not in slime); reinforce_plus_plus_baseline: r minus the group mean, then whitened over the batch's tokens; flowrl: FlowRL's flow-balance loss instead of PPO-clip, the squared residual log Z + mean log π − flowrl_beta·r̂ − mean log π_ref of each sequence (r̂ grpo's advantage, π_ref the frozen initial policy), weighted by its sequence ratio π/π_old clipped at eps_clip(_high) and averaged over sequences (calculate_per_token_loss does not apply)"`
	DisableGRPOStdNormalization bool    `yaml:"disable_grpo_std_normalization" json:"disable_grpo_std_normalization" slime:"--disable-grpo-std-normalization" help:"Dr.GRPO: advantages r - mean, without dividing by the group std"`
	AdvantageEps                float64 `yaml:"advantage_eps" json:"advantage_eps" help:"ε in (r - mean) / (std + ε)"`
	DynamicSampling             bool    `yaml:"dynamic_sampling" json:"dynamic_sampling" slime:"--dynamic-sampling-filter-path check_reward_nonzero_std" help:"drop the groups whose rewards are all equal (their advantages are all 0)"`
	DynamicSamplingMaxDraws     int     `yaml:"dynamic_sampling_max_draws" json:"dynamic_sampling_max_draws,omitempty" help:"with dynamic_sampling: draw up to this many further batches of over_sampling_batch_size prompts while fewer than rollout_batch_size groups are kept, then keep the first rollout_batch_size (0: drop only, no further draws)"`
	OverSamplingBatchSize       int     `yaml:"over_sampling_batch_size" json:"over_sampling_batch_size,omitempty" slime:"--over-sampling-batch-size" help:"prompts per further draw of dynamic sampling (0: rollout_batch_size)"`
	EpsClip                     float64 `yaml:"eps_clip" json:"eps_clip" slime:"--eps-clip" help:"PPO clip range below 1 (ε_low)"`
	EpsClipHigh                 float64 `yaml:"eps_clip_high" json:"eps_clip_high" slime:"--eps-clip-high" help:"PPO clip range above 1 (ε_high)"`
	GSPOEpsClip                 float64 `yaml:"gspo_eps_clip" json:"gspo_eps_clip" help:"GSPO's clip range below 1 for the sequence ratio (slime reuses --eps-clip; mathrl keeps GSPO's range apart so that switching estimator never clips a sequence ratio at a token range)"`
	GSPOEpsClipHigh             float64 `yaml:"gspo_eps_clip_high" json:"gspo_eps_clip_high" help:"GSPO's clip range above 1 for the sequence ratio"`
	CalculatePerTokenLoss       bool    `yaml:"calculate_per_token_loss" json:"calculate_per_token_loss" slime:"--calculate-per-token-loss" help:"true: mean over all response tokens of an optimizer step; false: mean of per-sequence means (advantage_estimator flowrl: always the mean over sequences)"`
	UseKLLoss                   bool    `yaml:"use_kl_loss" json:"use_kl_loss" slime:"--use-kl-loss" help:"add a KL penalty against the frozen initial policy"`
	KLLossCoef                  float64 `yaml:"kl_loss_coef" json:"kl_loss_coef" slime:"--kl-loss-coef" help:"weight of the KL penalty (with use_kl_loss)"`
	KLLossType                  string  `yaml:"kl_loss_type" json:"kl_loss_type" slime:"--kl-loss-type" help:"KL estimator: k1 (logp − ref), k2 ((logp − ref)²/2), k3, or low_var_kl (k3 clamped to [-10, 10])"`
	FlowRLBeta                  float64 `yaml:"flowrl_beta" json:"flowrl_beta" help:"with advantage_estimator flowrl: β, the inverse temperature of the target distribution ∝ π_ref·exp(β·r̂) (FlowRL's 15)"`
	FlowRLLogZ                  string  `yaml:"flowrl_log_z" json:"flowrl_log_z" help:"with advantage_estimator flowrl, how log Z(x) is estimated: vargrad (each prompt's log Z is the mean over its group of log π_ref − log π + β·r̂, length-normalised, at the old policy: the loss is the group's variance of the residual) or head (FlowRL's learned log Z: an MLP of flowrl_head_layers blocks on the mean of the policy's last hidden state over the prompt, trained by the same loss with the policy's AdamW; not with optimizer_cpu_offload or sharding fsdp)"`
	FlowRLHeadLayers            int     `yaml:"flowrl_head_layers" json:"flowrl_head_layers" help:"with flowrl_log_z head: the head's blocks, FlowRL's num_layers: (n − 1) × [Linear(h, h), GELU, LayerNorm(h)], then Linear(h, 1)"`
	EntropyCoef                 float64 `yaml:"entropy_coef" json:"entropy_coef" slime:"--entropy-coef" help:"weight of an entropy bonus (subtracted from the loss)"`

	// --- sampler/trainer mismatch and length shaping
	UseRolloutLogprobs    bool    `yaml:"use_rollout_logprobs" json:"use_rollout_logprobs,omitempty" slime:"--use-rollout-logprobs" help:"take the PPO ratio (and GSPO's sequence ratio) against the sampler's log-probs; false: before each rollout's first update the trainer recomputes the response tokens' log-probs with the training graph, in the micro-batches of the steps that train on them, and takes the ratio against those, as slime does (the rollout's first step, on the same weights, against its own forward's: every ratio exactly 1). Under async_rollouts the recomputation uses the weights as they are then, one rollout's updates past the sampler's, as slime's train_async.py does: the first step's ratio is still 1, and use_tis weighs the gap"`
	GetMismatchMetrics    bool    `yaml:"get_mismatch_metrics" json:"get_mismatch_metrics,omitempty" slime:"--get-mismatch-metrics" help:"before each rollout's first update, recompute the response tokens' log-probs with the training graph and log the mean and max |log π_train − log π_rollout| (train_rollout_logprob_abs_diff)"`
	UseTIS                bool    `yaml:"use_tis" json:"use_tis,omitempty" slime:"--use-tis" help:"truncated importance sampling: the policy loss of each token is weighted by clamp(π_train/π_rollout, tis_clip_low, tis_clip), π_train the training graph's log-probs recomputed before the rollout's first update and π_rollout the sampler's (use_rollout_logprobs says which of the two the PPO ratio is taken against)"`
	TISClip               float64 `yaml:"tis_clip" json:"tis_clip" slime:"--tis-clip" help:"upper clamp C of the importance weights"`
	TISClipLow            float64 `yaml:"tis_clip_low" json:"tis_clip_low,omitempty" slime:"--tis-clip-low" help:"lower clamp of the importance weights"`
	TISSeqMaskLow         float64 `yaml:"tis_seq_mask_low" json:"tis_seq_mask_low,omitempty" help:"with tis_seq_mask_high: leave out of the loss every sequence whose ratio π_train/π_rollout (the geometric mean over its tokens) is below this"`
	TISSeqMaskHigh        float64 `yaml:"tis_seq_mask_high" json:"tis_seq_mask_high,omitempty" help:"leave out of the loss every sequence whose geometric-mean ratio π_train/π_rollout is above this (0: no sequence mask)"`
	OverlongBufferLen     int     `yaml:"overlong_buffer_len" json:"overlong_buffer_len,omitempty" help:"DAPO's soft overlong punishment: a response longer than rollout_max_response_len − this many tokens gets a reward penalty rising linearly to overlong_penalty_factor at the limit (0: off)"`
	OverlongPenaltyFactor float64 `yaml:"overlong_penalty_factor" json:"overlong_penalty_factor" help:"the overlong penalty at rollout_max_response_len"`
	MaskTruncated         bool    `yaml:"mask_truncated" json:"mask_truncated,omitempty" help:"DAPO's overlong filtering: responses cut at rollout_max_response_len are left out of the loss (their rewards still count in the group's advantages)"`

	// --- on-policy distillation (a teacher scores the student's own samples; docs/algorithms.md)
	Teacher            string   `yaml:"teacher" json:"teacher,omitempty" slime:"--opd-teacher-load" help:"folder of a teacher in Hugging Face format sharing the policy's tokenizer (vocabulary and special ids): each sampled token gets the per-token advantage distill_coef·(log π_teacher − log π_student) on top of distill_outcome_coef times the group advantage (empty: no distillation)"`
	TeacherEngine      string   `yaml:"teacher_engine" json:"teacher_engine,omitempty" slime:"--opd-type" help:"what computes the teacher's log-probs: builtin (the teacher loaded in process from teacher, beside the policy, at the rollout temperature) or sglang (servers of teacher_urls answering SGLang's POST /generate with max_new_tokens 0 and return_logprob, as mathrl serve does; teacher then only supplies the tokenizer check)"`
	TeacherURLs        []string `yaml:"teacher_urls" json:"teacher_urls,omitempty" help:"with teacher_engine sglang: the base URLs of the servers (or router) serving the teacher; requests go round them in turn"`
	DistillCoef        float64  `yaml:"distill_coef" json:"distill_coef" slime:"--opd-kl-coef" help:"with teacher: weight of the per-token distillation advantage log π_teacher − log π_student (the negative reverse-KL estimate at the sampled token)"`
	DistillMode        string   `yaml:"distill_mode" json:"distill_mode,omitempty" help:"with teacher: on_policy (the student samples, the teacher scores its tokens) or sft (the teacher, in process, samples the rollouts and the student takes its optimizer steps on the negative log-likelihood of the correct ones, rejection-sampled fine-tuning; the advantages and distill_coef do not apply)"`
	DistillOutcomeCoef float64  `yaml:"distill_outcome_coef" json:"distill_outcome_coef" help:"with teacher: weight of the outcome (group) advantage beside the distillation one (0: pure distillation, the rewards only logged; 1: slime's OPD, the KL term added to the estimator's advantage)"`

	// --- implicit process rewards (PRIME; docs/algorithms.md)
	ProcessReward string  `yaml:"process_reward" json:"process_reward,omitempty" help:"none, or implicit: PRIME's implicit process rewards. An implicit PRM, a copy of the initial policy with its own AdamW state, gives each sampled token prm_beta·(log π_PRM − log π_ref), and learns from the outcome labels (reward > 0) by cross-entropy on σ of their sum, one step per optimizer step's samples before the policy's; each token's advantage is the leave-one-out return of the process rewards (times prm_coef) plus the leave-one-out outcome reward (tool responses get none). Not with flowrl, a teacher, optimizer_cpu_offload or num_devices > 1"`
	PRMBeta       float64 `yaml:"prm_beta" json:"prm_beta" help:"with process_reward implicit: β of the implicit rewards β·(log π_PRM − log π_ref) (PRIME's 0.05)"`
	PRMCoef       float64 `yaml:"prm_coef" json:"prm_coef" help:"with process_reward implicit: weight of the process return beside the outcome advantage (1: PRIME's equal weights)"`
	PRMLR         float64 `yaml:"prm_lr" json:"prm_lr,omitempty" help:"with process_reward implicit: the PRM's learning rate, constant (0: learning_rate)"`

	// --- optimizer
	GlobalBatchSize        int     `yaml:"global_batch_size" json:"global_batch_size" slime:"--global-batch-size" help:"samples per optimizer step; a rollout of B×G samples gives B×G/global_batch_size steps"`
	MicroBatchSize         int     `yaml:"micro_batch_size" json:"micro_batch_size" slime:"--micro-batch-size" help:"samples per forward/backward pass, in GRPO and the warm start; gradients are summed over micro-batches (0: the whole batch)"`
	MaxTokensPerMicroBatch int     `yaml:"max_tokens_per_micro_batch" json:"max_tokens_per_micro_batch,omitempty" slime:"--use-dynamic-batch-size --max-tokens-per-gpu" help:"when positive, GRPO micro-batches are packed by length instead of micro_batch_size: longest sequences first, each micro-batch at most this many padded tokens (rows × padded length), a longer sequence alone (0: off)"`
	LogProbChunk           int     `yaml:"logprob_chunk" json:"logprob_chunk,omitempty" help:"positions per chunk of the language-model head and log-softmax in training, so that no [batch, tokens, vocabulary] logits exist (0: the whole sequence at once)"`
	RecomputeLayers        bool    `yaml:"recompute_layers" json:"recompute_layers,omitempty" slime:"--recompute-granularity full --recompute-method uniform" help:"recompute each decoder layer in the backward pass instead of keeping its activations: less memory, about one more forward pass of time"`
	LR                     float64 `yaml:"lr" json:"lr" slime:"--lr" help:"peak learning rate, after warmup"`
	LRDecayStyle           string  `yaml:"lr_decay_style" json:"lr_decay_style" slime:"--lr-decay-style" help:"constant (the only schedule after warmup)"`
	LRWarmupIters          int     `yaml:"lr_warmup_iters" json:"lr_warmup_iters" slime:"--lr-warmup-iters" help:"optimizer steps of linear warmup up to lr (0: none)"`
	WeightDecay            float64 `yaml:"weight_decay" json:"weight_decay" slime:"--weight-decay" help:"AdamW decoupled weight decay"`
	AdamBeta1              float64 `yaml:"adam_beta1" json:"adam_beta1" slime:"--adam-beta1" help:"AdamW β1"`
	AdamBeta2              float64 `yaml:"adam_beta2" json:"adam_beta2" slime:"--adam-beta2" help:"AdamW β2"`
	AdamEps                float64 `yaml:"adam_eps" json:"adam_eps" slime:"--adam-eps" help:"AdamW ε"`
	ClipGrad               float64 `yaml:"clip_grad" json:"clip_grad" slime:"--clip-grad" help:"global gradient-norm clip (0: off)"`

	// --- optimizer precision (Megatron's precision-aware optimizer; see docs/precision-and-memory.md)
	UsePrecisionAwareOptimizer bool    `yaml:"use_precision_aware_optimizer" json:"use_precision_aware_optimizer" slime:"--use-precision-aware-optimizer" help:"keep the optimizer state in the dtypes main_params_dtype, main_grads_dtype, exp_avg_dtype and exp_avg_sq_dtype give (the arithmetic stays float32); off: all of it float32, with a float32 copy of each 16-bit weight"`
	MainParamsDType            string  `yaml:"main_params_dtype" json:"main_params_dtype" slime:"--main-params-dtype" help:"with use_precision_aware_optimizer and bfloat16 weights, the master value of each weight: float32 (exact: the weight's 16 low bits with store_param_remainders, else a float32 copy) or bfloat16 (the weight is its own master: each update rounded to nearest, or at random with stochastic_rounding, so updates under half an ulp are lost or only kept on average)"`
	StoreParamRemainders       bool    `yaml:"store_param_remainders" json:"store_param_remainders" slime:"--store-param-remainders" help:"with use_precision_aware_optimizer, main_params_dtype float32 and bfloat16 weights: keep only the 16 low bits of each float32 master (2 bytes per parameter; the bfloat16 weight holds the rest), not a float32 copy (4 bytes); refused where that update runs on CUDA (its remainders were found lost there, docs/gpu.md)"`
	StochasticRounding         bool    `yaml:"stochastic_rounding" json:"stochastic_rounding,omitempty" help:"with main_params_dtype bfloat16: round each updated weight to a bfloat16 neighbour at random, unbiased (no master memory; not exact), instead of to nearest"`
	MainGradsDType             string  `yaml:"main_grads_dtype" json:"main_grads_dtype" slime:"--main-grads-dtype" help:"with use_precision_aware_optimizer, the dtype of the gradient accumulators: float32 or bfloat16 (each micro-batch's sum is float32, then stored)"`
	ExpAvgDType                string  `yaml:"exp_avg_dtype" json:"exp_avg_dtype" slime:"--exp-avg-dtype" help:"with use_precision_aware_optimizer, the dtype AdamW's first moment is stored in: float32 or bfloat16"`
	ExpAvgSqDType              string  `yaml:"exp_avg_sq_dtype" json:"exp_avg_sq_dtype" slime:"--exp-avg-sq-dtype" help:"with use_precision_aware_optimizer, the dtype AdamW's second moment is stored in: float32 or bfloat16"`
	OptimizerCPUOffload        bool    `yaml:"optimizer_cpu_offload" json:"optimizer_cpu_offload,omitempty" slime:"--optimizer-cpu-offload" help:"keep the master values and AdamW moments of optimizer_offload_fraction of the weights in host memory and run their update on the host CPU (XLA's CPU compiler where its plugin is installed, else the pure Go backend): only their gradients go down to the host and the new weights come back; one device"`
	OptimizerOffloadFraction   float64 `yaml:"optimizer_offload_fraction" json:"optimizer_offload_fraction" slime:"--optimizer-offload-fraction" help:"with optimizer_cpu_offload, the share of the parameters (weights in the model's order, by count) whose optimizer runs on the host"`
	OffloadTrain               bool    `yaml:"offload_train" json:"offload_train" slime:"--offload-train" help:"move the optimizer state (gradient accumulators, AdamW moments, master values) to host memory while the trainer samples (rollouts and evaluation), so the key/value cache gets that memory; the next step brings it back (one device; not with async_rollouts, whose sampling overlaps the steps)"`

	// --- supervised warm start (before GRPO; the demo uses it)
	SFTSteps             int     `yaml:"sft_steps" json:"sft_steps" help:"optimizer steps on generated solution traces before GRPO (0: none); needs prompt_data arith"`
	SFTBatchSize         int     `yaml:"sft_batch_size" json:"sft_batch_size" help:"traces per warm-start step"`
	SFTLR                float64 `yaml:"sft_lr" json:"sft_lr" help:"warm-start learning rate (constant, no warmup)"`
	SFTToolFraction      float64 `yaml:"sft_tool_fraction" json:"sft_tool_fraction" help:"share of the easy warm-start tasks (no two-digit operand) whose trace calls the tool; the others answer directly (tasks with a two-digit operand always call it)"`
	SFTUnprintedFraction float64 `yaml:"sft_unprinted_fraction" json:"sft_unprinted_fraction" help:"share of the warm-start tool calls that evaluate the expression without print(): the tool shows [no output] and the trace answers from memory"`

	// --- evaluation
	EvalInterval          int     `yaml:"eval_interval" json:"eval_interval" slime:"--eval-interval" help:"evaluate every N rollouts (0: only at the start and the end)"`
	NSamplesPerEvalPrompt int     `yaml:"n_samples_per_eval_prompt" json:"n_samples_per_eval_prompt" slime:"--n-samples-per-eval-prompt" help:"completions per evaluation prompt (k of avg@k, pass@k)"`
	EvalMaxResponseLen    int     `yaml:"eval_max_response_len" json:"eval_max_response_len" slime:"--eval-max-response-len" help:"evaluation response budget in tokens"`
	EvalTemperature       float64 `yaml:"eval_temperature" json:"eval_temperature" slime:"--eval-temperature" help:"evaluation sampling temperature (0: greedy)"`
	EvalTopP              float64 `yaml:"eval_top_p" json:"eval_top_p" slime:"--eval-top-p" help:"evaluation nucleus sampling threshold (1: off)"`

	// --- run folder and checkpoints
	Save               string `yaml:"save" json:"save" slime:"--save" help:"run folder (config.json, train.jsonl, samples/, rollouts/, ckpt/, figures/)"`
	SaveInterval       int    `yaml:"save_interval" json:"save_interval" slime:"--save-interval" help:"checkpoint every N rollouts (0: only at the end)"`
	KeepCkpts          int    `yaml:"keep_ckpts" json:"keep_ckpts" help:"checkpoints kept in ckpt/, the newest (0: all)"`
	SaveRolloutsEvery  int    `yaml:"save_rollouts_every" json:"save_rollouts_every" help:"record the training rollouts token by token (ids, text, loss mask, old log-probs, advantage, reward, verdict) in rollouts/step-NNNNNN.jsonl every N rollouts, the first and the last included, for mathrl show rollout (0: never)"`
	SaveRolloutsGroups int    `yaml:"save_rollouts_groups" json:"save_rollouts_groups" help:"prompt groups recorded per recorded rollout, the first ones drawn (0: all)"`
}

// Default returns the defaults: slime's where slime has the knob, and a small
// single-machine run otherwise. A recipe file only needs the keys it changes.
func Default() Config {
	return Config{
		DType:      "float32",
		Backend:    "auto",
		NumDevices: 1,
		Sharding:   layout.Replicate,
		Seed:       1,

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
		RolloutEngine:         inprocess.Name,

		MaxTurns:        16,
		OfferToolSpec:   true,
		ToolTimeout:     10,
		ToolConcurrency: 4,

		RMType: "math",

		AdvantageEstimator:    "grpo",
		AdvantageEps:          1e-6,
		EpsClip:               0.2,
		EpsClipHigh:           0.28,
		GSPOEpsClip:           3e-4,
		GSPOEpsClipHigh:       4e-4,
		TISClip:               2,
		OverlongPenaltyFactor: 1,
		CalculatePerTokenLoss: true,
		TeacherEngine:         inprocess.Name,
		DistillCoef:           1,
		DistillMode:           "on_policy",
		KLLossType:            "k3",
		ProcessReward:         "none",
		PRMBeta:               0.05,
		PRMCoef:               1,
		FlowRLBeta:            15,
		FlowRLLogZ:            "vargrad",
		FlowRLHeadLayers:      3,

		GlobalBatchSize: 64,
		LR:              1e-6,
		LRDecayStyle:    "constant",
		AdamBeta1:       0.9,
		AdamBeta2:       0.999,
		AdamEps:         1e-8,
		ClipGrad:        1,

		MainParamsDType:      "float32",
		StoreParamRemainders: true,
		MainGradsDType:       "float32",
		ExpAvgDType:          "float32",
		ExpAvgSqDType:        "float32",

		OptimizerOffloadFraction: 1,
		OffloadTrain:             true,

		SFTBatchSize: 16,
		SFTLR:        1e-3,

		NSamplesPerEvalPrompt: 4,
		EvalMaxResponseLen:    1024,
		EvalTemperature:       1,
		EvalTopP:              1,

		Save:               "runs/run",
		SaveRolloutsEvery:  10,
		SaveRolloutsGroups: 4,
	}
}

// Samples returns the number of samples of one rollout: prompts × group size.
func (c Config) Samples() int { return c.RolloutBatchSize * c.NSamplesPerPrompt }

// StepsPerRollout returns the optimizer steps taken on one rollout (before any
// dynamic-sampling filter): samples / global_batch_size.
func (c Config) StepsPerRollout() int { return c.Samples() / c.GlobalBatchSize }

// Validate reports the first knob with an impossible value, naming its key.
// The error ends with the knob's description unless it lists the allowed
// values.
func (c Config) Validate() error {
	checks := []func() error{c.validateFinite, c.validatePolicyData, c.validateRollout, c.validateLoss, c.validateDistill, c.validateOptimizer,
		c.validateDevices, c.validateRun}
	for _, check := range checks {
		if err := check(); err != nil {
			return err
		}
	}
	return nil
}

// validateFinite refuses a NaN or infinite number knob, which every range
// check below would let through.
func (c Config) validateFinite() error {
	for _, k := range Knobs() {
		if f, ok := k.Ptr(&c).(*float64); ok && (math.IsNaN(*f) || math.IsInf(*f, 0)) {
			return bad(k.Key, "%g, want a finite number", *f)
		}
	}
	return nil
}

func (c Config) validatePolicyData() error {
	layoutErr := c.validateLayout()
	switch {
	case c.HFCheckpoint == "" && c.TinyModel == "":
		return bad("hf_checkpoint", "empty (set it, or tiny_model for a random stand-in)")
	case c.TinyModel != "" && !validTinyModel(c.TinyModel):
		return notOneOf("tiny_model", c.TinyModel, TinyModelNames()...)
	case !validDType(c.DType):
		return notOneOf("dtype", c.DType, "float32", "bfloat16")
	case !slices.Contains([]string{backend.CPU, backend.XLACPU, backend.CUDA, backend.Auto}, c.Backend):
		return notOneOf("backend", c.Backend, backend.CPU, backend.XLACPU, backend.CUDA, backend.Auto)
	case c.NumDevices < 1:
		return bad("num_devices", "%d, want at least 1", c.NumDevices)
	case layoutErr != nil:
		return layoutErr
	case c.PromptData == "":
		return bad("prompt_data", "empty")
	case c.EvalMaxPrompts < 0:
		return bad("eval_max_prompts", "%d is negative", c.EvalMaxPrompts)
	case c.ArithMaxDigits < 1 || c.ArithMaxDigits > 18:
		return bad("arith_max_digits", "%d is outside 1..18", c.ArithMaxDigits)
	case !slices.Contains(arith.Ops, c.ArithOps):
		return notOneOf("arith_ops", c.ArithOps, arith.Ops...)
	}
	return nil
}

// configNames name the knobs in the errors of the layout checks.
var configNames = layout.Names{Prefix: "grpo: config", Devices: "num_devices", Sharding: "sharding"}

// validateLayout checks sharding and num_devices against each other and
// the backend (the pure Go backend has one device).
func (c Config) validateLayout() error {
	var shards, one error
	if c.Backend == backend.CPU {
		const on, fix = "on backend cpu", "backend xla-cpu or cuda"
		shards = layout.CheckShardsHeld(configNames, c.Sharding, on, fix)
		one = layout.CheckOneDevice(configNames, c.NumDevices, on, fix)
	}
	return cmp.Or(layout.CheckMode(configNames, c.Sharding), shards, layout.CheckSpread(configNames, c.Sharding, c.NumDevices), one)
}

func (c Config) validateRollout() error {
	switch {
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
	}
	var fe *engine.FieldError
	if err := engine.Check(c.engineConfig()); errors.As(err, &fe) {
		return bad(fe.Key, "%s", fe.Msg)
	} else if err != nil {
		return fmt.Errorf("grpo: config: %w", err)
	}
	return nil
}

// engineConfig is what the config says about the rollout engine.
func (c Config) engineConfig() engine.Config {
	return engine.Config{Name: c.RolloutEngine, URLs: slices.Clone(c.RolloutEngineURLs), Batch: c.RolloutEngineBatch,
		WeightsDir: c.WeightsDir, Async: c.AsyncRollouts, Devices: c.NumDevices, APIKey: c.RolloutEngineAPIKey}
}

func (c Config) validateLoss() error {
	switch {
	case !slices.Contains(AdvantageEstimators(), c.AdvantageEstimator):
		return notOneOf("advantage_estimator", c.AdvantageEstimator, AdvantageEstimators()...)
	case c.GSPOEpsClip < 0 || c.GSPOEpsClip >= 1:
		return bad("gspo_eps_clip", "%g is outside [0, 1)", c.GSPOEpsClip)
	case c.GSPOEpsClipHigh < 0:
		return bad("gspo_eps_clip_high", "%g is negative", c.GSPOEpsClipHigh)
	case c.DynamicSamplingMaxDraws < 0:
		return bad("dynamic_sampling_max_draws", "%d is negative", c.DynamicSamplingMaxDraws)
	case c.OverSamplingBatchSize < 0:
		return bad("over_sampling_batch_size", "%d is negative", c.OverSamplingBatchSize)
	case c.AdvantageEps < 0:
		return bad("advantage_eps", "%g is negative", c.AdvantageEps)
	case c.EpsClip < 0 || c.EpsClip >= 1:
		return bad("eps_clip", "%g is outside [0, 1)", c.EpsClip)
	case c.EpsClipHigh < 0:
		return bad("eps_clip_high", "%g is negative", c.EpsClipHigh)
	case !slices.Contains([]string{"k1", "k2", "k3", "low_var_kl"}, c.KLLossType):
		return notOneOf("kl_loss_type", c.KLLossType, "k1", "k2", "k3", "low_var_kl")
	case c.KLLossCoef < 0:
		return bad("kl_loss_coef", "%g is negative", c.KLLossCoef)
	}
	if err := c.validateFlowRL(); err != nil {
		return err
	}
	if err := c.ValidateProcessReward(); err != nil {
		return err
	}
	return c.validateShaping()
}

// flowRLHead reports whether the recipe trains FlowRL's learned log Z head.
func (c Config) flowRLHead() bool { return c.AdvantageEstimator == "flowrl" && c.FlowRLLogZ == "head" }

// FlowRLLogZEstimators lists the flowrl_log_z values.
func FlowRLLogZEstimators() []string { return []string{"vargrad", "head"} }

// validateFlowRL checks the flowrl knobs, and with advantage_estimator
// flowrl refuses what its loss does not add: the KL penalty and the entropy
// bonus (its residual already holds log π_ref) and truncated importance
// sampling (its sequence ratio is the only importance weight).
func (c Config) validateFlowRL() error {
	switch {
	case c.FlowRLBeta <= 0:
		return bad("flowrl_beta", "%g, want > 0", c.FlowRLBeta)
	case !slices.Contains(FlowRLLogZEstimators(), c.FlowRLLogZ):
		return notOneOf("flowrl_log_z", c.FlowRLLogZ, FlowRLLogZEstimators()...)
	case c.FlowRLHeadLayers < 1:
		return bad("flowrl_head_layers", "%d, want at least 1", c.FlowRLHeadLayers)
	case c.AdvantageEstimator != "flowrl":
		return nil
	case c.flowRLHead() && c.OptimizerCPUOffload:
		return bad("flowrl_log_z", "head: not with optimizer_cpu_offload yet (its host update is not built for the head's variables); use vargrad or turn the offload off")
	case c.flowRLHead() && c.NumDevices > 1 && c.Sharding == layout.FSDP:
		return bad("flowrl_log_z", "head: not with sharding fsdp yet (the head's variables are not laid out for it); use vargrad or sharding data")
	case c.UseKLLoss && c.KLLossCoef > 0:
		return bad("kl_loss_coef", "%g with advantage_estimator flowrl, whose loss already holds log π_ref; set it to 0 or use_kl_loss false", c.KLLossCoef)
	case c.EntropyCoef != 0:
		return bad("entropy_coef", "%g with advantage_estimator flowrl, whose loss adds no entropy bonus; set it to 0", c.EntropyCoef)
	case c.UseTIS:
		return bad("use_tis", "not with advantage_estimator flowrl, whose only importance weight is its clipped sequence ratio")
	}
	return nil
}

// ValidateProcessReward checks the process_reward knobs and, with
// implicit, refuses what the PRM is not built for yet (Validate calls it;
// `mathrl plan` too).
func (c Config) ValidateProcessReward() error {
	switch {
	case !slices.Contains(ProcessRewards(), c.ProcessReward):
		return notOneOf("process_reward", c.ProcessReward, ProcessRewards()...)
	case c.PRMBeta <= 0 || math.IsInf(c.PRMBeta, 0):
		return bad("prm_beta", "%g, want > 0", c.PRMBeta)
	case c.PRMCoef < 0:
		return bad("prm_coef", "%g is negative", c.PRMCoef)
	case c.PRMLR < 0:
		return bad("prm_lr", "%g is negative", c.PRMLR)
	case c.ProcessReward != "implicit":
		return nil
	case c.AdvantageEstimator == "flowrl":
		return bad("process_reward", "implicit: not with advantage_estimator flowrl, whose flow-balance loss takes no per-token advantage")
	case c.Teacher != "":
		return bad("process_reward", "implicit: not with a teacher (both set the per-token advantages); choose one")
	case c.OptimizerCPUOffload:
		return bad("process_reward", "implicit: not with optimizer_cpu_offload yet (the PRM's update runs on the device)")
	case c.NumDevices > 1:
		return bad("process_reward", "implicit: not with num_devices %d yet (the PRM runs on one device)", c.NumDevices)
	case c.NSamplesPerPrompt < 2:
		return bad("n_samples_per_prompt", "%d with process_reward implicit, whose leave-one-out baselines need at least 2 samples a prompt", c.NSamplesPerPrompt)
	}
	return nil
}

// TeacherEngines lists the teacher_engine values: in process, or served.
func TeacherEngines() []string { return []string{inprocess.Name, engine.SGLang} }

// validateDistill checks the on-policy distillation knobs: with teacher set,
// a known teacher_engine (sglang with its URLs) and finite non-negative
// coefficients not both 0; without it, no URLs.
func (c Config) validateDistill() error {
	switch {
	case !slices.Contains(TeacherEngines(), c.TeacherEngine):
		return notOneOf("teacher_engine", c.TeacherEngine, TeacherEngines()...)
	case c.DistillCoef < 0:
		return bad("distill_coef", "%g is negative", c.DistillCoef)
	case c.DistillOutcomeCoef < 0:
		return bad("distill_outcome_coef", "%g is negative", c.DistillOutcomeCoef)
	case !slices.Contains(DistillModes(), c.DistillMode):
		return notOneOf("distill_mode", c.DistillMode, DistillModes()...)
	case c.Teacher == "" && len(c.TeacherURLs) > 0:
		return bad("teacher", "empty with teacher_urls set (name the teacher's folder: its tokenizer is checked against the policy's)")
	case c.Teacher == "":
		return nil
	case c.AdvantageEstimator == "flowrl":
		return bad("teacher", "not with advantage_estimator flowrl, whose flow-balance loss takes no per-token advantage")
	case c.DistillCoef == 0 && c.DistillOutcomeCoef == 0:
		return bad("distill_coef", "0 with distill_outcome_coef 0: every advantage would be 0")
	case c.TeacherEngine == engine.SGLang && len(c.TeacherURLs) == 0:
		return bad("teacher_urls", "empty with teacher_engine sglang")
	case c.TeacherEngine == inprocess.Name && len(c.TeacherURLs) > 0:
		return bad("teacher_urls", "set with teacher_engine %s (the teacher runs in process); use teacher_engine sglang", inprocess.Name)
	case c.distillSFT() && c.TeacherEngine != inprocess.Name:
		return bad("distill_mode", "sft samples with the teacher in process; set teacher_engine %s", inprocess.Name)
	case c.distillSFT() && c.DynamicSampling:
		return bad("distill_mode", "sft: not with dynamic_sampling, which would drop the groups the teacher answered all correctly, the imitation's best data")
	case c.distillSFT() && c.AsyncRollouts:
		return bad("distill_mode", "sft: not with async_rollouts (the teacher's samples do not depend on the student's weights; nothing to overlap)")
	}
	return nil
}

// DistillModes lists the distill_mode values.
func DistillModes() []string { return []string{"on_policy", "sft"} }

// distillSFT reports whether the student learns by imitating the teacher's
// correct samples (distill_mode sft) instead of from its own.
func (c Config) distillSFT() bool { return c.Teacher != "" && c.DistillMode == "sft" }

// RolloutEngines lists the rollout_engine values: the registered engines.
func RolloutEngines() []string { return engine.Names() }

// AdvantageEstimators lists the advantage_estimator values.
func AdvantageEstimators() []string {
	return []string{"grpo", "gspo", "rloo", "reinforce_plus_plus_baseline", "flowrl"}
}

func (c Config) validateShaping() error {
	switch {
	case c.TISClip <= 0:
		return bad("tis_clip", "%g, want > 0", c.TISClip)
	case c.TISClipLow < 0 || c.TISClipLow > c.TISClip:
		return bad("tis_clip_low", "%g is outside [0, tis_clip]", c.TISClipLow)
	case c.TISSeqMaskLow < 0 || c.TISSeqMaskHigh < 0 || (c.TISSeqMaskHigh > 0 && c.TISSeqMaskLow > c.TISSeqMaskHigh):
		return bad("tis_seq_mask_low", "[%g, %g] is not a range of positive ratios", c.TISSeqMaskLow, c.TISSeqMaskHigh)
	case c.TISSeqMaskLow > 0 && c.TISSeqMaskHigh == 0:
		return bad("tis_seq_mask_high", "0 with tis_seq_mask_low %g; set both", c.TISSeqMaskLow)
	case c.OverlongBufferLen < 0 || c.OverlongBufferLen > c.RolloutMaxResponseLen:
		return bad("overlong_buffer_len", "%d is outside [0, rollout_max_response_len %d]", c.OverlongBufferLen, c.RolloutMaxResponseLen)
	case c.OverlongPenaltyFactor < 0:
		return bad("overlong_penalty_factor", "%g is negative", c.OverlongPenaltyFactor)
	}
	return nil
}

func (c Config) validateOptimizer() error {
	switch {
	case c.GlobalBatchSize < 1:
		return bad("global_batch_size", "%d, want at least 1", c.GlobalBatchSize)
	case c.Samples()%c.GlobalBatchSize != 0:
		return bad("global_batch_size", "%d does not divide rollout_batch_size × n_samples_per_prompt = %d", c.GlobalBatchSize, c.Samples())
	case c.MicroBatchSize < 0 || (c.MicroBatchSize > 0 && c.GlobalBatchSize%c.MicroBatchSize != 0):
		return bad("micro_batch_size", "%d does not divide global_batch_size %d", c.MicroBatchSize, c.GlobalBatchSize)
	case c.MaxTokensPerMicroBatch < 0:
		return bad("max_tokens_per_micro_batch", "%d is negative", c.MaxTokensPerMicroBatch)
	case c.LogProbChunk < 0:
		return bad("logprob_chunk", "%d is negative", c.LogProbChunk)
	case c.LR < 0:
		return bad("lr", "%g is negative", c.LR)
	case c.LRDecayStyle != "constant":
		return notOneOf("lr_decay_style", c.LRDecayStyle, "constant")
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
	case c.validatePrecision() != nil:
		return c.validatePrecision()
	case c.SFTSteps < 0:
		return bad("sft_steps", "%d is negative", c.SFTSteps)
	case c.SFTSteps > 0 && c.SFTBatchSize < 1:
		return bad("sft_batch_size", "%d, want at least 1", c.SFTBatchSize)
	case c.SFTLR < 0:
		return bad("sft_lr", "%g is negative", c.SFTLR)
	case c.SFTToolFraction < 0 || c.SFTToolFraction > 1:
		return bad("sft_tool_fraction", "%g is outside [0, 1]", c.SFTToolFraction)
	case c.SFTUnprintedFraction < 0 || c.SFTUnprintedFraction > 1:
		return bad("sft_unprinted_fraction", "%g is outside [0, 1]", c.SFTUnprintedFraction)
	}
	return nil
}

// validateDevices checks the batch knobs against num_devices: every
// micro-batch is split evenly over the devices on its batch axis. (Those of
// max_tokens_per_micro_batch, and a warm-start step short of a trace whose
// tool call failed, are padded with rows that weigh nothing.)
func (c Config) validateDevices() error {
	rows, key := c.MicroBatchSize, "micro_batch_size"
	if rows == 0 {
		rows, key = c.GlobalBatchSize, "global_batch_size"
	}
	packed := c.MaxTokensPerMicroBatch > 0
	if err := layout.CheckMicroBatch(configNames, key, rows, packed, c.NumDevices); err != nil || packed || c.SFTSteps == 0 {
		return err
	}
	return layout.CheckRows(configNames, "sft_batch_size", c.SFTBatchSize, "warm-start traces per step", c.NumDevices)
}

func (c Config) validateRun() error {
	switch {
	case c.EvalInterval < 0:
		return bad("eval_interval", "%d is negative", c.EvalInterval)
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
	case c.SaveRolloutsEvery < 0:
		return bad("save_rollouts_every", "%d is negative", c.SaveRolloutsEvery)
	case c.SaveRolloutsGroups < 0:
		return bad("save_rollouts_groups", "%d is negative", c.SaveRolloutsGroups)
	}
	return nil
}

// validDType reports whether qwen3 reads s as a compute dtype (float32 and
// bfloat16, or f32 and bf16).
func validDType(s string) bool {
	_, err := qwen3.ParseDType(s)
	return err == nil
}

// OptimizerStateKeys are the recipe keys that decide how the optimizer keeps
// its state, and so its memory: `mathrl plan` takes them as `mathrl train`
// does.
var OptimizerStateKeys = []string{"use_precision_aware_optimizer", "main_params_dtype", "store_param_remainders",
	"stochastic_rounding", "main_grads_dtype", "exp_avg_dtype", "exp_avg_sq_dtype", "optimizer_cpu_offload",
	"optimizer_offload_fraction", "offload_train"}

// ValidateOptimizerState is the part of Validate that checks the
// OptimizerStateKeys.
func (c Config) ValidateOptimizerState() error { return c.validatePrecision() }

// validatePrecision checks the optimizer's precision keys: each dtype
// float32 or bfloat16, none but float32 without use_precision_aware_optimizer
// (as Megatron requires), a bfloat16 master only for bfloat16 weights, and
// stochastic rounding only where the weight is its own master.
func (c Config) validatePrecision() error {
	keys := []struct{ key, value string }{
		{"main_params_dtype", c.MainParamsDType}, {"main_grads_dtype", c.MainGradsDType},
		{"exp_avg_dtype", c.ExpAvgDType}, {"exp_avg_sq_dtype", c.ExpAvgSqDType},
	}
	for _, k := range keys {
		switch {
		case k.value != "float32" && k.value != "bfloat16":
			return notOneOf(k.key, k.value, "float32", "bfloat16")
		case k.value != "float32" && !c.UsePrecisionAwareOptimizer:
			return bad(k.key, "%s needs use_precision_aware_optimizer: true", k.value)
		}
	}
	switch {
	case c.MainParamsDType == "bfloat16" && c.DType != "bfloat16":
		return bad("main_params_dtype", "bfloat16 needs dtype bfloat16 (weights of %s are their own master)", c.DType)
	case c.StochasticRounding && c.MainParamsDType != "bfloat16":
		return bad("stochastic_rounding", "needs main_params_dtype bfloat16 (a float32 master rounds exactly)")
	case c.OptimizerOffloadFraction <= 0 || c.OptimizerOffloadFraction > 1:
		return bad("optimizer_offload_fraction", "%g is outside (0, 1]", c.OptimizerOffloadFraction)
	case c.OptimizerCPUOffload && c.NumDevices > 1:
		return bad("optimizer_cpu_offload", "needs num_devices 1, not %d (with several devices, sharding fsdp splits the state instead)", c.NumDevices)
	}
	return nil
}

// bad is Validate's error for key: what is wrong, then what the knob is.
func bad(key, format string, args ...any) error {
	return fmt.Errorf("grpo: config %s: %s — %s", key, fmt.Sprintf(format, args...), knobsByKey()[key].Help)
}

// notOneOf is Validate's error for a key whose value got is none of choices.
func notOneOf(key, got string, choices ...string) error {
	return fmt.Errorf("grpo: config %s: %q is not %s", key, got, english.Or(choices))
}

// Knob describes one field of Config, as its tags do.
type Knob struct {
	Key   string       // recipe key (yaml tag), e.g. "rollout_batch_size"
	Index int          // index of the field in Config, for reflect.Value.Field
	Type  reflect.Type // the field's type: string, int, int64, float64, bool or []string
	Help  string       // what the knob is, in one line (help tag)
	Slime string       // slime's equivalent, "" when slime has none (slime tag)
	Flag  string       // the flag of mathrl train when it is not the key with '-' for '_' (flag tag), else ""
}

// Knobs returns every knob of Config, in declaration order.
func Knobs() []Knob {
	t := reflect.TypeOf(Config{})
	knobs := make([]Knob, t.NumField())
	for i := range knobs {
		f := t.Field(i)
		knobs[i] = Knob{Key: yamlKey(f), Index: i, Type: f.Type, Help: f.Tag.Get("help"), Slime: f.Tag.Get("slime"), Flag: f.Tag.Get("flag")}
	}
	return knobs
}

// Ptr returns a pointer to k's field of c: a *string, *int, *int64, *float64,
// *bool or *[]string.
func (k Knob) Ptr(c *Config) any { return reflect.ValueOf(c).Elem().Field(k.Index).Addr().Interface() }

var knobsByKey = sync.OnceValue(func() map[string]Knob {
	m := map[string]Knob{}
	for _, k := range Knobs() {
		m[k.Key] = k
	}
	return m
})

// ConfigKeys returns the YAML key of every knob, in declaration order.
func ConfigKeys() []string {
	var keys []string
	for _, k := range Knobs() {
		keys = append(keys, k.Key)
	}
	return keys
}

// LoadRecipe returns Default() overlaid with a recipe: a YAML file path, or the
// name of a recipe embedded from configs/ ("demo", "retool-grpo-qwen3-4b", ...).
func LoadRecipe(nameOrPath string) (Config, error) {
	if _, err := os.Stat(nameOrPath); err == nil {
		return LoadConfigFile(nameOrPath, Default())
	}
	data, err := configs.Read(nameOrPath)
	if err != nil {
		return Config{}, fmt.Errorf("grpo: %s is neither a file nor a recipe name: %w", nameOrPath, err)
	}
	return DecodeConfig(bytes.NewReader(data), "configs/"+strings.TrimSuffix(nameOrPath, ".yaml")+".yaml", Default())
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
// that is not a Config knob (with the nearest known key as a hint), or a value
// of the wrong type, is an error naming the file, line and key.
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
	c := base
	v := reflect.ValueOf(&c).Elem()
	seen := map[string]int{}
	for i := 0; i+1 < len(doc.Content); i += 2 {
		k, val := doc.Content[i], doc.Content[i+1]
		knob, ok := knobsByKey()[k.Value]
		if !ok {
			return base, fmt.Errorf("grpo: %s:%d: unknown key %q%s", name, k.Line, k.Value, didYouMean(k.Value))
		}
		if prev, dup := seen[k.Value]; dup {
			return base, fmt.Errorf("grpo: %s:%d: key %q repeats line %d", name, k.Line, k.Value, prev)
		}
		seen[k.Value] = k.Line
		f := v.Field(knob.Index)
		if f.Kind() == reflect.Slice {
			list, err := stringList(val)
			if err != nil {
				return base, fmt.Errorf("grpo: %s:%d: key %q: %w", name, val.Line, k.Value, err)
			}
			f.Set(reflect.ValueOf(list))
			continue
		}
		if val.Kind != yaml.ScalarNode {
			return base, fmt.Errorf("grpo: %s:%d: key %q: want a single value", name, val.Line, k.Value)
		}
		if val.Tag == "!!null" {
			return base, fmt.Errorf("grpo: %s:%d: key %q: no value", name, val.Line, k.Value)
		}
		if f.Kind() == reflect.String && val.Tag != "!!str" {
			return base, fmt.Errorf("grpo: %s:%d: key %q: want a string, got %s (quote it)", name, val.Line, k.Value, val.Value)
		}
		if err := val.Decode(f.Addr().Interface()); err != nil {
			return base, fmt.Errorf("grpo: %s:%d: key %q: want %s, got %q", name, val.Line, k.Value, kindName(f.Kind()), val.Value)
		}
		if f.Kind() == reflect.Float64 && (math.IsNaN(f.Float()) || math.IsInf(f.Float(), 0)) {
			return base, fmt.Errorf("grpo: %s:%d: key %q: want a finite number, got %q", name, val.Line, k.Value, val.Value)
		}
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err == nil {
		return base, fmt.Errorf("grpo: %s:%d: a second YAML document (a recipe is one)", name, extra.Line)
	} else if !errors.Is(err, io.EOF) {
		return base, fmt.Errorf("grpo: %s: %w", name, err)
	}
	return c, nil
}

// stringList reads a list knob: a sequence of strings, or one string for a
// list of one.
func stringList(val *yaml.Node) ([]string, error) {
	items := val.Content
	if val.Kind == yaml.ScalarNode {
		items = []*yaml.Node{val}
	} else if val.Kind != yaml.SequenceNode {
		return nil, errors.New("want a list of strings")
	}
	out := make([]string, len(items))
	for i, it := range items {
		if it.Kind != yaml.ScalarNode || it.Tag != "!!str" {
			return nil, fmt.Errorf("item %d: want a string, got %q", i+1, it.Value)
		}
		out[i] = it.Value
	}
	return out, nil
}

// didYouMean suggests the known key nearest to an unknown one, when it is
// close: ` (did you mean "rollout_batch_size"?)`, or "".
func didYouMean(key string) string {
	best, bestDist := "", len(key)/3+1 // a third of the letters wrong, at most
	for _, k := range ConfigKeys() {
		if d := editDistance(key, k); d < bestDist {
			best, bestDist = k, d
		}
	}
	if best == "" {
		return ""
	}
	return fmt.Sprintf(" (did you mean %q?)", best)
}

// editDistance is the Levenshtein distance between a and b, in bytes.
func editDistance(a, b string) int {
	prev, cur := make([]int, len(b)+1), make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			sub := prev[j-1]
			if a[i-1] != b[j-1] {
				sub++
			}
			cur[j] = min(sub, prev[j]+1, cur[j-1]+1)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
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
