package engine

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mathrl/mathrl/gomlx_trainer/seeding"
	"github.com/mathrl/mathrl/gomlx_trainer/toolloop"
)

// The protocols a Client speaks.
const (
	SGLang = "sglang" // SGLang's native POST /generate, as slime sends it
	OpenAI = "openai" // the OpenAI POST /v1/completions with a token-id prompt, as vLLM serves it for TRL and AReaL
)

// Protocols are the names of the engines that sample on servers.
func Protocols() []string { return []string{SGLang, OpenAI} }

func init() {
	for _, p := range Protocols() {
		Register(Spec{Name: p, Check: checkServers, New: newServersEngine})
	}
}

// checkServers is the check of the engines that sample on servers: at least
// one server, every URL http:// or https://, and several sequences a request
// only in SGLang's protocol.
func checkServers(c Config) error {
	switch {
	case len(c.URLs) == 0:
		return badField("rollout_engine_urls", "empty, but rollout_engine %s needs a server", c.Name)
	case c.Batch < 0:
		return badField("rollout_engine_batch", "%d is negative", c.Batch)
	case c.Batch > 0 && c.Name != SGLang:
		return badField("rollout_engine_batch", "%d, but only rollout_engine %s sends several sequences a request", c.Batch, SGLang)
	}
	for _, u := range c.URLs {
		if !strings.HasPrefix(u, "http://") && !strings.HasPrefix(u, "https://") {
			return badField("rollout_engine_urls", "%q, want http:// or https://", u)
		}
	}
	return nil
}

// newServersEngine is the Client of c's servers, which brings them to p's
// weights at each Sync: p's checkpoint folder as it is, or p saved into
// weights_dir. It sends c's API key, else $MATHRL_ROLLOUT_API_KEY's.
func newServersEngine(c Config, p Policy) (Engine, error) {
	w := &Weights{Dir: c.WeightsDir, Write: p.Save, Checkpoint: p.Checkpoint, Untied: p.Untied, Warn: c.Warn}
	if w.Checkpoint == "" && (w.Dir == "" || w.Write == nil) {
		return nil, errors.New("engine: servers need the policy's checkpoint folder, or a weights_dir and a way to save the weights into it")
	}
	return NewClient(ClientOptions{Protocol: c.Name, URLs: c.URLs, Vocab: p.Vocab, Batch: c.Batch, Weights: w,
		APIKey: cmp.Or(c.APIKey, os.Getenv(APIKeyEnv))})
}

// ClientOptions say which servers a Client talks to, and how.
type ClientOptions struct {
	Protocol    string   // SGLang or OpenAI
	URLs        []string // a router, a server or several (base URLs); requests go round them in turn
	Vocab       int      // the policy's vocabulary: an id at or past it in a response is malformed
	Concurrency int      // requests in flight at once, over every session (0: 64)
	// Batch 0 sends each sequence of a turn in its own request (as slime
	// does, so that a router spreads them); n > 0 sends up to n in one
	// SGLang request, as a list of input_ids, which a mathrl serve worker
	// samples as one batch of its own, as the in-process sampler would. OpenAI
	// requests carry one sequence each.
	Batch   int
	Retries int           // further tries of a request after a connection error or a 5xx, each on the next URL (0: 5)
	Backoff time.Duration // wait before the first retry, doubled before each next (0: 200 ms)
	HTTP    *http.Client  // nil: http.DefaultClient
	Weights *Weights      // how Sync brings the servers to the policy's weights (nil: it can only check they are there)
	// APIKey, when set, is sent with every request as Authorization: Bearer
	// <key>, as the servers' (or the router's) --api-key wants it. It is
	// never logged nor put in an error.
	APIKey string
}

// APIKeyEnv is the environment variable a run reads the servers' API key
// from when its config sets none, and mathrl serve when --api-key is not
// given.
const APIKeyEnv = "MATHRL_ROLLOUT_API_KEY"

