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
//   - Tool calls. Tool output tokens count against the budget. When a call
//     completes before b but its output would cross b, a sampler running at b
//     may decline the call, cap the output to what is left, or stop with
//     "tool-limit", while the derivation simply cuts at token b. The finish
//     reason and the tool-call count of such a sample can differ, never its
//     score (it is 0 either way, as no final answer lies before b).
//   - A tool call cut in half: a call whose closing tag would fall after b is
//     never run at budget b, but ran under B, and its output may have changed
//     later tokens. Those tokens are beyond b and so do not matter here, but
//     the tool-call count of the cut sample still includes the call; it is
//     the count for the whole response, not for its first b tokens.
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
