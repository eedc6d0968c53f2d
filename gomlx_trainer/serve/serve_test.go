package serve

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/gomlx/compute/dtypes"

	"github.com/mathrl/mathrl/gomlx_trainer/backend/backendtest"
	"github.com/mathrl/mathrl/gomlx_trainer/engine"
	"github.com/mathrl/mathrl/gomlx_trainer/engine/inprocess"
	"github.com/mathrl/mathrl/gomlx_trainer/qwen3"
	"github.com/mathrl/mathrl/gomlx_trainer/sampler"
	"github.com/mathrl/mathrl/gomlx_trainer/toolloop"
)

// tinyDir writes a random tiny Qwen3 (vocabulary 300, context 2048) with
// seed into a folder and returns it.
func tinyDir(t *testing.T, seed uint64) string {
	t.Helper()
	cfg, err := qwen3.NamedConfig("tiny")
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), fmt.Sprint("tiny-", seed))
	if err := qwen3.WriteRandom(cfg, dir, "F32", seed); err != nil {
		t.Fatal(err)
	}
	return dir
}

// running is a server on a loopback port.
type running struct {
	srv    *Server
	url    string
	cancel context.CancelFunc
	errc   chan error
}

// start serves dir on 127.0.0.1; hooks, when set, are installed first. The
// server stops when the test ends.
func start(t testing.TB, dir string, maxBatch int, hooks func(*Server)) *running {
	t.Helper()
	return startWith(t, Options{ModelPath: dir, MaxBatch: maxBatch}, hooks)
}

