package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mathrl/mathrl/gomlx_trainer/seeding"
	"github.com/mathrl/mathrl/gomlx_trainer/toolloop"
)

// fakeServer answers /generate and /v1/completions with the tokens reply
// gives, in each protocol's shape, and keeps every request body as a map.
type fakeServer struct {
	mu     sync.Mutex
	bodies []map[string]any
	reply  func(body map[string]any) (ids []int, lps []float64, finish string)
	status []int // statuses of the first requests, before normal answers
}

func (f *fakeServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var body map[string]any
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		http.Error(w, err.Error(), 400)
		return
	}
	f.mu.Lock()
	f.bodies = append(f.bodies, body)
	if len(f.status) > 0 {
		code := f.status[0]
		f.status = f.status[1:]
		f.mu.Unlock()
		http.Error(w, "scripted failure", code)
		return
	}
	f.mu.Unlock()
	ids, lps, finish := f.reply(body)
	var out any
	switch r.URL.Path {
	case "/generate":
		entries := make([][]any, max(len(ids), len(lps)))
		for k := range entries {
			switch {
			case k < len(ids) && k < len(lps):
				entries[k] = []any{lps[k], ids[k], nil}
			case k < len(lps):
				entries[k] = []any{lps[k]}
			default:
				entries[k] = []any{nil, ids[k], nil}
			}
		}
		out = map[string]any{"text": "", "meta_info": map[string]any{"output_token_logprobs": entries, "finish_reason": map[string]any{"type": finish}}}
	case "/v1/completions":
		out = map[string]any{"choices": []any{map[string]any{"index": 0, "text": "", "token_ids": ids, "finish_reason": finish,
			"logprobs": map[string]any{"token_logprobs": lps}}}}
	default:
		http.NotFound(w, r)
		return
	}
	_ = json.NewEncoder(w).Encode(out)
}

// echoReply answers with the last input id + 1, then + 2, ... up to
// max_new_tokens, log-prob -k/10 for the k-th.
func echoReply(body map[string]any) ([]int, []float64, string) {
	in, n := body["input_ids"], body["sampling_params"]
	if in == nil {
		in, n = body["prompt"], map[string]any{"max_new_tokens": body["max_tokens"]}
	}
	ids := in.([]any)
	last := int(ids[len(ids)-1].(float64))
	maxNew := int(n.(map[string]any)["max_new_tokens"].(float64))
	var out []int
	var lps []float64
	for k := 1; k <= maxNew; k++ {
		out, lps = append(out, last+k), append(lps, -float64(k)/10)
	}
	return out, lps, "length"
}

