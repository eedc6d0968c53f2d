// Package grpo trains a Qwen3 policy with GRPO on verifiable math: it owns the
// recipe (Config, loaded from configs/*.yaml; each knob's description lives in
// its struct tags), group advantages, the PPO-clip loss with DAPO's asymmetric
// clip and optional KL, AdamW with global-norm gradient clipping and a
// warmup-then-constant learning rate (one optimizer step: Learner.Step), the
// trainer loop (Train), checkpoints that resume exactly, the run folder, and
// evaluation (Evaluate, RunEval) shared by the trainer and `mathrl eval`.
//
// # Overview
//
// Train is one loop that reads top to bottom; each rollout goes through
// these steps, each a method of the run's trainer value: RolloutBatchSize
// prompts × NSamplesPerPrompt samples are generated with the multi-turn tool
// loop of package rollout (the sampler keeps its KV cache while the sandbox
// runs tool calls), scored (the rm_type scorer of package scorer, or
// TrainOptions.Reward), turned into per-group advantages (GroupAdvantages,
// optionally filtered by KeepGroups), and split into GlobalBatchSize-sample
// optimizer steps; each step (Learner.Step) sums the gradients of its
// micro-batches (AccumulateGradients), clips them to a global norm and applies
// AdamW (ApplyAdamW). Log-probs recorded at sampling time are the "old" policy
// of the PPO ratio. The supervised warm start takes the same Learner.Step.
// Every save_rollouts_every rollouts the trainer records the rollout token by
// token (package rollouts' schema) from the arrays its loss took: the masks,
// old log-probs and advantages of the sequences after every correction.
//
// Graph-building functions (PolicyLoss, KL, ClipByGlobalNorm, ApplyAdamW) are
// tested on tiny inputs against numbers computed independently.
//
// It does not own the model graph or the log-probs of targets (qwen3),
// sampling (sampler), the tool loop (rollout), the sandbox, the tokenizer and
// the chat protocol (tokenizer.Protocol), the scorers and rewards (scorer), the
// metrics schemas or the figures, nor the command-line flags (cmd/mathrl); it
// wires them together.
package grpo