// startWith is start with opt (its backend and dtype filled in).
func startWith(t testing.TB, opt Options, hooks func(*Server)) *running {
	t.Helper()
	opt.Backend, opt.DType = backendtest.New(t), dtypes.Float32
	srv, err := New(opt)
	if err != nil {
		t.Fatal(err)
	}
	if hooks != nil {
		hooks(srv)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &running{srv: srv, url: "http://" + ln.Addr().String(), cancel: cancel, errc: make(chan error, 1)}
	go func() { r.errc <- srv.Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		if err := <-r.errc; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return r
}

// post sends body to path and returns the status and the answer.
func post(t *testing.T, url, body string) (int, string) {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(data)
}

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(data)
}

// turns runs two turns on sess: every sequence, then (a tool response
// appended) the sequences that stopped on a stop id before the budget.
func turns(t *testing.T, sess engine.Session, n, budget int, stops []int) [][]toolloop.Turn {
	t.Helper()
	ctx := context.Background()
	all := make([]int, n)
	maxNew := make([]int, n)
	for i := range all {
		all[i], maxNew[i] = i, budget
	}
	first, err := sess.Generate(ctx, all, maxNew, nil)
	if err != nil {
		t.Fatal(err)
	}
	var again, left []int
	for i, tr := range first {
		if len(tr.IDs) < budget-4 && slices.Contains(stops, tr.IDs[len(tr.IDs)-1]) {
			if err := sess.Append(i, []int{40, 41, 42}); err != nil {
				t.Fatal(err)
			}
			again, left = append(again, i), append(left, budget-len(tr.IDs)-3)
		}
	}
	if len(again) == 0 {
		t.Fatal("no sequence stopped early: the second turn tests nothing")
	}
	second, err := sess.Generate(ctx, again, left, nil)
	if err != nil {
		t.Fatal(err)
	}
	return [][]toolloop.Turn{first, second}
}

// sameTurns compares turns token for token, log-probs to float32 rounding
// (the server's batches differ from the in-process one's, and the kernels
// sum in an order that depends on the sizes).
func sameTurns(t *testing.T, what string, want, got [][]toolloop.Turn) {
	t.Helper()
	for k := range want {
		for j := range want[k] {
			w, g := want[k][j], got[k][j]
			if !slices.Equal(w.IDs, g.IDs) {
				t.Errorf("%s: turn %d, sequence %d: ids %v, in process %v", what, k, j, g.IDs, w.IDs)
				continue
			}
			for m := range w.LogProbs {
				if d := math.Abs(float64(w.LogProbs[m] - g.LogProbs[m])); d > 1e-5 {
					t.Errorf("%s: turn %d, sequence %d, token %d: log-prob %g, in process %g", what, k, j, m, g.LogProbs[m], w.LogProbs[m])
				}
			}
		}
	}
}

// TestServeSamplesAsTheBuiltinEngine samples six prompts for two turns (a
// tool response appended between them) in process and through a server in
// each protocol, two rows a batch so that requests join as others finish:
// the same tokens, the log-probs to float32 rounding.
func TestServeSamplesAsTheBuiltinEngine(t *testing.T) {
	dir := tinyDir(t, 1)
	m, err := qwen3.Load(dir, dtypes.Float32)
	if err != nil {
		t.Fatal(err)
	}
	var prompts [][]int
	for i := range 6 {
		prompts = append(prompts, []int{256, 10 + i, 20 + 3*i, 30, 40 + i})
	}
	stops := []int{}
	for id := 0; id < 300; id += 3 {
		stops = append(stops, id) // a third of the vocabulary: sequences stop early
	}
	opts := engine.Options{MaxNewTokens: 24, Temperature: 1, TopP: 0.95, TopK: 100, StopIDs: stops, Seed: 9}
	builtin := inprocess.New(sampler.New(backendtest.New(t), m))
	sess, err := builtin.Start(context.Background(), prompts, opts)
	if err != nil {
		t.Fatal(err)
	}
	want := turns(t, sess, len(prompts), opts.MaxNewTokens, stops)
	sess.Close()

	r := start(t, dir, 2, nil)
	for _, protocol := range engine.Protocols() {
		c, err := engine.NewClient(engine.ClientOptions{Protocol: protocol, URLs: []string{r.url}, Vocab: 300, Concurrency: 3})
		if err != nil {
			t.Fatal(err)
		}
		sess, err := c.Start(context.Background(), prompts, opts)
		if err != nil {
			t.Fatal(err)
		}
		sameTurns(t, protocol, want, turns(t, sess, len(prompts), opts.MaxNewTokens, stops))
	}
}

// TestServeJoinsTheRunningBatch sends a long request, and a second one once
// the first is decoding: the second is admitted into the free row of the
// running batch (both are in it at some step), and samples what it samples
// alone.
func TestServeJoinsTheRunningBatch(t *testing.T) {
	dir := tinyDir(t, 1)
	var mu sync.Mutex
	var steps [][]int64
	var r *running
	second := make(chan string, 1)
	r = start(t, dir, 4, func(s *Server) {
		s.onStep = func(ids []int64) {
			mu.Lock()
			steps = append(steps, ids)
			first := len(steps) == 1
			mu.Unlock()
			if first { // the long request decodes: send the other, and let it reach the queue
				go func() {
					_, body := post(t, r.url+"/generate", `{"input_ids": [256, 7, 8], "return_logprob": true,
						"sampling_params": {"max_new_tokens": 5, "ignore_eos": true, "sampling_seed": 3}}`)
					second <- body
				}()
				for len(s.jobs) == 0 {
					runtime.Gosched()
				}
			}
		}
	})
	code, long := post(t, r.url+"/generate", `{"input_ids": [256, 1, 2, 3], "return_logprob": true,
		"sampling_params": {"max_new_tokens": 40, "ignore_eos": true, "sampling_seed": 2}}`)
	if code != 200 {
		t.Fatalf("long request: %d %s", code, long)
	}
	shared := false
	for _, ids := range steps {
		shared = shared || len(ids) == 2
	}
	if !shared {
		t.Errorf("the two requests never shared a step: %v", steps)
	}
	var got engine.SGLangResponse
	if err := json.Unmarshal([]byte(<-second), &got); err != nil {
		t.Fatal(err)
	}
	m, err := qwen3.Load(dir, dtypes.Float32)
	if err != nil {
		t.Fatal(err)
	}
	alone, err := sampler.New(backendtest.New(t), m).Generate(context.Background(), [][]int{{256, 7, 8}},
		sampler.Options{MaxNewTokens: 5, Temperature: 1, StopIDs: []int{}, Seeds: []uint64{3}})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got.OutputIDs, alone[0].IDs) {
		t.Errorf("joining a running batch: %v; alone %v", got.OutputIDs, alone[0].IDs)
	}
}