// ErrUnauthorized is wrapped by the error of a request a server answered
// 401 or 403: the API key is missing or wrong. It is never retried.
var ErrUnauthorized = errors.New("the server refused the API key: set rollout_engine_api_key or $" + APIKeyEnv + " to its --api-key")

// Client is an engine that samples on inference servers over HTTP. Each
// sequence of a turn is one request carrying the whole sequence so far (the
// server's prefix cache spares recomputing it) and the sequence's seed.
type Client struct {
	opt  ClientOptions
	sem  chan struct{}
	mu   sync.Mutex
	next int // the URL of the next request

	syncMu sync.Mutex // serialises Sync

	vllmLoaded map[string]vllmLoad // by URL, what Sync loaded into each vLLM server (guarded by mu)

	// pause waits d before a retry, or until ctx ends; nil waits on a timer.
	// Tests set it to see the waits without taking them.
	pause func(ctx context.Context, d time.Duration) error
}

// NewClient checks opt and returns its client.
func NewClient(opt ClientOptions) (*Client, error) {
	if !slices.Contains(Protocols(), opt.Protocol) {
		return nil, fmt.Errorf("engine: protocol %q, want one of %q", opt.Protocol, Protocols())
	}
	if err := checkServers(Config{Name: opt.Protocol, URLs: opt.URLs, Batch: opt.Batch}); err != nil {
		return nil, fmt.Errorf("engine: %w", err)
	}
	if opt.Vocab < 1 {
		return nil, fmt.Errorf("engine: vocabulary of %d ids", opt.Vocab)
	}
	opt.URLs = slices.Clone(opt.URLs) // the client trims its own copy, and drops workers from it, never the caller's
	for i, u := range opt.URLs {
		opt.URLs[i] = strings.TrimRight(u, "/")
	}
	if opt.Concurrency <= 0 {
		opt.Concurrency = 64
	}
	if opt.Retries <= 0 {
		opt.Retries = 5
	}
	if opt.Backoff <= 0 {
		opt.Backoff = 200 * time.Millisecond
	}
	if opt.HTTP == nil {
		opt.HTTP = http.DefaultClient
	}
	return &Client{opt: opt, sem: make(chan struct{}, opt.Concurrency)}, nil
}

// Start begins a session over prompts; it sends nothing yet.
func (c *Client) Start(_ context.Context, prompts [][]int, opts Options) (Session, error) {
	if len(prompts) == 0 {
		return nil, errors.New("engine: no prompts")
	}
	s := &clientSession{c: c, opts: opts, seqs: make([][]int, len(prompts)), seeds: make([]uint64, len(prompts))}
	for i, p := range prompts {
		if len(p) == 0 {
			return nil, fmt.Errorf("engine: prompt %d is empty", i)
		}
		s.seqs[i], s.seeds[i] = slices.Clone(p), seeding.SequenceSeed(opts.Seed, i)
	}
	return s, nil
}

// clientSession is one batch of sequences sampled on the servers; it keeps
// each whole sequence, prompt included, to send with its next turn.
type clientSession struct {
	c     *Client
	opts  Options
	seqs  [][]int
	seeds []uint64
	mu    sync.Mutex // serialises calls of step
}

// Generate sends the active sequences, Batch to a request (one each for
// OpenAI), at most the client's concurrency of requests at once, and returns
// when all have answered; the first error cancels the others. Each answered
// sequence is one step report (a server's decoding steps are its own).
func (s *clientSession) Generate(ctx context.Context, active, maxNew []int, step func(toolloop.StepReport)) ([]toolloop.Turn, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	reqs := make([]request, len(active))
	for j, i := range active {
		if i < 0 || i >= len(s.seqs) {
			return nil, fmt.Errorf("engine: sequence %d of %d", i, len(s.seqs))
		}
		reqs[j] = request{seq: i, ids: s.seqs[i], maxNew: maxNew[j], seed: s.seeds[i], opts: s.opts}
	}
	size := max(s.c.opt.Batch, 1)
	turns := make([]toolloop.Turn, len(active))
	var errs []error
	var errMu sync.Mutex
	var wg sync.WaitGroup
	for lo := 0; lo < len(reqs); lo += size {
		hi := min(lo+size, len(reqs))
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := s.send(ctx, reqs[lo:hi], turns[lo:hi], step)
			if err != nil {
				cancel()
				errMu.Lock()
				errs = append(errs, err)
				errMu.Unlock()
			}
		}()
	}
	wg.Wait()
	if err := firstError(errs); err != nil {
		return nil, err
	}
	for j, i := range active {
		s.seqs[i] = append(s.seqs[i], turns[j].IDs...)
	}
	return turns, nil
}

