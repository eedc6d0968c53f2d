package serve

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strings"

	"github.com/mathrl/mathrl/gomlx_trainer/engine"
	"github.com/mathrl/mathrl/gomlx_trainer/qwen3"
	"github.com/mathrl/mathrl/gomlx_trainer/sampler"
	"github.com/mathrl/mathrl/gomlx_trainer/seeding"
)

// Handler returns the server's routes, behind the API key when one is set.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /generate", s.guard(s.generate))
	mux.HandleFunc("POST /v1/completions", s.guard(s.completions))
	mux.HandleFunc("GET /health", s.guard(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) }))
	mux.HandleFunc("GET /health_generate", s.guard(s.healthGenerate))
	mux.HandleFunc("GET /get_model_info", s.guard(s.modelInfo))
	mux.HandleFunc("GET /server_info", s.guard(s.serverInfo))
	mux.HandleFunc("POST /update_weights_from_disk", s.guard(s.updateWeights))
	mux.HandleFunc("POST /flush_cache", s.guard(s.flushCache))
	return s.authorize(mux)
}

// guard answers 503 while the server drains, and counts the request in
// flight otherwise.
func (s *Server) guard(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if !s.enter() {
			writeError(w, http.StatusServiceUnavailable, errors.New("the server is shutting down"))
			return
		}
		defer s.inflight.Done()
		h(w, r)
	}
}

// badRequest is a request error: answered 400.
type badRequest struct{ err error }

func (e badRequest) Error() string { return e.err.Error() }

func bad(format string, args ...any) error { return badRequest{fmt.Errorf(format, args...)} }

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// writeError answers err: 400 for a bad request, status otherwise.
func writeError(w http.ResponseWriter, status int, err error) {
	var br badRequest
	if errors.As(err, &br) {
		status = http.StatusBadRequest
	}
	writeJSON(w, status, map[string]any{"error": map[string]any{"message": err.Error(), "code": status}})
}