// TestServeRejectsBadRequests answers each bad request 400 naming the field,
// and serves on.
func TestServeRejectsBadRequests(t *testing.T) {
	r := start(t, tinyDir(t, 1), 2, nil)
	for _, c := range []struct{ path, body, want string }{
		{"/generate", `{"input_ids": [1, 2`, "invalid JSON"},
		{"/generate", `{"input_ids": "abc"}`, "field input_ids"},
		{"/generate", `{"input_ids": [[1, 2], [3, 300]]}`, "input_ids[1][1]: id 300 outside the vocabulary"},
		{"/generate", `{"input_ids": [[1], [2]], "sampling_params": [{}, {"temperature": 0.5}]}`, "sampling_params[1]: temperature"},
		{"/generate", `{"input_ids": [[1], [2]], "sampling_params": [{}]}`, "sampling_params: 1 for 2 sequences"},
		{"/generate", `{}`, "input_ids: missing"},
		{"/generate", `{"input_ids": [1, 300]}`, "input_ids[1]: id 300 outside the vocabulary"},
		{"/generate", `{"input_ids": [1], "sampling_params": {"max_new_tokens": 2048}}`, "sampling_params.max_new_tokens: 2048 tokens after a prompt of 1 pass the context of 2048"},
		{"/generate", `{"input_ids": [1], "sampling_params": {"max_new_tokens": "ten"}}`, "field sampling_params.max_new_tokens"},
		{"/generate", `{"input_ids": [1], "sampling_params": {"temperature": -1}}`, "sampling_params.temperature"},
		{"/generate", `{"input_ids": [1], "sampling_params": {"top_p": 0}}`, "sampling_params.top_p"},
		{"/generate", `{"input_ids": [1], "sampling_params": {"stop_token_ids": [999]}}`, "sampling_params.stop_token_ids[0]"},
		{"/generate", `{"text": "hello"}`, "text: not supported"},
		{"/v1/completions", `{"prompt": "hello"}`, "prompt: text is not supported"},
		{"/v1/completions", `{"prompt": [1, 2.5]}`, "prompt[1]"},
		{"/v1/completions", `{"prompt": [1], "n": 0}`, "n: 0"},
		{"/v1/completions", `{"prompt": [1], "max_tokens": 0}`, "max_tokens: 0"},
		{"/v1/completions", `{"prompt": [1], "seed": -1}`, "field seed"},
		{"/update_weights_from_disk", `{"model_path": "` + filepath.Join(t.TempDir(), "none") + `"}`, "model_path"},
	} {
		code, body := post(t, r.url+c.path, c.body)
		if code != http.StatusBadRequest || !strings.Contains(body, c.want) {
			t.Errorf("%s %s: %d %s; want 400 saying %q", c.path, c.body, code, strings.TrimSpace(body), c.want)
		}
	}
	if code, body := post(t, r.url+"/generate", `{"input_ids": [1], "sampling_params": {"max_new_tokens": 2}}`); code != 200 {
		t.Errorf("after the bad requests: %d %s", code, body)
	}
}

// TestServeDrains ends Serve's context while a request decodes: new
// requests get 503, the one in flight finishes with 200, and Serve returns.
// The scheduler waits at the first step until the late requests have been
// sent, so a server that took them would answer them 200 after it.
func TestServeDrains(t *testing.T) {
	var r *running
	draining, resume := make(chan struct{}), make(chan struct{})
	r = start(t, tinyDir(t, 1), 2, func(s *Server) {
		first := true
		s.onStep = func([]int64) {
			if !first {
				return
			}
			first = false
			r.cancel()
			for !s.isDraining() {
				runtime.Gosched()
			}
			close(draining)
			<-resume
		}
	})
	long := make(chan string, 1)
	go func() {
		code, body := post(t, r.url+"/generate", `{"input_ids": [1, 2], "sampling_params": {"max_new_tokens": 20, "ignore_eos": true}}`)
		long <- fmt.Sprint(code, " ", body)
	}()
	<-draining
	late, health := make(chan int, 1), make(chan int, 1)
	go func() {
		code, _ := post(t, r.url+"/generate", `{"input_ids": [1], "sampling_params": {"max_new_tokens": 2}}`)
		late <- code
	}()
	go func() {
		code, _ := get(t, r.url+"/health")
		health <- code
	}()
	lateCode, healthCode := <-late, <-health
	close(resume)
	if got := <-long; !strings.HasPrefix(got, "200 ") || !strings.Contains(got, `"completion_tokens":20`) {
		t.Errorf("the request in flight: %s; want 200 and its 20 tokens", got)
	}
	if lateCode != http.StatusServiceUnavailable || healthCode != http.StatusServiceUnavailable {
		t.Errorf("while draining: generate %d, health %d; want 503 and 503", lateCode, healthCode)
	}
}