// send sends one request of reqs, within the client's concurrency, fills in
// their turns and reports each to step.
func (s *clientSession) send(ctx context.Context, reqs []request, turns []toolloop.Turn, step func(toolloop.StepReport)) error {
	select {
	case s.c.sem <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { <-s.c.sem }()
	got, err := s.c.generate(ctx, reqs)
	if err != nil {
		return err
	}
	copy(turns, got)
	if step != nil {
		s.mu.Lock()
		defer s.mu.Unlock()
		for _, tr := range got {
			step(toolloop.StepReport{Sampled: len(tr.IDs), Stopped: []int{lastID(tr.IDs)}})
		}
	}
	return nil
}

// firstError is the first error of errs that is not a cancellation caused by
// another, else the first error.
func firstError(errs []error) error {
	var first error
	for _, err := range errs {
		if err != nil && !errors.Is(err, context.Canceled) {
			return err
		}
		if first == nil {
			first = err
		}
	}
	return first
}

func lastID(ids []int) int {
	if len(ids) == 0 {
		return -1
	}
	return ids[len(ids)-1]
}

// Append adds ids to the end of sequence i; its next request carries them.
func (s *clientSession) Append(i int, ids []int) error {
	if i < 0 || i >= len(s.seqs) {
		return fmt.Errorf("engine: append to sequence %d of %d", i, len(s.seqs))
	}
	for k, id := range ids {
		if id < 0 || id >= s.c.opt.Vocab {
			return fmt.Errorf("engine: append to sequence %d: token %d is id %d, outside the vocabulary [0, %d)", i, k, id, s.c.opt.Vocab)
		}
	}
	s.seqs[i] = append(s.seqs[i], ids...)
	return nil
}

// Close does nothing: the servers keep no session.
func (s *clientSession) Close() {}

// request is one sequence's turn.
type request struct {
	seq    int   // the sequence's index in its session, for errors
	ids    []int // the whole sequence so far
	maxNew int
	seed   uint64
	opts   Options
}

// generate sends reqs in one request, retrying connection errors and 5xx on
// the next URL after a growing wait, and checks the answer.
func (c *Client) generate(ctx context.Context, reqs []request) ([]toolloop.Turn, error) {
	path, body := c.body(reqs)
	data, err := json.Marshal(body)
	if err != nil {
		return nil, err
	}
	wait := c.opt.Backoff
	for try := 0; ; try++ {
		url := c.nextURL() + path
		what := fmt.Sprintf("engine: %s request for %s to %s", c.opt.Protocol, describe(reqs), url)
		status, resp, err := c.post(ctx, url, data)
		switch {
		case err == nil && status == http.StatusOK:
			turns, err := c.parse(resp, reqs)
			if err != nil {
				return nil, fmt.Errorf("%s: malformed response: %w", what, err)
			}
			return turns, nil
		case ctx.Err() != nil:
			return nil, ctx.Err()
		case errors.Is(err, ErrUnauthorized):
			return nil, fmt.Errorf("%s: %w", what, err)
		case err == nil && status < 500:
			return nil, fmt.Errorf("%s: status %d: %s", what, status, snippet(resp))
		case try >= c.opt.Retries:
			if err == nil {
				err = fmt.Errorf("status %d: %s", status, snippet(resp))
			}
			return nil, fmt.Errorf("%s: %w (after %d tries)", what, err, try+1)
		}
		if err := c.sleep(ctx, wait); err != nil {
			return nil, err
		}
		wait *= 2
	}
}

// sleep waits d before a retry, or until ctx ends (then its error).
func (c *Client) sleep(ctx context.Context, d time.Duration) error {
	if c.pause != nil {
		return c.pause(ctx, d)
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// describe names the sequences of reqs, for errors.
func describe(reqs []request) string {
	if len(reqs) == 1 {
		return fmt.Sprintf("sequence %d (%d tokens)", reqs[0].seq, len(reqs[0].ids))
	}
	seqs := make([]string, len(reqs))
	for k, r := range reqs {
		seqs[k] = fmt.Sprint(r.seq)
	}
	return fmt.Sprintf("sequences %s", strings.Join(seqs, ", "))
}

func (c *Client) nextURL() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	u := c.opt.URLs[c.next%len(c.opt.URLs)]
	c.next++
	return u
}

// post sends data and returns the status and the body; err is a failure to
// connect or to read.
func (c *Client) post(ctx context.Context, url string, data []byte) (int, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(data))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	return c.send(req)
}

// send sends req, with the API key when there is one, and returns the status
// and the body (at most 64 MiB); err is a failure to connect or to read, or
// ErrUnauthorized for a 401 or 403.
func (c *Client) send(req *http.Request) (int, []byte, error) {
	if c.opt.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+c.opt.APIKey)
	}
	resp, err := c.opt.HTTP.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return 0, nil, err
	}
	if resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden {
		return resp.StatusCode, body, fmt.Errorf("status %d: %w", resp.StatusCode, ErrUnauthorized)
	}
	return resp.StatusCode, body, nil
}

