// Package metrics turns eval-sample files into tables: avg@k, unbiased pass@k,
// mean response length, truncation rate and tool calls, per problem and
// aggregated, with bootstrap confidence intervals, and the same metrics
// re-derived at smaller token budgets. It also owns the two file formats that
// connect training and analysis: the eval-samples JSONL (Sample) and the
// trainer's per-step metrics JSONL (StepMetrics), each with a version field and
// checked line by line on read. It never runs a model and never imports the
// trainer.
//
// # Metrics
//
// For a problem with n samples of which c are correct, avg@k is estimated by
// c/n (the expected fraction of correct samples among k) and pass@k by the
// unbiased estimator 1 - C(n-c, k)/C(n, k) of Chen et al. (2021). Aggregates
// are means over problems. Confidence intervals resample problems, not
// samples: the question is how much the numbers would move on other problems
// of the same kind.
//
// # Budgets from one generation
//
// AtBudget derives, from samples generated once at a large budget B, the
// samples that a generation at a smaller budget b would have produced: a
// response of more than b tokens is cut at b, finishes with "length" and
// scores 0; a response of at most b tokens is unchanged.
//
// This is exact when generation is a function of the tokens so far and of the
// sampling seed: autoregressive sampling never looks ahead at the budget, so
// with the same seed the first b tokens generated under budget B are the
// tokens generated under budget b, and the budget only decides where
// generation stops. A response that ended (stop or tool-limit) within b
// tokens is therefore identical, and a longer one is its first b tokens. It
// needs the sampler's random draws to depend only on (seed, sample, position)
// and its numerics not to depend on the batch; a shared random stream, or
// kernels whose rounding changes with batch composition or padding, make the
// two generations diverge token by token, although the distribution of
// outcomes stays the same.
//
// Where it is not exact:
//   - Tool calls near the cut. A call whose own text crosses b is cut in
//     both cases and never runs at b: that much is exact. But tool output
//     tokens count against the budget too, and when a call finishes before b
//     but its output would cross b, the
//     derivation cuts inside the output, as a sampler does that truncates
//     tool output to the budget left. A sampler that instead declines a call
//     it has no room for, or stops with "tool-limit", gives another finish
//     reason, and its response is then scored on the text before the call
//     where the derivation gives 0 (rarely a different score: a response that
//     calls a tool has usually not given its final answer yet).
//   - Tool-call counts. A cut sample keeps the tool-call count of the whole
//     response, calls after b included (the file has no token offsets).
//   - Tools that are not deterministic. Generating again at b runs the tools
//     again; output that depends on time, randomness or the machine changes
//     every token after the first call.
//   - Scores of cut responses. A cut response scores 0 by convention, the
//     convention of a budget table; a scorer run on the cut text could still
//     find a final answer written before the cut (for example a box followed
//     by more checking), which this derivation cannot see.
//   - Budget-aware sampling. Anything that tells the model its budget (a
//     system prompt, budget forcing that injects an end of thinking) changes
//     the tokens, not only where they stop.
//   - Upwards. A sample that ran out of budget B says nothing about larger
//     budgets; AtBudget refuses b > B for such samples.
//
// # Simulated samples
//
// Simulate writes samples from a stated random model, for notebooks and plots
// to run before real eval samples exist. Its samples name the model
// "simulated" so they can never be mistaken for measurements.
package metrics
