// Package tokenizer is the text side of a Qwen3 policy: it turns text into token
// ids and back exactly as Hugging Face's tokenizers library does for the
// byte-level BPE tokenizer.json files of Qwen2 and Qwen3, renders conversations
// with the chat template of Qwen3-4B-Instruct-2507 (tools included), and
// implements the code_interpreter tool protocol used in rollouts: parsing
// <tool_call> blocks out of generated text and building the token ids of the
// tool-response turn that is appended to a rollout.
//
// # Encoding
//
// Encode follows the Hugging Face pipeline step by step: added tokens (special
// or not, such as <|im_end|> and <tool_call>) are split out of the raw text
// first; each remaining segment is NFC-normalized, split by Qwen's pre-tokenizer
// regex (implemented by hand, since it needs a lookahead that Go's regexp
// lacks), mapped to bytes, and merged by BPE in merge-rank order. No BOS or EOS
// token is added.
//
// # Small vocabularies
//
// NewBytes builds a tokenizer with only the 256 byte tokens plus Qwen3's added
// tokens, for tiny models trained on CPU; it uses the same template and tool
// protocol, and Save writes it as a tokenizer.json that Hugging Face loads.
//
// The package does not sample or run models: the sampler owns generation and the
// sandbox runs the code of tool calls.
package tokenizer