// snippet is the start of a response body, for errors.
func snippet(b []byte) string {
	s := strings.TrimSpace(string(b))
	if len(s) > 200 {
		s = s[:200] + "..."
	}
	return s
}

// body returns the path and JSON body of reqs in the client's protocol: a
// list of input_ids in batch mode (Batch > 0), else one sequence.
func (c *Client) body(reqs []request) (string, any) {
	if c.opt.Batch == 0 {
		return c.bodyOf(reqs[0])
	}
	batch := SGLangBatchRequest{ReturnLogprob: true}
	for _, r := range reqs {
		_, one := c.bodyOf(r)
		batch.InputIDs = append(batch.InputIDs, r.ids)
		batch.SamplingParams = append(batch.SamplingParams, one.(SGLangRequest).SamplingParams)
	}
	return "/generate", batch
}

// bodyOf returns the path and JSON body of one sequence's request.
func (c *Client) bodyOf(r request) (string, any) {
	o := r.opts
	// Off is top_p 1 and top_k -1, the whole vocabulary to SGLang (which
	// refuses 0) and to vLLM (TestClientTopKOffOnTheWire cites both).
	topP, topK := o.TopP, o.TopK
	if topP <= 0 {
		topP = 1
	}
	if topK <= 0 {
		topK = -1
	}
	if c.opt.Protocol == OpenAI {
		return "/v1/completions", OpenAIRequest{
			Prompt: r.ids, MaxTokens: r.maxNew, Temperature: o.Temperature, TopP: topP, TopK: topK,
			StopTokenIDs: o.StopIDs, IgnoreEOS: true, Seed: r.seed, Logprobs: 0, ReturnTokenIDs: true, SkipSpecialTokens: false,
		}
	}
	return "/generate", SGLangRequest{
		InputIDs: r.ids, ReturnLogprob: true,
		SamplingParams: SGLangSampling{
			Temperature: o.Temperature, TopP: topP, TopK: topK, MaxNewTokens: r.maxNew,
			StopTokenIDs: o.StopIDs, IgnoreEOS: true, NoStopTrim: true, SkipSpecialTokens: false, SamplingSeed: r.seed,
		},
	}
}

