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
// weights from its first token to its last. There is no prefix cache: every
// request is prefilled whole.
//
// A request with the seed the engine gives it (sampling_seed, seed) samples
// the tokens the in-process sampler samples for that sequence: draws are
// keyed by the seed and the position (sampler.DrawKey), not by the batch.
//
// A bad request (invalid JSON, a field of the wrong type, an id outside the
// vocabulary, max_new_tokens past the context, an n other than 1, a
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
