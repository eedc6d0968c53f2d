// Package qwen3 is the Qwen3 language model in GoMLX: its config.json, its
// safetensors checkpoints (read lazily, tensor by tensor, and written back in the
// Hugging Face layout), and the model graph (RMSNorm, rotary position embeddings,
// grouped-query attention with q/k norms, SwiGLU, tied or untied head), in float32
// or bfloat16. In float32 its logits equal transformers' (see the tests against
// a reference made by transformers 5.17).
//
// # Weights
//
// Each Hugging Face tensor name maps to one variable of a GoMLX model.Store: the
// dotted name becomes the variable's path, so
// "model.layers.3.self_attn.q_proj.weight" is the variable
// "/model/layers/3/self_attn/q_proj/weight" (see VariablePath and TensorName). Weights keep
// the Hugging Face layout ([out, in] for linear layers), so loading and saving
// never transposes. Load and LoadOn check every name and shape against the
// config; Save and WriteRandom write checkpoints that transformers loads.
//
// # Graph functions
//
// Logits gives the logits of every position for a batch of right-padded token
// ids (causal attention, no cache); LastLogits only those after each row's last
// token; TokenLogProbs the log-probability of each token under the model, for
// training (it differentiates on every backend once package gomlxfix's rules are
// installed, which the graph functions do themselves). Extend runs a chunk of
// tokens against a key/value cache and is what package sampler drives to
// generate.
//
// # Memory for training
//
// TargetLogProbsOf builds a training graph's per-token log-probs and entropies
// as ModelOptions say: LogProbChunk runs the head and the log-softmax a chunk of
// positions at a time (TargetLogProbsChunked), so that no [batch, seq, vocab]
// tensor exists; Remat recomputes each decoder layer in the backward pass
// instead of keeping its activations, built from custom gradients (see
// rematerialise; GoMLX v0.28's Node.Checkpoint keeps more, see rematLayer). The values are the same either way,
// and the zero options build the plain graph.
//
// The package leaves tokenization to package tokenizer, sampling loops to package
// sampler and optimisation to package grpo.
package qwen3