func newClient(t *testing.T, protocol string, urls ...string) *Client {
	t.Helper()
	c, err := NewClient(ClientOptions{Protocol: protocol, URLs: urls, Vocab: 100, Backoff: 1})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestClientWire runs two turns of two sequences, a tool response appended
// between them, in both protocols: each request carries the whole sequence
// so far, the sampling knobs under the protocol's names and the sequence's
// seed, and the turns are the servers' tokens and log-probs.
func TestClientWire(t *testing.T) {
	for _, protocol := range Protocols() {
		t.Run(protocol, func(t *testing.T) {
			f := &fakeServer{reply: echoReply}
			srv := httptest.NewServer(f)
			defer srv.Close()
			c := newClient(t, protocol, srv.URL)
			opts := Options{MaxNewTokens: 10, Temperature: 0.7, TopP: 0.9, TopK: 5, StopIDs: []int{3, 4}, Seed: 11}
			sess, err := c.Start(context.Background(), [][]int{{10, 11}, {20}}, opts)
			if err != nil {
				t.Fatal(err)
			}
			var steps []toolloop.StepReport
			turns, err := sess.Generate(context.Background(), []int{0, 1}, []int{2, 3}, func(r toolloop.StepReport) { steps = append(steps, r) })
			if err != nil {
				t.Fatal(err)
			}
			want := []toolloop.Turn{{IDs: []int{12, 13}, LogProbs: []float32{-0.1, -0.2}}, {IDs: []int{21, 22, 23}, LogProbs: []float32{-0.1, -0.2, -0.3}}}
			if !reflect.DeepEqual(turns, want) {
				t.Errorf("turns %+v, want %+v", turns, want)
			}
			if len(steps) != 2 || steps[0].Sampled+steps[1].Sampled != 5 {
				t.Errorf("step reports %+v, want one per request, 5 tokens in all", steps)
			}
			if err := sess.Append(1, []int{50, 51}); err != nil {
				t.Fatal(err)
			}
			if _, err := sess.Generate(context.Background(), []int{1}, []int{1}, nil); err != nil {
				t.Fatal(err)
			}
			bySeq := map[float64]map[string]any{} // first input id -> the last request of that sequence
			for _, b := range f.bodies {
				in := b["input_ids"]
				if protocol == OpenAI {
					in = b["prompt"]
				}
				bySeq[in.([]any)[0].(float64)] = b
			}
			last := bySeq[20]
			checkBody(t, protocol, last, []int{20, 21, 22, 23, 50, 51}, 1, seeding.SequenceSeed(11, 1))
			checkBody(t, protocol, bySeq[10], []int{10, 11}, 2, seeding.SequenceSeed(11, 0))
		})
	}
}

// checkBody checks one request body against the knobs of TestClientWire.
func checkBody(t *testing.T, protocol string, b map[string]any, ids []int, maxNew int, seed uint64) {
	t.Helper()
	var in []int
	key := map[bool]string{true: "prompt", false: "input_ids"}[protocol == OpenAI]
	for _, v := range b[key].([]any) {
		in = append(in, int(v.(float64)))
	}
	if !slices.Equal(in, ids) {
		t.Errorf("%s %v, want the whole sequence %v", key, in, ids)
	}
	// The seed is compared as JSON text: a uint64 does not fit a float64.
	var want map[string]any
	if protocol == OpenAI {
		want = map[string]any{"max_tokens": maxNew, "temperature": 0.7, "top_p": 0.9, "top_k": 5, "stop_token_ids": []int{3, 4}, "ignore_eos": true,
			"logprobs": 0, "return_token_ids": true, "skip_special_tokens": false}
	} else {
		want = map[string]any{"return_logprob": true, "sampling_params": map[string]any{"max_new_tokens": maxNew, "temperature": 0.7,
			"top_p": 0.9, "top_k": 5, "stop_token_ids": []int{3, 4}, "ignore_eos": true, "no_stop_trim": true, "skip_special_tokens": false}}
	}
	raw := fmt.Sprint(b["seed"])
	got := map[string]any{}
	for k := range want {
		got[k] = b[k]
	}
	if sp, ok := got["sampling_params"].(map[string]any); ok {
		raw = fmt.Sprint(sp["sampling_seed"])
		sp = maps.Clone(sp)
		delete(sp, "sampling_seed")
		got["sampling_params"] = sp
	}
	if a, w := jsonText(t, got), jsonText(t, want); a != w {
		t.Errorf("request %s, want %s", a, w)
	}
	if raw != fmt.Sprint(float64(seed)) {
		t.Errorf("seed %s, want %d", raw, seed)
	}
}

func jsonText(t *testing.T, v any) string {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// TestClientRetries: two 503s are retried and the third try answers; a
// refused connection moves on to the next URL; a 400 is not retried, and its
// error names the sequence and the status; retries run out with an error.
func TestClientRetries(t *testing.T) {
	ctx := context.Background()
	f := &fakeServer{reply: echoReply, status: []int{503, 503}}
	srv := httptest.NewServer(f)
	defer srv.Close()
	dead := httptest.NewServer(http.NotFoundHandler())
	dead.Close() // a URL that refuses connections

	c := newClient(t, SGLang, dead.URL, srv.URL)
	sess, _ := c.Start(ctx, [][]int{{1}}, Options{})
	if _, err := sess.Generate(ctx, []int{0}, []int{1}, nil); err != nil {
		t.Fatalf("after two 503s and a refused connection: %v", err)
	}
	if len(f.bodies) != 3 {
		t.Errorf("%d requests reached the server, want 3 (two 503s, then the answer)", len(f.bodies))
	}

	f.bodies, f.status = nil, []int{400}
	_, err := sess.Generate(ctx, []int{0}, []int{1}, nil)
	if err == nil || !strings.Contains(err.Error(), "sequence 0") || !strings.Contains(err.Error(), "status 400") || len(f.bodies) != 1 {
		t.Errorf("a 400: %v after %d requests; want one request and an error naming sequence 0 and the status", err, len(f.bodies))
	}

	f.bodies, f.status = nil, []int{500, 500, 500, 500, 500, 500}
	if _, err := sess.Generate(ctx, []int{0}, []int{1}, nil); err == nil || !strings.Contains(err.Error(), "after 6 tries") {
		t.Errorf("six 500s: %v, want the error after 6 tries", err)
	}
}

// TestClientRejectsMalformedResponses: missing ids, log-probs of the wrong
// length, an id past the vocabulary, no token and an aborted request are each
// an error naming the request, in both protocols.
func TestClientRejectsMalformedResponses(t *testing.T) {
	replies := map[string]func(map[string]any) ([]int, []float64, string){
		"fewer log-probs": func(map[string]any) ([]int, []float64, string) { return []int{5, 6}, []float64{-1}, "stop" },
		"id past vocab":   func(map[string]any) ([]int, []float64, string) { return []int{5, 100}, []float64{-1, -1}, "stop" },
		"negative id":     func(map[string]any) ([]int, []float64, string) { return []int{-1}, []float64{-1}, "stop" },
		"no token":        func(map[string]any) ([]int, []float64, string) { return []int{}, []float64{}, "stop" },
		"too many": func(map[string]any) ([]int, []float64, string) {
			return []int{5, 6, 7, 8}, []float64{-1, -1, -1, -1}, "length"
		},
		"aborted": func(map[string]any) ([]int, []float64, string) { return []int{5}, []float64{-1}, "abort" },
	}
	for _, protocol := range Protocols() {
		for name, reply := range replies {
			if name == "aborted" && protocol == OpenAI {
				continue
			}
			f := &fakeServer{reply: reply}
			srv := httptest.NewServer(f)
			c := newClient(t, protocol, srv.URL)
			sess, _ := c.Start(context.Background(), [][]int{{1}, {2}}, Options{})
			_, err := sess.Generate(context.Background(), []int{1}, []int{3}, nil)
			if err == nil || !strings.Contains(err.Error(), "sequence 1") || !strings.Contains(err.Error(), "malformed") {
				t.Errorf("%s, %s: %v; want a malformed-response error naming sequence 1", protocol, name, err)
			}
			srv.Close()
		}
	}
	for _, protocol := range Protocols() {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			_, _ = w.Write([]byte(`{"meta_info": {"finish_reason": {"type": "stop"}}, "choices": [{"logprobs": {"token_logprobs": []}}]}`))
		}))
		c := newClient(t, protocol, srv.URL)
		sess, _ := c.Start(context.Background(), [][]int{{1}}, Options{})
		if _, err := sess.Generate(context.Background(), []int{0}, []int{3}, nil); err == nil || !strings.Contains(err.Error(), "missing") {
			t.Errorf("%s, ids missing: %v; want an error saying so", protocol, err)
		}
		srv.Close()
	}
}