// decode reads r's JSON body into v; a syntax error or a field of the wrong
// type is a bad request naming the field.
func decode(r *http.Request, v any) error {
	data, err := io.ReadAll(io.LimitReader(r.Body, 256<<20))
	if err != nil {
		return bad("reading the body: %v", err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		var te *json.UnmarshalTypeError
		var se *json.SyntaxError
		switch {
		case errors.As(err, &te):
			return bad("field %s: got a JSON %s, want %s", te.Field, te.Value, te.Type)
		case errors.As(err, &se):
			return bad("invalid JSON at byte %d: %v", se.Offset, err)
		default:
			return bad("invalid JSON: %v", err)
		}
	}
	return nil
}

// sequence is one generation request, read from either API.
type sequence struct {
	ids         []int
	maxNew      int
	temperature float64
	topP        float64
	topK        int
	stops       []int
	ignoreEOS   bool
	seed        *uint64
	n           int // answers asked for, each a copy of the sequence (see copies)
}

// check validates q against the model (naming field, as the API calls it)
// and returns its job.
func (s *Server) check(q sequence, field map[string]string) (*job, error) {
	inf := s.info()
	vocab, ctx := inf.cfg.VocabSize, inf.context()
	switch {
	case len(q.ids) == 0:
		return nil, bad("%s: missing or empty", field["ids"])
	case q.n < 1:
		return nil, bad("%s: %d, want at least 1", field["n"], q.n)
	case q.maxNew < 1:
		return nil, bad("%s: %d, want at least 1", field["maxNew"], q.maxNew)
	case len(q.ids)+q.maxNew > ctx:
		return nil, bad("%s: %d tokens after a prompt of %d pass the context of %d", field["maxNew"], q.maxNew, len(q.ids), ctx)
	case q.temperature < 0:
		return nil, bad("%s: %g is negative", field["temperature"], q.temperature)
	case q.topP <= 0 || q.topP > 1:
		return nil, bad("%s: %g, want (0, 1]", field["topP"], q.topP)
	case q.topK < -1:
		return nil, bad("%s: %d, want -1 (off) or more", field["topK"], q.topK)
	}
	for k, id := range q.ids {
		if id < 0 || id >= vocab {
			return nil, bad("%s[%d]: id %d outside the vocabulary [0, %d)", field["ids"], k, id, vocab)
		}
	}
	for k, id := range q.stops {
		if id < 0 || id >= vocab {
			return nil, bad("%s[%d]: id %d outside the vocabulary [0, %d)", field["stops"], k, id, vocab)
		}
	}
	stops := q.stops
	if !q.ignoreEOS {
		stops = append(stops, inf.cfg.EOSTokenIDs...)
	}
	seed := rand.Uint64()
	if q.seed != nil {
		seed = *q.seed
	}
	return &job{ids: q.ids, maxNew: q.maxNew, seed: seed, knobs: newKnobs(q.temperature, q.topP, q.topK, stops)}, nil
}

// copies returns n sequences like j, copy k drawing from
// seeding.SequenceSeed(j.seed, k) as sequence k of an in-process session of
// seed j.seed does: a request for n answers samples what the in-process
// sampler samples for n copies of its prompt. One answer is j itself.
func (j *job) copies(n int) []*job {
	if n == 1 {
		return []*job{j}
	}
	out := make([]*job, n)
	for k := range out {
		c := *j
		c.seed = seeding.SequenceSeed(j.seed, k)
		out[k] = &c
	}
	return out
}

// run submits the n copies of j (one job, or a group of n sampled as a
// batch of their own) and writes the error of a failed one; ok says they
// succeeded.
func (s *Server) run(ctx context.Context, w http.ResponseWriter, j *job, n int) ([]sample, bool) {
	if n > 1 {
		j = &job{knobs: j.knobs, group: j.copies(n)}
	}
	res := s.submit(ctx, j)
	if res.err != nil {
		writeError(w, http.StatusInternalServerError, res.err)
		return nil, false
	}
	if n > 1 {
		return res.group, true
	}
	return []sample{res.r}, true
}

// generateRequest is SGLang's /generate body, the fields this server reads.
// input_ids is one sequence or a list of them (a batch, sampled as a batch of
// its own); sampling_params one object or one per sequence.
type generateRequest struct {
	Text            any             `json:"text"`
	InputIDs        json.RawMessage `json:"input_ids"`
	ReturnLogprob   bool            `json:"return_logprob"`
	LogprobStartLen *int            `json:"logprob_start_len"` // with max_new_tokens 0: score the input from here (scoreJob)
	Stream          bool            `json:"stream"`
	SamplingParams  json.RawMessage `json:"sampling_params"`
}

// samplingParams is the part of SGLang's sampling_params this server
// samples by, pointers where SGLang has a default. Any other key is refused
// (SGLang refuses unknown ones too), but for three that only shape the text
// SGLang detokenizes, which this server, without a tokenizer, never writes.
type samplingParams struct {
	Temperature  *float64 `json:"temperature"`
	TopP         *float64 `json:"top_p"`
	TopK         *int     `json:"top_k"`
	MaxNewTokens *int     `json:"max_new_tokens"`
	StopTokenIDs []int    `json:"stop_token_ids"`
	IgnoreEOS    bool     `json:"ignore_eos"`
	SamplingSeed *uint64  `json:"sampling_seed"`
	N            *int     `json:"n"`

	NoStopTrim                 bool `json:"no_stop_trim"`
	SkipSpecialTokens          bool `json:"skip_special_tokens"`
	SpacesBetweenSpecialTokens bool `json:"spaces_between_special_tokens"`
}

// sglangFields names the fields of sequence k of a batch request (k < 0: a
// single request) as SGLang calls them.
func sglangFields(k int) map[string]string {
	ids, sp := "input_ids", "sampling_params"
	if k >= 0 {
		ids, sp = fmt.Sprintf("input_ids[%d]", k), fmt.Sprintf("sampling_params[%d]", k)
	}
	return map[string]string{"ids": ids, "maxNew": sp + ".max_new_tokens", "temperature": sp + ".temperature",
		"topP": sp + ".top_p", "topK": sp + ".top_k", "stops": sp + ".stop_token_ids", "n": sp + ".n"}
}

// decodeRaw reads raw (the JSON of field name) into v; a wrong type or a key
// v does not have is a bad request naming the field.
func decodeRaw(raw json.RawMessage, v any, name string) error {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	d := json.NewDecoder(bytes.NewReader(raw))
	d.DisallowUnknownFields()
	if err := d.Decode(v); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			return bad("field %s.%s: got a JSON %s, want %s", name, te.Field, te.Value, te.Type)
		}
		if key, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
			key = strings.Trim(key, `"`)
			if key == "stop" {
				return bad("field %s.stop: strings are not supported (the server has no tokenizer); use stop_token_ids", name)
			}
			return bad("field %s.%s: not supported by this server", name, key)
		}
		return bad("field %s: %v", name, err)
	}
	return nil
}