// TestServeUpdatesWeights loads another folder through
// /update_weights_from_disk: the weight version is reported, and sampling
// follows the new weights.
func TestServeUpdatesWeights(t *testing.T) {
	r := start(t, tinyDir(t, 1), 2, nil)
	dir2 := tinyDir(t, 2)
	req := `{"input_ids": [256, 5, 6], "return_logprob": true, "sampling_params": {"max_new_tokens": 6, "ignore_eos": true, "sampling_seed": 4}}`
	_, before := post(t, r.url+"/generate", req)
	if code, body := post(t, r.url+"/update_weights_from_disk", `{"model_path": "`+dir2+`", "weight_version": "7"}`); code != 200 || !strings.Contains(body, `"success":true`) {
		t.Fatalf("update: %d %s", code, body)
	}
	if _, info := get(t, r.url+"/get_model_info"); !strings.Contains(info, `"weight_version":"7"`) {
		t.Errorf("model info after the update: %s", info)
	}
	var after engine.SGLangResponse
	_, body := post(t, r.url+"/generate", req)
	if err := json.Unmarshal([]byte(body), &after); err != nil {
		t.Fatal(err)
	}
	m2, err := qwen3.Load(dir2, dtypes.Float32)
	if err != nil {
		t.Fatal(err)
	}
	want, err := sampler.New(backendtest.New(t), m2).Generate(context.Background(), [][]int{{256, 5, 6}},
		sampler.Options{MaxNewTokens: 6, Temperature: 1, StopIDs: []int{}, Seeds: []uint64{4}})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(after.OutputIDs, want[0].IDs) || before == body {
		t.Errorf("after the update: %s, want the new weights' %v (before: %s)", body, want[0].IDs, before)
	}
	for k, e := range after.MetaInfo.OutputTokenLogprobs {
		if d := math.Abs(*e.LogProb - float64(want[0].LogProbs[k])); d > 1e-5 {
			t.Errorf("after the update, token %d: log-prob %g, the new weights' %g", k, *e.LogProb, want[0].LogProbs[k])
		}
	}
	for _, path := range []string{"/health", "/health_generate", "/server_info"} {
		if code, body := get(t, r.url+path); code != 200 {
			t.Errorf("%s: %d %s", path, code, body)
		}
	}
	if code, body := post(t, r.url+"/flush_cache", ""); code != 200 || !strings.Contains(body, `"success":true`) {
		t.Errorf("/flush_cache: %d %s", code, body)
	}
}

// TestServeBatchRequestIsBitExact sends a turn of six sequences as one SGLang
// batch request (engine.ClientOptions.Batch): the server samples them as the
// in-process sampler's own session would, so tokens and log-probs are equal
// bit for bit; sent one a request they agree only to float32 rounding.
func TestServeBatchRequestIsBitExact(t *testing.T) {
	dir := tinyDir(t, 1)
	m, err := qwen3.Load(dir, dtypes.Float32)
	if err != nil {
		t.Fatal(err)
	}
	var prompts [][]int
	for i := range 6 {
		prompts = append(prompts, []int{256, 10 + i, 20 + 3*i, 30, 40 + i, 50 + 2*i}[:3+i%3])
	}
	opts := engine.Options{MaxNewTokens: 20, Temperature: 1, TopP: 0.9, TopK: 50, StopIDs: []int{1, 2, 3, 4, 5, 6, 7, 8, 9}, Seed: 4}
	all, maxNew := []int{0, 1, 2, 3, 4, 5}, []int{20, 20, 20, 20, 20, 20}
	turn := func(e engine.Engine) []toolloop.Turn {
		t.Helper()
		sess, err := e.Start(context.Background(), prompts, opts)
		if err != nil {
			t.Fatal(err)
		}
		defer sess.Close()
		turns, err := sess.Generate(context.Background(), all, maxNew, nil)
		if err != nil {
			t.Fatal(err)
		}
		return turns
	}
	want := turn(inprocess.New(sampler.New(backendtest.New(t), m)))
	r := start(t, dir, 4, nil)
	batched, err := engine.NewClient(engine.ClientOptions{Protocol: engine.SGLang, URLs: []string{r.url}, Vocab: 300, Batch: 64})
	if err != nil {
		t.Fatal(err)
	}
	if got := turn(batched); !reflect.DeepEqual(got, want) {
		t.Errorf("one batch request:\n%v\nin process:\n%v", got, want)
	}
	single, err := engine.NewClient(engine.ClientOptions{Protocol: engine.SGLang, URLs: []string{r.url}, Vocab: 300})
	if err != nil {
		t.Fatal(err)
	}
	sameTurns(t, "one sequence a request", [][]toolloop.Turn{want}, [][]toolloop.Turn{turn(single)})
}

// sampledTokens is how many tokens an answer of /generate (one sequence or
// a batch of one) or /v1/completions holds; -1 if it is none of them.
func sampledTokens(body string) int {
	var one engine.SGLangResponse
	var batch []engine.SGLangResponse
	var oai engine.OpenAIResponse
	switch {
	case json.Unmarshal([]byte(body), &batch) == nil && len(batch) == 1:
		return len(batch[0].OutputIDs)
	case json.Unmarshal([]byte(body), &oai) == nil && len(oai.Choices) == 1:
		return len(oai.Choices[0].TokenIDs)
	case json.Unmarshal([]byte(body), &one) == nil && one.OutputIDs != nil:
		return len(one.OutputIDs)
	}
	return -1
}

