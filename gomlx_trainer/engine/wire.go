package engine

import (
	"encoding/json"
	"fmt"
)

// SGLangRequest is the body of SGLang's POST /generate for one sequence of
// token ids (the fields slime sends).
type SGLangRequest struct {
	InputIDs       []int          `json:"input_ids"`
	SamplingParams SGLangSampling `json:"sampling_params"`
	ReturnLogprob  bool           `json:"return_logprob"`
	// LogprobStartLen, with ReturnLogprob, is the first input position whose
	// log-prob meta_info.input_token_logprobs reports (nil: not sent).
	LogprobStartLen *int `json:"logprob_start_len,omitempty"`
}

// SGLangBatchRequest is the body of SGLang's POST /generate for several
// sequences: one sampling_params per sequence. The answer is a list of
// SGLangResponse, in order.
type SGLangBatchRequest struct {
	InputIDs       [][]int          `json:"input_ids"`
	SamplingParams []SGLangSampling `json:"sampling_params"`
	ReturnLogprob  bool             `json:"return_logprob"`
}

// SGLangSampling is SGLang's sampling_params. A top_k of -1 keeps every
// token; sampling_seed is honoured by servers started with
// --enable-deterministic-inference.
type SGLangSampling struct {
	Temperature       float64 `json:"temperature"`
	TopP              float64 `json:"top_p"`
	TopK              int     `json:"top_k"`
	MaxNewTokens      int     `json:"max_new_tokens"`
	StopTokenIDs      []int   `json:"stop_token_ids,omitempty"`
	IgnoreEOS         bool    `json:"ignore_eos"` // true: only stop_token_ids stop, as in the in-process sampler
	NoStopTrim        bool    `json:"no_stop_trim"`
	SkipSpecialTokens bool    `json:"skip_special_tokens"`
	SamplingSeed      uint64  `json:"sampling_seed"`
}

// SGLangResponse is the part of SGLang's /generate answer the client reads.
type SGLangResponse struct {
	Text      string     `json:"text"`
	OutputIDs []int      `json:"output_ids,omitempty"`
	MetaInfo  SGLangMeta `json:"meta_info"`
}

// SGLangMeta is SGLang's meta_info.
type SGLangMeta struct {
	OutputTokenLogprobs []TokenLogprob `json:"output_token_logprobs"`
	// InputTokenLogprobs answer a request with return_logprob and
	// logprob_start_len k: entry i is the log-prob of input token k+i given
	// those before it (null for token 0).
	InputTokenLogprobs []InputTokenLogprob `json:"input_token_logprobs,omitempty"`
	FinishReason       struct {
		Type    string `json:"type"` // stop, length or abort
		Matched any    `json:"matched,omitempty"`
	} `json:"finish_reason"`
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	CachedTokens     int `json:"cached_tokens"` // prompt tokens whose prefill was reused, not computed
}

// TokenLogprob is one entry of output_token_logprobs: [log-prob, id, text],
// the text null unless asked for.
type TokenLogprob struct {
	LogProb *float64
	ID      *int
}

// UnmarshalJSON reads [log-prob, id, text].
func (t *TokenLogprob) UnmarshalJSON(data []byte) error {
	var raw []json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return err
	}
	if len(raw) < 2 {
		return fmt.Errorf("entry %s, want [log-prob, id, text]", data)
	}
	var lp float64
	var id int
	if string(raw[0]) == "null" || string(raw[1]) == "null" {
		return fmt.Errorf("entry %s has a null log-prob or id", data)
	}
	if err := json.Unmarshal(raw[0], &lp); err != nil {
		return fmt.Errorf("log-prob %s: %w", raw[0], err)
	}
	if err := json.Unmarshal(raw[1], &id); err != nil {
		return fmt.Errorf("id %s: %w", raw[1], err)
	}
	t.LogProb, t.ID = &lp, &id
	return nil
}

// InputTokenLogprob is an entry of meta_info.input_token_logprobs: a
// TokenLogprob whose log-prob may be null (LogProb nil), as SGLang writes it
// for the first input token, which has none. Its id may not be null. A
// sampling response that carries input log-probs (SGLang sends them with
// return_logprob) so decodes whatever its first entry holds.
type InputTokenLogprob struct{ TokenLogprob }

// UnmarshalJSON reads [log-prob or null, id, ...].
func (t *InputTokenLogprob) UnmarshalJSON(data []byte) error {
	var raw []json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return err
	}
	if len(raw) < 2 || string(raw[1]) == "null" {
		return fmt.Errorf("entry %s, want [log-prob or null, id, text]", data)
	}
	var id int
	if err := json.Unmarshal(raw[1], &id); err != nil {
		return fmt.Errorf("id %s: %w", raw[1], err)
	}
	t.ID, t.LogProb = &id, nil
	if string(raw[0]) == "null" {
		return nil
	}
	var lp float64
	if err := json.Unmarshal(raw[0], &lp); err != nil {
		return fmt.Errorf("log-prob %s: %w", raw[0], err)
	}
	t.LogProb = &lp
	return nil
}

// MarshalJSON writes [log-prob, id, null].
func (t TokenLogprob) MarshalJSON() ([]byte, error) {
	return json.Marshal([]any{t.LogProb, t.ID, nil})
}

// OpenAIRequest is the body of POST /v1/completions with a token-id prompt,
// with vLLM's extensions (top_k, stop_token_ids, return_token_ids,
// skip_special_tokens).
type OpenAIRequest struct {
	Prompt            []int   `json:"prompt"`
	MaxTokens         int     `json:"max_tokens"`
	Temperature       float64 `json:"temperature"`
	TopP              float64 `json:"top_p"`
	TopK              int     `json:"top_k"`
	StopTokenIDs      []int   `json:"stop_token_ids,omitempty"`
	IgnoreEOS         bool    `json:"ignore_eos"` // true: only stop_token_ids stop
	Seed              uint64  `json:"seed"`
	Logprobs          int     `json:"logprobs"`
	ReturnTokenIDs    bool    `json:"return_token_ids"`
	SkipSpecialTokens bool    `json:"skip_special_tokens"`
}

// OpenAIResponse is the part of the /v1/completions answer the client reads.
type OpenAIResponse struct {
	Object  string         `json:"object,omitempty"`
	Model   string         `json:"model,omitempty"`
	Choices []OpenAIChoice `json:"choices"`
}

// OpenAIChoice is one completion.
type OpenAIChoice struct {
	Index        int             `json:"index"`
	Text         string          `json:"text"`
	TokenIDs     []int           `json:"token_ids"`
	FinishReason string          `json:"finish_reason"` // stop or length
	Logprobs     *OpenAILogprobs `json:"logprobs"`
}

// OpenAILogprobs is a choice's logprobs; with logprobs 0, token_logprobs
// holds the sampled tokens' log-probs.
type OpenAILogprobs struct {
	TokenLogprobs []*float64 `json:"token_logprobs"`
}