// isBatch reports whether raw is a list whose first item is a list.
func isBatch(raw json.RawMessage) bool {
	t := strings.TrimLeft(string(raw), " \t\r\n")
	if !strings.HasPrefix(t, "[") {
		return false
	}
	return strings.HasPrefix(strings.TrimLeft(t[1:], " \t\r\n"), "[")
}

func (s *Server) generate(w http.ResponseWriter, r *http.Request) {
	var req generateRequest
	err := decode(r, &req)
	switch {
	case err != nil:
	case req.Text != nil:
		err = bad("text: not supported (the server has no tokenizer); send input_ids")
	case req.Stream:
		err = bad("stream: not supported")
	}
	if err != nil {
		writeError(w, 0, err)
		return
	}
	if isBatch(req.InputIDs) {
		s.generateBatch(w, r, req)
		return
	}
	var ids []int
	var sp samplingParams
	if err := decodeRaw(req.InputIDs, &ids, "input_ids"); err != nil {
		writeError(w, 0, err)
		return
	}
	if err := decodeRaw(req.SamplingParams, &sp, "sampling_params"); err != nil {
		writeError(w, 0, err)
		return
	}
	if deref(sp.MaxNewTokens, 128) == 0 && req.ReturnLogprob || req.LogprobStartLen != nil {
		s.scoreInput(w, r, req, ids, sp)
		return
	}
	q := sglangSequence(ids, sp)
	j, err := s.check(q, sglangFields(-1))
	if err != nil {
		writeError(w, 0, err)
		return
	}
	res, ok := s.run(r.Context(), w, j, q.n)
	switch {
	case !ok:
	case q.n == 1:
		writeJSON(w, http.StatusOK, sglangAnswer(len(ids), res[0], req.ReturnLogprob))
	default: // as SGLang: a list of the n answers
		out := make([]engine.SGLangResponse, q.n)
		for k := range out {
			out[k] = sglangAnswer(len(ids), res[k], req.ReturnLogprob)
		}
		writeJSON(w, http.StatusOK, out)
	}
}

// generateBatch answers a batch request: the list of the sequences'
// answers, in order, a sequence with sampling_params.n > 1 giving n in a row
// (its copies, see copies).
func (s *Server) generateBatch(w http.ResponseWriter, r *http.Request, req generateRequest) {
	var ids [][]int
	if err := decodeRaw(req.InputIDs, &ids, "input_ids"); err != nil {
		writeError(w, 0, err)
		return
	}
	sps := make([]samplingParams, len(ids))
	if strings.HasPrefix(strings.TrimSpace(string(req.SamplingParams)), "[") {
		if err := decodeRaw(req.SamplingParams, &sps, "sampling_params"); err != nil {
			writeError(w, 0, err)
			return
		}
		if len(sps) != len(ids) {
			writeError(w, 0, bad("sampling_params: %d for %d sequences", len(sps), len(ids)))
			return
		}
	} else {
		var one samplingParams
		if err := decodeRaw(req.SamplingParams, &one, "sampling_params"); err != nil {
			writeError(w, 0, err)
			return
		}
		for k := range sps {
			sps[k] = one
		}
	}
	if req.LogprobStartLen != nil {
		writeError(w, 0, bad("logprob_start_len: input log-probs are served for one sequence per request, not a batch"))
		return
	}
	g := &job{}
	var prompts []int // each answer's prompt length
	for k := range ids {
		q := sglangSequence(ids[k], sps[k])
		j, err := s.check(q, sglangFields(k))
		if err == nil && k > 0 && !j.knobs.same(g.knobs) {
			err = bad("sampling_params[%d]: temperature, top_p, top_k, stop_token_ids and ignore_eos differ from sequence 0's; a batch shares them", k)
		}
		if err != nil {
			writeError(w, 0, err)
			return
		}
		g.knobs, g.group = j.knobs, append(g.group, j.copies(q.n)...)
		for range q.n {
			prompts = append(prompts, len(ids[k]))
		}
	}
	if len(g.group) == 0 {
		writeError(w, 0, bad("input_ids: an empty batch"))
		return
	}
	res := s.submit(r.Context(), g)
	if res.err != nil {
		writeError(w, http.StatusInternalServerError, res.err)
		return
	}
	out := make([]engine.SGLangResponse, len(prompts))
	for k := range out {
		out[k] = sglangAnswer(prompts[k], res.group[k], req.ReturnLogprob)
	}
	writeJSON(w, http.StatusOK, out)
}