// TestServeFillsTheContext: a prompt and a budget that exactly fill the
// context (2048 for the tiny model) are served, every budgeted token sampled;
// one token more is a 400 naming the budget's field, in both APIs and in a
// batch request.
func TestServeFillsTheContext(t *testing.T) {
	r := start(t, tinyDir(t, 1), 2, nil)
	prompt := make([]string, 2045)
	for k := range prompt {
		prompt[k] = fmt.Sprint(k % 256)
	}
	ids := "[" + strings.Join(prompt, ", ") + "]"
	for _, c := range []struct{ path, body, field string }{
		{"/generate", `{"input_ids": %s, "sampling_params": {"max_new_tokens": %d, "ignore_eos": true}}`, "sampling_params.max_new_tokens"},
		{"/v1/completions", `{"prompt": %s, "max_tokens": %d, "ignore_eos": true, "return_token_ids": true}`, "max_tokens"},
		{"/generate", `{"input_ids": [%s], "sampling_params": {"max_new_tokens": %d, "ignore_eos": true}}`, "sampling_params[0].max_new_tokens"},
	} {
		code, body := post(t, r.url+c.path, fmt.Sprintf(c.body, ids, 3))
		if n := sampledTokens(body); code != http.StatusOK || n != 3 {
			t.Errorf("%s, 2045 + 3 tokens: %d, %d tokens (%.200s); want 200 and 3", c.path, code, n, body)
		}
		code, body = post(t, r.url+c.path, fmt.Sprintf(c.body, ids, 4))
		want := c.field + ": 4 tokens after a prompt of 2045 pass the context of 2048"
		if code != http.StatusBadRequest || !strings.Contains(body, want) {
			t.Errorf("%s, 2045 + 4 tokens: %d %s; want 400 saying %q", c.path, code, body, want)
		}
	}
}

// recorder keeps the scheduler's steps and queue; at the first step of the
// first job queued after arm it runs the function it was armed with (which
// sends requests and waits until they are queued), so that they arrive while
// that job decodes. (A step of an earlier job does not fire it: the scheduler
// answers a job before its step's hook returns, so a test may arm while that
// hook is still to run.)
type recorder struct {
	mu     sync.Mutex
	steps  [][]int64
	queued []int64
	armed  func()
}

func (rec *recorder) hooks(s *Server) {
	s.onQueue = func(id int64) {
		rec.mu.Lock()
		defer rec.mu.Unlock()
		rec.queued = append(rec.queued, id)
	}
	s.onStep = func(ids []int64) {
		rec.mu.Lock()
		rec.steps = append(rec.steps, slices.Clone(ids))
		var f func()
		if len(rec.queued) > 0 && slices.Contains(ids, rec.queued[0]) {
			f, rec.armed = rec.armed, nil
		}
		rec.mu.Unlock()
		if f != nil {
			f()
		}
	}
}

// arm forgets what was recorded and runs f at the first step of the next
// job queued.
func (rec *recorder) arm(f func()) {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	rec.steps, rec.queued, rec.armed = nil, nil, f
}

// shared reports whether the jobs queued k-th and m-th (from the last arm)
// were ever in the same step.
func (rec *recorder) shared(k, m int) bool {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	a, b := rec.queued[k], rec.queued[m]
	for _, ids := range rec.steps {
		if slices.Contains(ids, a) && slices.Contains(ids, b) {
			return true
		}
	}
	return false
}

// sendQueued posts body to url in the background, its answer on the
// channel it returns, and waits until the scheduler's queue holds want jobs.
func sendQueued(t *testing.T, s *Server, url, body string, want int) <-chan string {
	answer := make(chan string, 1)
	go func() {
		code, b := post(t, url, body)
		answer <- fmt.Sprint(code, " ", b)
	}()
	for len(s.jobs) < want {
		runtime.Gosched()
	}
	return answer
}

