// Package toolloop runs the multi-turn tool loop of one batch of samples: it asks
// the sampler for a turn, stops at </tool_call> or <|im_end|>, runs the call
// through a ToolRunner, appends the tool-response turn as tokens, and goes on
// until the sample ends its turn, spends its token budget (tool responses
// count) or reaches the tool-call limit. It records, per response token, the
// sampling log-prob and the loss mask (1 only on tokens the policy sampled).
// While it runs it tells an optional Progress how far it has got, after every
// decoding step and every tool call.
//
// It declares the interfaces it needs (Session, ToolRunner, Protocol); the
// sampler, the sandbox and the tokenizer implement them, and tests use fakes.
package toolloop
