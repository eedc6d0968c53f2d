// Package grpo trains a Qwen3 policy with GRPO on verifiable math: it owns the
// recipe (Config, loaded from configs/*.yaml and flags), group advantages, the
// PPO-clip loss with DAPO's asymmetric clip and optional KL, AdamW with
// global-norm gradient clipping and a warmup-then-constant learning rate, the
// trainer loop (Train), checkpoints that resume exactly, the run folder, and
// evaluation (Evaluate, RunEval) shared by the trainer and `mathrl eval`.
//
// # Overview
//
// One rollout: RolloutBatchSize prompts × NSamplesPerPrompt samples are
// generated with the multi-turn tool loop of package rollout (the sampler keeps
// its KV cache while the sandbox runs tool calls), scored (ScoreResponse),
// turned into per-group advantages (GroupAdvantages, optionally filtered by
// KeepGroups), and split into GlobalBatchSize-sample optimizer steps; each step
// sums the gradients of its micro-batches (AccumulateGradients), clips them to a
// global norm and applies AdamW (ApplyAdamW). Log-probs recorded at sampling
// time are the "old" policy of the PPO ratio.
//
// Graph-building functions (PolicyLoss, TokenLogProbs, KL, ApplyAdamW) are
// tested on tiny inputs against numbers computed independently.
//
// It does not own the model graph (qwen3), sampling (sampler), the tool loop
// (rollout), the sandbox, the tokenizer, the scorers or the metrics schemas;
// it wires them together.
package grpo
