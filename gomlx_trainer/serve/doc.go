// Package serve puts the in-process sampler behind the HTTP APIs of inference
// servers, so that a run's engine (package engine) can sample on other
// processes or hosts: SGLang's native POST /generate and the OpenAI
// POST /v1/completions with a token-id prompt, plus SGLang's /health,
// /health_generate, /get_model_info, /server_info, /update_weights_from_disk
// and /flush_cache.
//
// One scheduler goroutine owns the sampler and runs a slot session
// (sampler.StartSlots) of MaxBatch rows: a request that arrives while others
// decode is admitted into a free row before the next step (continuous
// batching), so concurrent clients share one batch. Temperature, top-p, top-k
// and the stop ids are compiled into a session's graph, so requests whose
// knobs differ from the running batch's wait until it drains; a weights
// update waits the same way, so a request is sampled by one version of the
// weights from its first token to its last.
//
// # The prompt cache
//
// A prompt is prefilled once for all the sequences that share it: a
// request's n > 1 answers and the identical input_ids of a batch request
// run as one session (sampler.Start), which prefills each distinct prompt
// once, and every session takes prompts from a prompt cache
// (sampler.PrefixCache) and adds the ones it prefills, so the sequences of a
// GRPO group sent one a request, as slime sends them, prefill their prompt
// once too. It is a cache of whole prompts (all their tokens but the last),
// not a radix tree of every cached prefix: what a rollout repeats is whole
// prompts, n samples of each, and a partial match would feed the rest of a
// prompt in other chunks than a fresh prefill, which rounds otherwise, where
// a whole match samples what prefilling anew samples, bit for bit. The turns
// of a tool loop, each a request with the sequence so far, are prefilled
// whole. It holds at most Options.PrefixCacheBytes of device memory (1 GiB
// unless set; least recently used out first), and every weights update and
// /flush_cache empty it. /server_info reports its entries, bytes, hits and
// misses, and each /generate answer its cached_tokens (the prompt tokens it
// did not prefill).
//
// A request with the seed the engine gives it (sampling_seed, seed) samples
// the tokens the in-process sampler samples for that sequence: draws are
// keyed by the seed and the position (sampler.DrawKey), not by the batch. A
// request for n > 1 answers with seed s samples what the in-process sampler
// samples for n copies of its prompt with Options.Seed s: answer k draws from
// seeding.SequenceSeed(s, k).
//
// # Scoring: the log-probs of an input
//
// A /generate request for one sequence with sampling_params.max_new_tokens
// 0, return_logprob and logprob_start_len k samples nothing: its
// meta_info.input_token_logprobs hold the log-prob of each input token from
// k on, given those before it, at sampling_params.temperature (default 1;
// k -1 or absent is the last token, as in SGLang, and the log-prob of token
// 0 is null). It runs the training graph's log-probs (qwen3.TargetLogProbsOf,
// one row padded as grpo pads a batch), so a served distillation teacher
// gives what an in-process one would, bit for bit on the tests' backend. A
// k outside the input, a k with max_new_tokens above 0, a batch, or a
// temperature of 0 is answered 400 naming the field.
//
// A bad request (invalid JSON, a field of the wrong type, an id outside the
// vocabulary, max_new_tokens past the context, an n below 1, a
// sampling_params key it does not sample by, such as a stop string or a
// penalty) is answered 400 with the field named; once Serve's context ends, new requests get 503 while those
// in flight finish.
//
// Options.APIKey, as SGLang's --api-key, makes every endpoint but /health
// answer 401 to a request without Authorization: Bearer <key> (compared in
// constant time). Options.WeightsRoot confines /update_weights_from_disk to
// the folders inside it, both sides resolved through their symlinks: a
// model_path with a '..', one that resolves outside or does not exist, and a
// folder holding a symlink out of the root all get the same 400, "model_path:
// outside the weights root", which does not say whether the path exists.
package serve