// scoreInput answers a scoring request, SGLang's max_new_tokens 0 with
// return_logprob and logprob_start_len k: nothing is sampled, and
// meta_info.input_token_logprobs holds the log-prob of each input token from
// k on given those before it, at sampling_params.temperature (default 1).
// A distillation teacher is asked so (grpo's servedTeacher).
func (s *Server) scoreInput(w http.ResponseWriter, r *http.Request, req generateRequest, ids []int, sp samplingParams) {
	j, err := s.checkScore(req, ids, sp)
	if err != nil {
		writeError(w, 0, err)
		return
	}
	res := s.submit(r.Context(), j)
	if res.err != nil {
		writeError(w, http.StatusInternalServerError, res.err)
		return
	}
	writeJSON(w, http.StatusOK, scoreAnswer(ids, j.score.start, res.input))
}

// checkScore validates a scoring request, naming the field at fault, and
// returns its job. logprob_start_len -1 or absent is the last input token,
// as in SGLang.
func (s *Server) checkScore(req generateRequest, ids []int, sp samplingParams) (*job, error) {
	inf := s.info()
	vocab, ctx := inf.cfg.VocabSize, inf.context()
	maxNew, start, temperature := deref(sp.MaxNewTokens, 128), deref(req.LogprobStartLen, -1), deref(sp.Temperature, 1)
	if start == -1 {
		start = len(ids) - 1
	}
	switch {
	case maxNew != 0:
		return nil, bad("logprob_start_len: input log-probs are served with sampling_params.max_new_tokens 0, not %d", maxNew)
	case !req.ReturnLogprob:
		return nil, bad("return_logprob: false with sampling_params.max_new_tokens 0: nothing to return")
	case len(ids) == 0:
		return nil, bad("input_ids: missing or empty")
	case len(ids) > ctx:
		return nil, bad("input_ids: %d tokens pass the context of %d", len(ids), ctx)
	case start < 0 || start >= len(ids):
		return nil, bad("logprob_start_len: %d is outside [0, %d) (-1: the last input token)", deref(req.LogprobStartLen, -1), len(ids))
	case temperature <= 0:
		return nil, bad("sampling_params.temperature: %g, want > 0 for log-probs", temperature)
	case sp.N != nil && *sp.N != 1:
		return nil, bad("sampling_params.n: %d, want 1 for a scoring request", *sp.N)
	}
	for k, id := range ids {
		if id < 0 || id >= vocab {
			return nil, bad("input_ids[%d]: id %d outside the vocabulary [0, %d)", k, id, vocab)
		}
	}
	return &job{ids: ids, score: &scoreJob{start: start, temperature: temperature}}, nil
}

func sglangSequence(ids []int, sp samplingParams) sequence {
	return sequence{ids: ids, maxNew: deref(sp.MaxNewTokens, 128), temperature: deref(sp.Temperature, 1),
		topP: deref(sp.TopP, 1), topK: deref(sp.TopK, -1), stops: sp.StopTokenIDs, ignoreEOS: sp.IgnoreEOS, seed: sp.SamplingSeed, n: deref(sp.N, 1)}
}

