package grpo

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/mathrl/mathrl/gomlx_trainer/engine"
)

// servedTeacher is a teacher served over SGLang's POST /generate (SGLang,
// or mathrl serve of the teacher's folder): each sequence is one scoring
// request, max_new_tokens 0 with return_logprob and logprob_start_len at the
// first response token, whose meta_info.input_token_logprobs are the
// teacher's log-probs of the response. Requests go round urls in turn.
type servedTeacher struct {
	urls        []string
	next        int
	temperature float64
	apiKey      string
	http        *http.Client
}

// newServedTeacher returns the teacher of teacher_urls, scoring at the
// rollout temperature, sending rollout_engine_api_key (else
// $MATHRL_ROLLOUT_API_KEY) as the rollout engine's client does.
func newServedTeacher(cfg Config) (Teacher, error) {
	urls := make([]string, len(cfg.TeacherURLs))
	for i, u := range cfg.TeacherURLs {
		if !strings.HasPrefix(u, "http://") && !strings.HasPrefix(u, "https://") {
			return nil, fmt.Errorf("grpo: config teacher_urls: %q is not an http(s) URL", u)
		}
		urls[i] = strings.TrimRight(u, "/")
	}
	return &servedTeacher{urls: urls, temperature: cfg.RolloutTemperature,
		apiKey: cmp.Or(cfg.RolloutEngineAPIKey, os.Getenv(engine.APIKeyEnv)), http: &http.Client{Timeout: 10 * time.Minute}}, nil
}

// SequenceLogProbs asks the servers for each sequence's response log-probs
// (o is not used: each sequence is its own request).
func (t *servedTeacher) SequenceLogProbs(seqs []Sequence, _ StepOptions) ([][]float32, error) {
	out := make([][]float32, len(seqs))
	for i, s := range seqs {
		lp, err := t.score(s)
		if err != nil {
			return nil, fmt.Errorf("sequence %d: %w", i, err)
		}
		out[i] = lp
	}
	return out, nil
}

// score returns the teacher's log-prob of each response token of s (0 where
// Mask is 0).
func (t *servedTeacher) score(s Sequence) ([]float32, error) {
	start := len(s.Prompt)
	ids := append(append(make([]int, 0, start+len(s.Response)), s.Prompt...), s.Response...)
	body, err := json.Marshal(engine.SGLangRequest{InputIDs: ids, ReturnLogprob: true, LogprobStartLen: &start,
		SamplingParams: engine.SGLangSampling{Temperature: t.temperature, TopP: 1, TopK: -1, MaxNewTokens: 0}})
	if err != nil {
		return nil, err
	}
	url := t.urls[t.next%len(t.urls)] + "/generate"
	t.next++
	resp, err := t.post(url, body)
	if err != nil {
		return nil, err
	}
	got := resp.MetaInfo.InputTokenLogprobs
	if len(got) != len(s.Response) {
		return nil, fmt.Errorf("%s: %d input_token_logprobs for %d response tokens", url, len(got), len(s.Response))
	}
	out := make([]float32, len(s.Response))
	for k, e := range got {
		if e.ID == nil || *e.ID != s.Response[k] || e.LogProb == nil {
			return nil, fmt.Errorf("%s: input_token_logprobs[%d] is not the log-prob of token %d", url, k, s.Response[k])
		}
		if s.Mask[k] != 0 {
			out[k] = float32(*e.LogProb)
		}
	}
	return out, nil
}

// post sends one scoring request and decodes the answer; a status other
// than 200 is an error quoting the server's message.
func (t *servedTeacher) post(url string, body []byte) (engine.SGLangResponse, error) {
	var out engine.SGLangResponse
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return out, err
	}
	req.Header.Set("Content-Type", "application/json")
	if t.apiKey != "" {
		req.Header.Set("Authorization", "Bearer "+t.apiKey)
	}
	res, err := t.http.Do(req)
	if err != nil {
		return out, err
	}
	defer res.Body.Close()
	data, err := io.ReadAll(io.LimitReader(res.Body, 64<<20))
	if err != nil {
		return out, fmt.Errorf("%s: %w", url, err)
	}
	if res.StatusCode != http.StatusOK {
		return out, fmt.Errorf("%s: status %d: %s", url, res.StatusCode, bytes.TrimSpace(data[:min(len(data), 300)]))
	}
	if err := json.Unmarshal(data, &out); err != nil {
		return out, fmt.Errorf("%s: %w", url, err)
	}
	return out, nil
}