// TestClientBoundsConcurrency sends five sequences with a concurrency of 2:
// the server holds the first two requests until it has both, and at that
// point both of the client's slots are taken, so the other three wait; no
// more than two are ever in flight, and all five are answered.
func TestClientBoundsConcurrency(t *testing.T) {
	var mu sync.Mutex
	inFlight, most := 0, 0
	two := make(chan struct{})
	var c *Client
	f := &fakeServer{reply: func(body map[string]any) ([]int, []float64, string) {
		mu.Lock()
		inFlight++
		most = max(most, inFlight)
		if inFlight == 2 && two != nil {
			if held := len(c.sem); held != 2 {
				t.Errorf("two requests in flight hold %d of the client's slots, want 2", held)
			}
			close(two)
			two = nil
		}
		wait := two
		mu.Unlock()
		if wait != nil {
			<-wait // the first request waits for the second
		}
		mu.Lock()
		inFlight--
		mu.Unlock()
		return echoReply(body)
	}}
	srv := httptest.NewServer(f)
	defer srv.Close()
	var err error
	if c, err = NewClient(ClientOptions{Protocol: SGLang, URLs: []string{srv.URL}, Vocab: 100, Concurrency: 2}); err != nil {
		t.Fatal(err)
	}
	sess, _ := c.Start(context.Background(), [][]int{{1}, {2}, {3}, {4}, {5}}, Options{})
	turns, err := sess.Generate(context.Background(), []int{0, 1, 2, 3, 4}, []int{1, 1, 1, 1, 1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(turns) != 5 || most > 2 {
		t.Errorf("%d turns, at most %d requests in flight; want 5 and 2", len(turns), most)
	}
}

// TestClientTopKOffOnTheWire pins how Options' "off" values of top-k (0 or
// less) and top-p (0) are sent: top_k -1 and top_p 1 in both protocols.
// SGLang takes -1 for the whole vocabulary and refuses 0 ("top_k must be -1
// (disable) or at least 1": SamplingParams.__post_init__ and verify in
// sgl-project/sglang python/sglang/srt/sampling/sampling_params.py). The
// OpenAI API itself has no top_k; vLLM takes it as an extra field and
// "quietly accept[s] -1 as disabled, but prefer[s] 0" (SamplingParams.
// _verify_args in vllm-project/vllm vllm/sampling_params.py), so -1 suits
// both servers. A top-k that is on is sent as it is.
func TestClientTopKOffOnTheWire(t *testing.T) {
	for _, c := range []struct {
		topK, wantK int
		topP, wantP float64
	}{{0, -1, 0, 1}, {-3, -1, 1, 1}, {1, 1, 0.5, 0.5}, {40, 40, 0, 1}} {
		for _, protocol := range Protocols() {
			f := &fakeServer{reply: echoReply}
			srv := httptest.NewServer(f)
			sess, _ := newClient(t, protocol, srv.URL).Start(context.Background(), [][]int{{1}}, Options{TopK: c.topK, TopP: c.topP})
			if _, err := sess.Generate(context.Background(), []int{0}, []int{1}, nil); err != nil {
				t.Fatal(err)
			}
			srv.Close()
			knobs := f.bodies[0]
			if protocol == SGLang {
				knobs = knobs["sampling_params"].(map[string]any)
			}
			if knobs["top_k"] != float64(c.wantK) || knobs["top_p"] != c.wantP {
				t.Errorf("%s, TopK %d, TopP %g: top_k %v, top_p %v; want %d and %g", protocol, c.topK, c.topP, knobs["top_k"], knobs["top_p"], c.wantK, c.wantP)
			}
		}
	}
}

// TestClientRetrySpacing: a request that meets 5xx waits Backoff before its
// first retry and twice the last wait before each next, none before the first
// try or after the last; each request starts again from Backoff.
func TestClientRetrySpacing(t *testing.T) {
	f := &fakeServer{reply: echoReply, status: []int{503, 502, 500}}
	srv := httptest.NewServer(f)
	defer srv.Close()
	c, err := NewClient(ClientOptions{Protocol: SGLang, URLs: []string{srv.URL}, Vocab: 100, Retries: 4, Backoff: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var waits []time.Duration
	c.pause = func(_ context.Context, d time.Duration) error {
		mu.Lock()
		defer mu.Unlock()
		waits = append(waits, d)
		return nil
	}
	ms := func(n ...int) (out []time.Duration) {
		for _, k := range n {
			out = append(out, time.Duration(k)*time.Millisecond)
		}
		return out
	}
	sess, _ := c.Start(context.Background(), [][]int{{1}}, Options{})
	if _, err := sess.Generate(context.Background(), []int{0}, []int{1}, nil); err != nil {
		t.Fatal(err)
	}
	if want := ms(10, 20, 40); !slices.Equal(waits, want) {
		t.Errorf("three 5xx, then the answer: waits %v, want %v", waits, want)
	}
	waits, f.status = nil, []int{500, 500, 500, 500, 500}
	if _, err := sess.Generate(context.Background(), []int{0}, []int{1}, nil); err == nil || !strings.Contains(err.Error(), "after 5 tries") {
		t.Fatalf("five 500s: %v, want the error after 5 tries", err)
	}
	if want := ms(10, 20, 40, 80); !slices.Equal(waits, want) {
		t.Errorf("retries run out: waits %v, want %v", waits, want)
	}
}

// TestNewClientTrimsItsOwnURLs: NewClient drops a URL's trailing slashes in
// the client's copy of ClientOptions.URLs, never in the caller's slice,
// which reads as it was given (the copy comes before the trimming).
func TestNewClientTrimsItsOwnURLs(t *testing.T) {
	urls := []string{"http://a.test:30000/", "http://b.test:30000//", "http://c.test:30000"}
	given := slices.Clone(urls)
	c, err := NewClient(ClientOptions{Protocol: SGLang, URLs: urls, Vocab: 100})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(urls, given) {
		t.Errorf("the caller's URLs became %q, want them left %q", urls, given)
	}
	if want := []string{"http://a.test:30000", "http://b.test:30000", "http://c.test:30000"}; !slices.Equal(c.urls(), want) {
		t.Errorf("the client's URLs %q, want %q", c.urls(), want)
	}
}
