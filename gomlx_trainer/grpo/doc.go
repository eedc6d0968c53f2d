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
// these steps, each a method of the run's trainer value that returns what it
// computed to the next: drawBatch generates RolloutBatchSize prompts ×
// NSamplesPerPrompt samples with the tool loop of package toolloop, in
// sessions of the run's engine (package engine, made by engine.New: the
// in-process sampler of package inprocess, which
// keeps its KV cache while the sandbox runs tool calls, or rollout servers;
// the loop syncs it to the policy's weights before each sampling) and scores
// them (the rm_type scorer of package scorer, or TrainOptions.Reward); with
// async_rollouts the next rollout's batch is drawn in a goroutine, from the
// weights as they were before this rollout's updates, while the trainer
// takes them (see ahead);
// sequences turns them into per-group advantages (GroupAdvantages, optionally
// filtered by KeepGroups); correct recomputes their log-probs with the
// training graph, before the rollout's first update, as the "old" policy of
// the PPO ratio (the sampler's log-probs with use_rollout_logprobs), and for
// use_tis, the sequence mask and the mismatch metrics; optimize splits them
// into GlobalBatchSize-sample optimizer steps, the first on policy
// (StepOptions.OnPolicy). Each step (Learner.Step) sums the gradients of its
// micro-batches (AccumulateGradients), clips them to a global norm and
// applies AdamW (ApplyAdamW). The supervised warm start takes the same
// Learner.Step.
// The Learner owns the policy and its optimizer state: the loop asks it to
// reset the optimizer and to save a checkpoint. Every save_rollouts_every
// rollouts the trainer writes the batch's records token by token (package
// rollouts' schema) from the arrays its loss took: the masks, old log-probs
// and advantages of the sequences after every correction.
//
// Each optimizer step writes a line of train.jsonl (metrics.StepMetrics): what
// the rollout sampled and scored, the step's loss and norms, and where the
// time went, rollout, tools, scoring and step, with the part of the sampling
// and of the step spent building and compiling graphs. The run's backends are
// watched (backend.Compiles): a graph compiled by the in-process engine's
// code counts for the rollout, any other during a step for the step, so with
// async_rollouts, where both run at once, each keeps its own.
//
// # Words
//
// The word "rollout" could mean several things; in this package each has its
// own name:
//
//   - a rollout is one iteration of the loop (num_rollout of them): a batch
//     drawn, scored and trained on (TrainState.Rollout counts them);
//   - a batch is the scored samples of one rollout, every draw of them (a
//     draw samples some prompt groups once; dynamic sampling draws again),
//     not to be confused with the padded Batch of a micro-batch;
//   - a sample is one response to one prompt (toolloop.Sample), and a
//     sequence is a sample's prompt and response as the loss takes them
//     (Sequence);
//   - a record is a sample written token by token to rollouts/step-N.jsonl
//     (rollouts.Record);
//   - the tool loop is package toolloop's multi-turn generation (toolloop.Run),
//     and the sampler's log-probs are π_sampler, the training graph's π_train;
//   - the engine is what samples (engine.Engine, rollout_engine): the
//     in-process sampler (builtin) or servers spoken to over HTTP; a session
//     is one batch of sequences an engine generates for the tool loop;
//   - a rollout's weight version is the optimizer steps the weights that
//     sampled it had taken (train.jsonl's rollout_weight_version), and its
//     staleness the steps the policy had taken past them when the rollout's
//     first update began (rollout_staleness): 0 in a synchronous run, a
//     rollout's steps for every rollout but the first with async_rollouts.
//
// Graph-building functions (PolicyLoss, FlowRLLoss, KL, ClipByGlobalNorm, ApplyAdamW) are
// tested on tiny inputs against numbers computed independently.
//
// It does not own the model graph or the log-probs of targets (qwen3),
// sampling (sampler), the tool loop (toolloop), the sandbox, the tokenizer and
// the chat protocol (tokenizer.Protocol), the scorers and rewards (scorer), the
// metrics schemas or the figures, nor the command-line flags (cmd/mathrl); it
// wires them together.
package grpo