// sglangAnswer is SGLang's answer for one sequence of prompt tokens.
func sglangAnswer(prompt int, res sample, logprobs bool) engine.SGLangResponse {
	out := engine.SGLangResponse{OutputIDs: res.IDs}
	out.MetaInfo.PromptTokens, out.MetaInfo.CompletionTokens = prompt, len(res.IDs)
	out.MetaInfo.CachedTokens = res.cached
	out.MetaInfo.FinishReason.Type = string(res.Finish)
	if res.Finish == sampler.Stop {
		out.MetaInfo.FinishReason.Matched = res.IDs[len(res.IDs)-1]
	}
	if logprobs {
		out.MetaInfo.OutputTokenLogprobs = make([]engine.TokenLogprob, len(res.IDs))
		for k := range res.IDs {
			lp, id := float64(res.LogProbs[k]), res.IDs[k]
			out.MetaInfo.OutputTokenLogprobs[k] = engine.TokenLogprob{LogProb: &lp, ID: &id}
		}
	}
	return out
}

// completionsRequest is the /v1/completions body, the fields this server
// reads.
type completionsRequest struct {
	Prompt         any      `json:"prompt"`
	MaxTokens      *int     `json:"max_tokens"`
	Temperature    *float64 `json:"temperature"`
	TopP           *float64 `json:"top_p"`
	TopK           *int     `json:"top_k"`
	StopTokenIDs   []int    `json:"stop_token_ids"`
	IgnoreEOS      bool     `json:"ignore_eos"`
	Seed           *uint64  `json:"seed"`
	Logprobs       *int     `json:"logprobs"`
	ReturnTokenIDs bool     `json:"return_token_ids"`
	N              *int     `json:"n"`
	Stream         bool     `json:"stream"`
	Stop           any      `json:"stop"`
}

var openAIFields = map[string]string{"ids": "prompt", "maxNew": "max_tokens", "temperature": "temperature",
	"topP": "top_p", "topK": "top_k", "stops": "stop_token_ids", "n": "n"}

func (s *Server) completions(w http.ResponseWriter, r *http.Request) {
	var req completionsRequest
	if err := decode(r, &req); err != nil {
		writeError(w, 0, err)
		return
	}
	ids, err := tokenPrompt(req.Prompt)
	if err == nil {
		switch {
		case req.Stream:
			err = bad("stream: not supported")
		case req.Stop != nil:
			err = bad("stop: strings are not supported (the server has no tokenizer); use stop_token_ids")
		case req.Logprobs != nil && *req.Logprobs != 0:
			err = bad("logprobs: %d, want 0 (the sampled token's log-prob only)", *req.Logprobs)
		}
	}
	if err != nil {
		writeError(w, 0, err)
		return
	}
	q := sequence{ids: ids, maxNew: deref(req.MaxTokens, 16), temperature: deref(req.Temperature, 1), topP: deref(req.TopP, 1),
		topK: deref(req.TopK, -1), stops: req.StopTokenIDs, ignoreEOS: req.IgnoreEOS, seed: req.Seed, n: deref(req.N, 1)}
	j, err := s.check(q, openAIFields)
	if err != nil {
		writeError(w, 0, err)
		return
	}
	res, ok := s.run(r.Context(), w, j, q.n)
	if !ok {
		return
	}
	choices := make([]engine.OpenAIChoice, len(res))
	for c, sm := range res {
		ch := engine.OpenAIChoice{Index: c, FinishReason: string(sm.Finish)}
		if req.ReturnTokenIDs {
			ch.TokenIDs = sm.IDs
		}
		if req.Logprobs != nil {
			ch.Logprobs = &engine.OpenAILogprobs{TokenLogprobs: make([]*float64, len(sm.IDs))}
			for k := range sm.IDs {
				lp := float64(sm.LogProbs[k])
				ch.Logprobs.TokenLogprobs[k] = &lp
			}
		}
		choices[c] = ch
	}
	writeJSON(w, http.StatusOK, engine.OpenAIResponse{Object: "text_completion", Model: s.info().path, Choices: choices})
}

