package serve

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/mathrl/mathrl/gomlx_trainer/engine"
)

// TestServeScoresInputTokens checks a scoring request (max_new_tokens 0,
// return_logprob, logprob_start_len) against the sampler's own log-probs: a
// response sampled by /generate with return_logprob is scored back, prompt
// and response as input_ids with logprob_start_len at the response, and each
// input_token_logprobs entry must be the sampled token's id and its
// output_token_logprobs log-prob (log_softmax(logits/temperature), computed
// by the sampling path, not by the scorer), to float32 rounding. From
// logprob_start_len 0 the first entry has no log-prob and the rest are
// shifted by the prompt; without logprob_start_len only the last input token
// is scored; logprob_start_len equal to the input's length is a 400.
func TestServeScoresInputTokens(t *testing.T) {
	r := start(t, tinyDir(t, 3), 2, nil)
	prompt := []int{256, 7, 8, 9}
	const temperature = 0.7
	code, body := post(t, r.url+"/generate", fmt.Sprintf(`{"input_ids": %s, "return_logprob": true,
		"sampling_params": {"max_new_tokens": 12, "ignore_eos": true, "sampling_seed": 3, "temperature": %g}}`, jsonInts(prompt), temperature))
	if code != 200 {
		t.Fatalf("generate: %d %s", code, body)
	}
	var gen engine.SGLangResponse
	if err := json.Unmarshal([]byte(body), &gen); err != nil {
		t.Fatal(err)
	}
	if len(gen.OutputIDs) != 12 || len(gen.MetaInfo.OutputTokenLogprobs) != 12 {
		t.Fatalf("generate: %d ids, %d log-probs, want 12", len(gen.OutputIDs), len(gen.MetaInfo.OutputTokenLogprobs))
	}
	ids := append(append([]int{}, prompt...), gen.OutputIDs...)
	score := func(startLen string) (int, string, []engine.TokenLogprob) {
		t.Helper()
		field := ""
		if startLen != "" {
			field = `"logprob_start_len": ` + startLen + `,`
		}
		code, body := post(t, r.url+"/generate", fmt.Sprintf(`{"input_ids": %s, "return_logprob": true, %s
			"sampling_params": {"max_new_tokens": 0, "temperature": %g}}`, jsonInts(ids), field, temperature))
		if code != 200 {
			return code, body, nil
		}
		// Decoded here rather than by engine.TokenLogprob, which refuses the
		// null log-prob of input token 0: entries are [logprob, id, text].
		var res struct {
			MetaInfo struct {
				InputTokenLogprobs [][]*float64 `json:"input_token_logprobs"`
			} `json:"meta_info"`
		}
		if err := json.Unmarshal([]byte(body), &res); err != nil {
			t.Fatalf("%v: %s", err, body)
		}
		out := make([]engine.TokenLogprob, len(res.MetaInfo.InputTokenLogprobs))
		for k, e := range res.MetaInfo.InputTokenLogprobs {
			if len(e) < 2 || e[1] == nil {
				t.Fatalf("entry %d of input_token_logprobs has no id: %s", k, body)
			}
			id := int(*e[1])
			out[k] = engine.TokenLogprob{LogProb: e[0], ID: &id}
		}
		return code, body, out
	}
	check := func(what string, got []engine.TokenLogprob, from int) {
		t.Helper()
		if len(got) != len(ids)-from {
			t.Fatalf("%s: %d input_token_logprobs, want %d", what, len(got), len(ids)-from)
		}
		for k, e := range got {
			pos := from + k
			if e.ID == nil || *e.ID != ids[pos] {
				t.Errorf("%s: entry %d has id %v, want input token %d's %d", what, k, e.ID, pos, ids[pos])
			}
			switch {
			case pos == 0:
				if e.LogProb != nil {
					t.Errorf("%s: the first input token has the log-prob %v, want null", what, *e.LogProb)
				}
			case e.LogProb == nil:
				t.Errorf("%s: input token %d has no log-prob", what, pos)
			case pos >= len(prompt):
				want := *gen.MetaInfo.OutputTokenLogprobs[pos-len(prompt)].LogProb
				if d := math.Abs(*e.LogProb - want); d > 1e-4 {
					t.Errorf("%s: input token %d: log-prob %v, the sampler's %v", what, pos, *e.LogProb, want)
				}
			case *e.LogProb > 0 || math.IsNaN(*e.LogProb):
				t.Errorf("%s: input token %d: log-prob %v", what, pos, *e.LogProb)
			}
		}
	}
	code, body, got := score(fmt.Sprint(len(prompt)))
	if code != 200 {
		t.Fatalf("score from the response: %d %s", code, body)
	}
	check("from the response", got, len(prompt))
	code, body, got = score("0")
	if code != 200 {
		t.Fatalf("score from 0: %d %s", code, body)
	}
	check("from 0", got, 0)
	code, body, got = score("")
	if code != 200 {
		t.Fatalf("score without logprob_start_len: %d %s", code, body)
	}
	check("without logprob_start_len", got, len(ids)-1)
	for _, bad := range []int{len(ids), len(ids) + 1, -2} {
		if code, body, _ := score(fmt.Sprint(bad)); code != 400 || !strings.Contains(body, "logprob_start_len") {
			t.Errorf("logprob_start_len %d of %d input tokens: %d %s, want 400 naming logprob_start_len", bad, len(ids), code, body)
		}
	}
}

func jsonInts(ids []int) string {
	b, _ := json.Marshal(ids)
	return string(b)
}