// parse reads the response to reqs: a list of one answer per sequence in
// batch mode, else one answer.
func (c *Client) parse(data []byte, reqs []request) ([]toolloop.Turn, error) {
	if c.opt.Batch == 0 {
		turn, err := c.parseOne(data, reqs[0])
		return []toolloop.Turn{turn}, err
	}
	var list []json.RawMessage
	if err := json.Unmarshal(data, &list); err != nil {
		return nil, fmt.Errorf("want a list of %d answers: %w", len(reqs), err)
	}
	if len(list) != len(reqs) {
		return nil, fmt.Errorf("%d answers for %d sequences", len(list), len(reqs))
	}
	turns := make([]toolloop.Turn, len(reqs))
	for k, r := range reqs {
		var err error
		if turns[k], err = c.parseOne(list[k], r); err != nil {
			return nil, fmt.Errorf("sequence %d: %w", r.seq, err)
		}
	}
	return turns, nil
}

// parseOne reads the answer to r and checks it: ids and log-probs of equal
// length, at least one and at most r.maxNew, every id in the vocabulary.
func (c *Client) parseOne(data []byte, r request) (toolloop.Turn, error) {
	var ids []int
	var lps []float64
	var finish string
	if c.opt.Protocol == OpenAI {
		var resp OpenAIResponse
		if err := json.Unmarshal(data, &resp); err != nil {
			return toolloop.Turn{}, err
		}
		if len(resp.Choices) != 1 {
			return toolloop.Turn{}, fmt.Errorf("%d choices, want 1", len(resp.Choices))
		}
		ch := resp.Choices[0]
		if ch.TokenIDs == nil {
			return toolloop.Turn{}, errors.New("choices[0].token_ids is missing")
		}
		if ch.Logprobs == nil {
			return toolloop.Turn{}, errors.New("choices[0].logprobs is missing")
		}
		ids, finish = ch.TokenIDs, ch.FinishReason
		for k, lp := range ch.Logprobs.TokenLogprobs {
			if lp == nil {
				return toolloop.Turn{}, fmt.Errorf("choices[0].logprobs.token_logprobs[%d] is null", k)
			}
			lps = append(lps, *lp)
		}
	} else {
		var resp SGLangResponse
		if err := json.Unmarshal(data, &resp); err != nil {
			return toolloop.Turn{}, err
		}
		if resp.MetaInfo.OutputTokenLogprobs == nil {
			return toolloop.Turn{}, errors.New("meta_info.output_token_logprobs is missing")
		}
		for k, e := range resp.MetaInfo.OutputTokenLogprobs {
			if e.LogProb == nil || e.ID == nil {
				return toolloop.Turn{}, fmt.Errorf("meta_info.output_token_logprobs[%d] lacks its log-prob or its id", k)
			}
			ids, lps = append(ids, *e.ID), append(lps, *e.LogProb)
		}
		finish = resp.MetaInfo.FinishReason.Type
	}
	switch {
	case finish == "abort":
		return toolloop.Turn{}, errors.New("the server aborted the request")
	case len(ids) != len(lps):
		return toolloop.Turn{}, fmt.Errorf("%d ids and %d log-probs", len(ids), len(lps))
	case len(ids) == 0 || len(ids) > r.maxNew:
		return toolloop.Turn{}, fmt.Errorf("%d ids, want 1 to %d", len(ids), r.maxNew)
	}
	turn := toolloop.Turn{IDs: ids, LogProbs: make([]float32, len(lps))}
	for k, id := range ids {
		if id < 0 || id >= c.opt.Vocab {
			return toolloop.Turn{}, fmt.Errorf("id %d (token %d) outside the vocabulary [0, %d)", id, k, c.opt.Vocab)
		}
		turn.LogProbs[k] = float32(lps[k])
	}
	return turn, nil
}