// tokenPrompt reads a prompt of token ids; text is refused.
func tokenPrompt(p any) ([]int, error) {
	list, ok := p.([]any)
	if !ok {
		if _, isText := p.(string); isText {
			return nil, bad("prompt: text is not supported (the server has no tokenizer); send token ids")
		}
		return nil, bad("prompt: want a list of token ids")
	}
	ids := make([]int, len(list))
	for k, v := range list {
		f, ok := v.(float64)
		if !ok || f != float64(int(f)) {
			return nil, bad("prompt[%d]: %v is not a token id", k, v)
		}
		ids[k] = int(f)
	}
	return ids, nil
}

func deref[T any](p *T, def T) T {
	if p == nil {
		return def
	}
	return *p
}

func (s *Server) healthGenerate(w http.ResponseWriter, r *http.Request) {
	j, err := s.check(sequence{ids: []int{0}, maxNew: 1, topP: 1, ignoreEOS: true, n: 1}, sglangFields(-1))
	if err != nil {
		writeError(w, http.StatusInternalServerError, err)
		return
	}
	if _, ok := s.run(r.Context(), w, j, 1); ok {
		w.WriteHeader(http.StatusOK)
	}
}

func (s *Server) modelInfo(w http.ResponseWriter, _ *http.Request) {
	inf := s.info()
	writeJSON(w, http.StatusOK, map[string]any{"model_path": inf.path, "tokenizer_path": inf.path, "is_generation": true,
		"weight_version": inf.version})
}

func (s *Server) serverInfo(w http.ResponseWriter, _ *http.Request) {
	inf := s.info()
	out := map[string]any{"model_path": inf.path, "weight_version": inf.version,
		"max_running_requests": s.opt.MaxBatch, "context_length": inf.context(), "vocab_size": inf.cfg.VocabSize,
		"dtype": s.opt.DType.String(), "backend": s.opt.Backend.String(), "prefix_cache": nil}
	if s.prefixes != nil {
		out["prefix_cache"] = s.prefixes.Stats()
	}
	writeJSON(w, http.StatusOK, out)
}

// flushCache empties the prompt cache, as SGLang's /flush_cache empties its
// radix cache.
func (s *Server) flushCache(w http.ResponseWriter, _ *http.Request) {
	if s.prefixes == nil {
		writeJSON(w, http.StatusOK, map[string]any{"success": true, "message": "no prefix cache"})
		return
	}
	s.prefixes.Flush()
	writeJSON(w, http.StatusOK, map[string]any{"success": true, "message": "prefix cache flushed"})
}

// updateRequest is SGLang's /update_weights_from_disk body.
type updateRequest struct {
	ModelPath     string  `json:"model_path"`
	WeightVersion *string `json:"weight_version"`
}

// updateWeights loads the folder (one inside the weights root, when one is
// set: confine), checks it is the same architecture, and
// has the scheduler use it once the running batch has drained.
func (s *Server) updateWeights(w http.ResponseWriter, r *http.Request) {
	var req updateRequest
	if err := decode(r, &req); err != nil {
		writeError(w, 0, err)
		return
	}
	if strings.TrimSpace(req.ModelPath) == "" {
		writeJSON(w, http.StatusBadRequest, map[string]any{"success": false, "message": "model_path: missing"})
		return
	}
	dir, err := s.confine(req.ModelPath)
	if err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]any{"success": false, "message": err.Error()})
		return
	}
	m, err := qwen3.LoadOn(s.opt.Backend, dir, s.opt.DType)
	if err == nil {
		err = sameShape(s.info().cfg, m.Config)
	}
	if err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]any{"success": false, "message": fmt.Sprintf("model_path: %v", err)})
		return
	}
	version := deref(req.WeightVersion, req.ModelPath)
	if res := s.submit(r.Context(), &job{update: &update{model: m, path: req.ModelPath, version: version}}); res.err != nil {
		writeJSON(w, http.StatusInternalServerError, map[string]any{"success": false, "message": res.err.Error()})
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"success": true, "message": "weights updated to version " + version, "num_paused_requests": 0})
}

// sameShape refuses weights of another architecture than the served one.
func sameShape(a, b qwen3.Config) error {
	if a.VocabSize != b.VocabSize || a.Hidden != b.Hidden || a.Layers != b.Layers || a.Heads != b.Heads || a.KVHeads != b.KVHeads ||
		a.HeadDim != b.HeadDim {
		return errors.New("another architecture than the served model's")
	}
	return nil
}
