// Package engine is where rollouts are sampled: an Engine starts a session for
// a batch of prompts, which the tool loop (rollout.Run) drives, and is told
// after each update of the policy so that the next session samples from the
// new weights (Sync).
//
// The in-process sampler is one engine (Builtin: it shares the policy's
// weights, so its Sync does nothing). Every sequence draws from its own seed,
// sampler.SequenceSeed(Options.Seed, i), and the draw of each token is keyed by
// that seed and the token's position (sampler.DrawKey), so that an engine that
// samples elsewhere, given the same seeds, samples the same tokens.
package engine