// TestServeAdmitsOnlyTheSameKnobs sends a request while another decodes: it
// joins the running batch when its temperature, top_p, top_k and stop ids
// (EOS included unless ignore_eos) are the batch's, whatever its prompt,
// budget and seed, the stop ids in any order; top_k 0 and -1 are both off.
// Any knob that differs makes it wait until the batch has drained.
func TestServeAdmitsOnlyTheSameKnobs(t *testing.T) {
	rec := &recorder{}
	r := start(t, tinyDir(t, 1), 4, rec.hooks)
	const long = `{"input_ids": [256, 1, 2, 3], "sampling_params": {"max_new_tokens": 24, "temperature": 0.8, "top_p": 0.9,
		"top_k": -1, "stop_token_ids": [5, 9], "ignore_eos": true, "sampling_seed": 2}}`
	for _, c := range []struct {
		name, params string
		joins        bool
	}{
		{"other prompt, budget and seed", `"temperature": 0.8, "top_p": 0.9, "top_k": -1, "stop_token_ids": [5, 9], "ignore_eos": true, "sampling_seed": 8`, true},
		{"stop ids reordered and repeated, top_k 0", `"temperature": 0.8, "top_p": 0.9, "top_k": 0, "stop_token_ids": [9, 5, 9], "ignore_eos": true`, true},
		{"temperature", `"temperature": 0.7, "top_p": 0.9, "stop_token_ids": [5, 9], "ignore_eos": true`, false},
		{"top_p", `"temperature": 0.8, "top_p": 0.95, "stop_token_ids": [5, 9], "ignore_eos": true`, false},
		{"top_k", `"temperature": 0.8, "top_p": 0.9, "top_k": 40, "stop_token_ids": [5, 9], "ignore_eos": true`, false},
		{"a stop id fewer", `"temperature": 0.8, "top_p": 0.9, "stop_token_ids": [5], "ignore_eos": true`, false},
		{"a stop id more", `"temperature": 0.8, "top_p": 0.9, "stop_token_ids": [5, 9, 11], "ignore_eos": true`, false},
		{"EOS not ignored", `"temperature": 0.8, "top_p": 0.9, "stop_token_ids": [5, 9]`, false},
	} {
		second := make(chan (<-chan string), 1)
		rec.arm(func() {
			second <- sendQueued(t, r.srv, r.url+"/generate", `{"input_ids": [256, 7, 8, 9, 10], "sampling_params": {"max_new_tokens": 3, `+c.params+`}}`, 1)
		})
		code, body := post(t, r.url+"/generate", long)
		if code != http.StatusOK || !strings.Contains(body, `"completion_tokens":24`) {
			t.Fatalf("%s: the long request: %d %s; want 200 and 24 tokens (the second must arrive while it decodes)", c.name, code, body)
		}
		if got := <-<-second; !strings.HasPrefix(got, "200 ") {
			t.Errorf("%s: the second request: %s", c.name, got)
		}
		if joined := rec.shared(0, 1); joined != c.joins {
			t.Errorf("%s: joined the running batch %v, want %v", c.name, joined, c.joins)
		}
	}
}

// answered reads the output ids and log-probs of an answer "status body" of
// /generate with return_logprob.
func answered(t *testing.T, answer string) sampler.Result {
	t.Helper()
	code, body, _ := strings.Cut(answer, " ")
	var got engine.SGLangResponse
	if code != "200" || json.Unmarshal([]byte(body), &got) != nil {
		t.Fatalf("answer %s, want 200 and an SGLang response", answer)
	}
	res := sampler.Result{IDs: got.OutputIDs}
	for _, e := range got.MetaInfo.OutputTokenLogprobs {
		res.LogProbs = append(res.LogProbs, float32(*e.LogProb))
	}
	return res
}

// alone samples prompt in process on the weights of dir, as the server
// samples a /generate request with sampling_seed seed and ignore_eos.
func alone(t *testing.T, dir string, prompt []int, maxNew int, seed uint64) sampler.Result {
	t.Helper()
	m, err := qwen3.Load(dir, dtypes.Float32)
	if err != nil {
		t.Fatal(err)
	}
	res, err := sampler.New(backendtest.New(t), m).Generate(context.Background(), [][]int{prompt},
		sampler.Options{MaxNewTokens: maxNew, Temperature: 1, StopIDs: []int{}, Seeds: []uint64{seed}})
	if err != nil {
		t.Fatal(err)
	}
	return res[0]
}

// sameSample reports whether a and b are the same tokens with the same
// log-probs to float32 rounding (a server's batches differ from the
// in-process one's).
func sameSample(a, b sampler.Result) bool {
	if !slices.Equal(a.IDs, b.IDs) || len(a.LogProbs) != len(b.LogProbs) {
		return false
	}
	for k := range a.LogProbs {
		if math.Abs(float64(a.LogProbs[k]-b.LogProbs[k])) > 1e-5 {
			return false
		}
	}
	return true
}

