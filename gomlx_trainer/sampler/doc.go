// Package sampler generates tokens from a qwen3.Model in batches, with a
// key/value cache on the device and the decoding loop driven from the host (GoMLX
// has no while op): one compiled step feeds each sequence its pending tokens (a
// prompt, the last sampled token, or appended tool output), writes their keys and
// values into the cache and samples the next token in the graph.
//
// Shapes are static: the batch is fixed per session, the chunk length is 1 or a
// power of two from 16, and the cache grows with the sequences through a few
// lengths (powers of two from 64 to 2048, then multiples of 2048, up to the
// capacity), so that a step attends over about the used part of the cache
// rather than all of it. A session compiles a handful of graphs whatever its
// prompt lengths.
//
// Sampling is temperature, top-k and top-p (both found by bisection in the graph,
// since there is no sort op), stop ids and a token budget. Each sequence has its
// own seed, and the Gumbel noise of the token after its first n tokens is a
// hash of that seed, n and the token id (DrawKey): a sequence samples the same
// tokens alone or in any batch, and continued in another session (or by a
// server given the whole sequence so far) from where one stopped. Each sampled token carries its log-probability under
// log_softmax(logits/temperature) before top-k/top-p filtering, which is the
// behaviour policy's log-probability that GRPO's importance ratio needs (as slime
// and verl record it); greedy decoding records log_softmax(logits).
//
// A multi-turn tool loop drives a Session: Run until sequences stop, Append each
// tool response to the sequences that called a tool, Run again. Result.Sampled
// tells sampled tokens from appended ones, for the loss mask.
package sampler
