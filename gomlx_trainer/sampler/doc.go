// Package sampler generates tokens from a qwen3.Model in batches, with a
// key/value cache on the device and the decoding loop driven from the host (GoMLX
// has no while op): one compiled step feeds each sequence its pending tokens (a
// prompt's last token, the last sampled token, or appended tool output), writes
// their keys and values into the cache and samples the next token in the graph.
//
// # Prompts: prefilled once per distinct prompt
//
// A session reads its prompts before its first step, all but their last token:
// each distinct prompt is prefilled alone (one row, in chunks of MaxChunk
// tokens, into a cache of its own) and its keys and values are copied into the
// rows of every sequence with that prompt, so a GRPO group of n samples of one
// prompt prefills it once, not n times. The first step feeds each sequence its
// prompt's last token and samples its first token with its own draw.
// Options.PrefillEach prefills every row for itself, for comparisons, and
// Options.Prefixes keeps prefills between sessions (a server's prompt cache,
// PrefixCache).
//
// Prefilling alone is what makes the copy exact: a row's numbers depend on
// the shapes of the batch it is computed in, since the backends' matmul
// kernels sum in an order chosen by size. In a float32 [M, K]×[K, N] product
// with its first row fixed, that row's outputs change in their last bits (in
// 80-95% of the entries) between M = 1 or 2 and M >= 4 on the Go backend
// (and again past 4M multiply-adds, where the blocked kernel sums K in
// blocks), and on XLA's CPU backend between classes of M that depend on K and
// N too (at K = 64, N = 1024: M = 2 to 32 against M = 1 and M >= 64); a prompt
// prefilled alone and in a batch of 2 to 16 of its copies so samples
// first-token log-probs up to 4.8e-7 apart. A prompt's prefill computed alone
// depends on nothing but the prompt (and the weights, MaxChunk and its cache
// slots), so sharing it samples the tokens and log-probs of prefilling every
// row, bit for bit (TestSharedPrefillIsBitExact), on both backends. On a mesh
// a prompt is prefilled on every device at once, one row each.
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