// TestServeUpdateWaitsForTheBatch: while a request decodes, a second one
// with its knobs arrives, then a weight update, then a third request like
// the second. The second joins the running batch; the update waits until
// that batch has drained; the third waits behind it and never shares a step
// with the others. So the first two are sampled wholly by the old weights and
// the third by the new, tokens and log-probs as the in-process sampler
// samples them. (The tiny random models are near uniform, so their tokens
// may agree: the log-probs tell the weights apart.)
func TestServeUpdateWaitsForTheBatch(t *testing.T) {
	rec := &recorder{}
	oldDir, newDir := tinyDir(t, 1), tinyDir(t, 2)
	r := start(t, oldDir, 4, rec.hooks)
	const like = `{"input_ids": [256, 7, 8], "return_logprob": true, "sampling_params": {"max_new_tokens": 6, "ignore_eos": true, "sampling_seed": 3}}`
	answers := make(chan []<-chan string, 1)
	rec.arm(func() {
		second := sendQueued(t, r.srv, r.url+"/generate", like, 1)
		update := sendQueued(t, r.srv, r.url+"/update_weights_from_disk", `{"model_path": "`+newDir+`", "weight_version": "8"}`, 2)
		answers <- []<-chan string{second, update, sendQueued(t, r.srv, r.url+"/generate", like, 3)}
	})
	code, first := post(t, r.url+"/generate", `{"input_ids": [256, 1, 2, 3], "return_logprob": true,
		"sampling_params": {"max_new_tokens": 16, "ignore_eos": true, "sampling_seed": 2}}`)
	if code != http.StatusOK {
		t.Fatalf("the first request: %d %s", code, first)
	}
	got := <-answers
	second, update, third := <-got[0], <-got[1], <-got[2]
	if !strings.HasPrefix(update, "200 ") {
		t.Fatalf("the update: %s", update)
	}
	if !rec.shared(0, 1) || rec.shared(0, 3) || rec.shared(1, 3) {
		t.Errorf("steps %v of jobs %v: want the second in the first's batch, the third in neither's", rec.steps, rec.queued)
	}
	oldLike, newLike := alone(t, oldDir, []int{256, 7, 8}, 6, 3), alone(t, newDir, []int{256, 7, 8}, 6, 3)
	if sameSample(oldLike, newLike) {
		t.Fatalf("both weights sample %v: the test tells nothing", oldLike)
	}
	for _, c := range []struct {
		name      string
		got, want sampler.Result
	}{
		{"first (old weights)", answered(t, "200 "+first), alone(t, oldDir, []int{256, 1, 2, 3}, 16, 2)},
		{"second (old weights)", answered(t, second), oldLike},
		{"third (new weights)", answered(t, third), newLike},
	} {
		if !sameSample(c.got, c.want) {
			t.Errorf("%s: %v %v, want %v %v", c.name, c.got.IDs, c.got.LogProbs, c.want.IDs, c.want.LogProbs)
		}
	}
	if _, info := get(t, r.url+"/get_model_info"); !strings.Contains(info, `"weight_version":"8"`) {
		t.Errorf("model info after the update: %s", info)
	}
}

