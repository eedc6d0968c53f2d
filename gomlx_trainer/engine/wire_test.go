package engine

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestInputTokenLogprobsTakeANullLogProb decodes a response as SGLang
// writes input log-probs: the first input token's log-prob is null, which an
// output log-prob may never be. A null id is refused in both.
func TestInputTokenLogprobsTakeANullLogProb(t *testing.T) {
	body := `{"text": "", "output_ids": [], "meta_info": {"output_token_logprobs": [[-0.25, 9, null]],
		"input_token_logprobs": [[null, 5, null], [-0.5, 7, null]], "finish_reason": {"type": "length"}}}`
	var r SGLangResponse
	if err := json.Unmarshal([]byte(body), &r); err != nil {
		t.Fatal(err)
	}
	in := r.MetaInfo.InputTokenLogprobs
	if len(in) != 2 || in[0].LogProb != nil || *in[0].ID != 5 || *in[1].LogProb != -0.5 || *in[1].ID != 7 {
		t.Errorf("input_token_logprobs decoded as %+v", in)
	}
	if out := r.MetaInfo.OutputTokenLogprobs; len(out) != 1 || *out[0].LogProb != -0.25 || *out[0].ID != 9 {
		t.Errorf("output_token_logprobs decoded as %+v", out)
	}
	for _, bad := range []string{
		`{"meta_info": {"input_token_logprobs": [[-0.5, null, null]]}}`,
		`{"meta_info": {"output_token_logprobs": [[null, 5, null]]}}`,
	} {
		if err := json.Unmarshal([]byte(bad), &r); err == nil || !strings.Contains(err.Error(), "null") {
			t.Errorf("%s: error %v, want one about the null", bad, err)
		}
	}
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(b), `[[null,5,null],[-0.5,7,null]]`; got != want {
		t.Errorf("written back as %s, want %s", got, want)
	}
}
