// Package engine is where rollouts are sampled: an Engine starts a session for
// a batch of prompts, which the tool loop (toolloop.Run) drives, and is told
// after each update of the policy so that the next session samples from the
// new weights (Sync).
//
// Engines are registered by name, as database/sql's drivers are (Register):
// each Spec holds an engine's rollout_engine name, its checks of the knobs
// (Check, whose findings name the knob) and its constructor (New). The
// trainer and `mathrl eval` both make their engine through New. This package
// registers the engines of servers, sglang and openai; the in-process
// sampler, builtin, is package inprocess, so that this package and its HTTP
// client build without GoMLX. Every sequence draws from its own seed,
// seeding.SequenceSeed(Options.Seed, i), and the draw of each token is keyed by
// that seed and the token's position (sampler.DrawKey), so that an engine that
// samples elsewhere, given the same seeds, samples the same tokens.
//
// Client is the engine of inference servers (rollout_engine sglang or openai):
// each sequence of a turn is one HTTP request carrying the whole sequence so
// far and the sequence's seed, in SGLang's native POST /generate (as slime
// sends it) or the OpenAI POST /v1/completions with a token-id prompt (as vLLM
// serves it to TRL and AReaL). Requests are bounded in number, go round the
// URLs in turn, and are retried with a doubling wait after a connection error
// or a 5xx; a response with missing ids, log-probs of another length, too
// many tokens or an id outside the vocabulary is an error naming the request.
// The server's log-probs agree with the in-process sampler's only to float32
// rounding when its batches differ: kernels pick their summation order by
// size.
package engine