// TestServeNumericLimits sends each numeric field at 0 and at the edges of
// what it takes: a value inside is served (200), one outside is a 400
// naming the field, n included (at least 1, in either API); the server
// serves on after them.
func TestServeNumericLimits(t *testing.T) {
	r := start(t, tinyDir(t, 1), 2, nil)
	const gen, oai = "/generate", "/v1/completions"
	for _, c := range []struct {
		path, params string
		want         string // "" : served
	}{
		{oai, `"n": 1`, ""},
		{oai, `"n": 0`, "n: 0, want at least 1"},
		{oai, `"n": -1`, "n: -1, want at least 1"},
		{oai, `"n": 2`, ""},
		{gen, `"n": 1`, ""},
		{gen, `"n": 0`, "sampling_params.n: 0, want at least 1"},
		{gen, `"n": 4`, ""},
		{oai, `"max_tokens": 1`, ""},
		{oai, `"max_tokens": 0`, "max_tokens: 0, want at least 1"},
		{oai, `"max_tokens": -1`, "max_tokens: -1, want at least 1"},
		{gen, `"max_new_tokens": 1`, ""},
		{gen, `"max_new_tokens": 0`, "sampling_params.max_new_tokens: 0, want at least 1"},
		{gen, `"temperature": 0`, ""},
		{gen, `"temperature": -0.01`, "sampling_params.temperature: -0.01 is negative"},
		{oai, `"temperature": -1`, "temperature: -1 is negative"},
		{gen, `"top_p": 1`, ""},
		{gen, `"top_p": 1e-9`, ""},
		{gen, `"top_p": 0`, "sampling_params.top_p: 0, want (0, 1]"},
		{gen, `"top_p": 1.01`, "sampling_params.top_p: 1.01, want (0, 1]"},
		{oai, `"top_p": -0.5`, "top_p: -0.5, want (0, 1]"},
		{gen, `"top_k": -1`, ""},
		{gen, `"top_k": 0`, ""},
		{gen, `"top_k": 1`, ""},
		{gen, `"top_k": 100000`, ""},
		{gen, `"top_k": -2`, "sampling_params.top_k: -2, want -1 (off) or more"},
		{oai, `"top_k": -2`, "top_k: -2, want -1 (off) or more"},
		{gen, `"sampling_seed": 0`, ""},
		{gen, `"sampling_seed": 18446744073709551615`, ""},
		{gen, `"sampling_seed": 18446744073709551616`, "field sampling_params.sampling_seed"},
		{oai, `"seed": -1`, "field seed"},
		{oai, `"logprobs": 0`, ""},
		{oai, `"logprobs": 1`, "logprobs: 1, want 0"},
		{gen, `"stop_token_ids": [0, 299]`, ""},
		{gen, `"stop_token_ids": [300]`, "sampling_params.stop_token_ids[0]: id 300 outside the vocabulary [0, 300)"},
		{oai, `"stop_token_ids": [5, -1]`, "stop_token_ids[1]: id -1 outside the vocabulary [0, 300)"},
	} {
		body := `{"prompt": [0, 299], "max_tokens": 2, ` + c.params + `}`
		if c.path == gen {
			body = `{"input_ids": [0, 299], "sampling_params": {"max_new_tokens": 2, ` + c.params + `}}`
			if strings.HasPrefix(c.params, `"max_new_tokens"`) {
				body = `{"input_ids": [0, 299], "sampling_params": {` + c.params + `}}`
			}
		} else if strings.HasPrefix(c.params, `"max_tokens"`) {
			body = `{"prompt": [0, 299], ` + c.params + `}`
		}
		code, answer := post(t, r.url+c.path, body)
		switch {
		case c.want == "" && code != http.StatusOK:
			t.Errorf("%s %s: %d %s; want it served", c.path, body, code, strings.TrimSpace(answer))
		case c.want != "" && (code != http.StatusBadRequest || !strings.Contains(answer, c.want)):
			t.Errorf("%s %s: %d %s; want 400 saying %q", c.path, body, code, strings.TrimSpace(answer), c.want)
		}
	}
	if code, _ := get(t, r.url+"/health_generate"); code != http.StatusOK {
		t.Errorf("/health_generate after them: %d", code)
	}
}

// TestServeRefusesUnknownSamplingParams checks that a sampling_params key the
// server does not sample by (a stop string, a penalty) is a 400 naming it, in
// a single and a batch request, rather than a silent answer sampled without
// it; that the keys which only shape detokenized text are served; and that
// the server keeps serving.
func TestServeRefusesUnknownSamplingParams(t *testing.T) {
	r := start(t, tinyDir(t, 1), 2, nil)
	for _, c := range []struct{ body, want string }{
		{`{"input_ids": [0, 299], "sampling_params": {"max_new_tokens": 2, "stop": "###"}}`,
			"field sampling_params.stop: strings are not supported"},
		{`{"input_ids": [0, 299], "sampling_params": {"max_new_tokens": 2, "frequency_penalty": 0.5}}`,
			"field sampling_params.frequency_penalty: not supported"},
		{`{"input_ids": [[0, 299], [1]], "sampling_params": [{"max_new_tokens": 2}, {"max_new_tokens": 2, "min_p": 0.1}]}`,
			"field sampling_params.min_p: not supported"},
		{`{"input_ids": [[0, 299], [1]], "sampling_params": {"max_new_tokens": 2, "regex": "a+"}}`,
			"field sampling_params.regex: not supported"},
		{`{"input_ids": [0, 299], "sampling_params": {"max_new_tokens": 2, "no_stop_trim": true, "skip_special_tokens": false, "spaces_between_special_tokens": true}}`, ""},
	} {
		code, answer := post(t, r.url+"/generate", c.body)
		switch {
		case c.want == "" && code != http.StatusOK:
			t.Errorf("%s: %d %s; want it served", c.body, code, strings.TrimSpace(answer))
		case c.want != "" && (code != http.StatusBadRequest || !strings.Contains(answer, c.want)):
			t.Errorf("%s: %d %s; want 400 saying %q", c.body, code, strings.TrimSpace(answer), c.want)
		}
	}
	if code, _ := get(t, r.url+"/health_generate"); code != http.StatusOK {
		t.Errorf("/health_generate after them: %d", code)
	}
}
