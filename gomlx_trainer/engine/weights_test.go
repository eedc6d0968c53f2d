package engine

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gomlx/compute/dtypes"

	"github.com/mathrl/mathrl/gomlx_trainer/qwen3"
)

// fakeWorker keeps a weight version as SGLang's /get_model_info reports it
// and takes /update_weights_from_disk when model_path holds the file the
// test's Write puts there; broken makes every update fail, and reports (when
// set) is the version it claims after a load, whatever it was asked for.
type fakeWorker struct {
	mu      sync.Mutex
	version string
	loaded  []string // model paths it loaded
	updates int      // update requests it received
	broken  bool
	reports string
}

func (f *fakeWorker) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	switch r.URL.Path {
	case "/get_model_info":
		json.NewEncoder(w).Encode(map[string]any{"model_path": "m", "weight_version": f.version})
	case "/update_weights_from_disk":
		var req struct {
			ModelPath     string `json:"model_path"`
			WeightVersion string `json:"weight_version"`
		}
		json.NewDecoder(r.Body).Decode(&req)
		f.updates++
		if _, err := os.Stat(filepath.Join(req.ModelPath, "model.safetensors")); err != nil || f.broken {
			w.WriteHeader(http.StatusBadRequest)
			json.NewEncoder(w).Encode(map[string]any{"success": false, "message": "model_path: cannot load"})
			return
		}
		f.version, f.loaded = req.WeightVersion, append(f.loaded, req.ModelPath)
		if f.reports != "" {
			f.version = f.reports
		}
		json.NewEncoder(w).Encode(map[string]any{"success": true, "message": "ok"})
	default:
		http.NotFound(w, r)
	}
}

// counts are the update requests the worker received and the loads it made.
func (f *fakeWorker) counts() (updates, loads int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.updates, len(f.loaded)
}

func (f *fakeWorker) at() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.version
}

// fakeRouter lists workers as sglang-router's GET /workers does and removes
// one on DELETE /workers/{id}.
type fakeRouter struct {
	mu      sync.Mutex
	urls    map[string]string // id -> url
	removed []string
}

func (f *fakeRouter) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	switch {
	case r.Method == http.MethodGet && r.URL.Path == "/workers":
		var list []map[string]any
		for id, u := range f.urls {
			list = append(list, map[string]any{"id": id, "url": u, "is_healthy": true})
		}
		json.NewEncoder(w).Encode(map[string]any{"workers": list, "total": len(list)})
	case r.Method == http.MethodDelete && strings.HasPrefix(r.URL.Path, "/workers/"):
		id := strings.TrimPrefix(r.URL.Path, "/workers/")
		f.removed = append(f.removed, id)
		delete(f.urls, id)
		w.WriteHeader(http.StatusAccepted)
	default:
		http.NotFound(w, r)
	}
}

// weightsClient is a client of urls that writes a stand-in checkpoint (one
// file) into a temporary weights_dir, counting its writes and warnings.
func weightsClient(t *testing.T, urls ...string) (*Client, *Weights, *[]string, *int) {
	t.Helper()
	var warnings []string
	writes := 0
	wts := &Weights{Dir: filepath.Join(t.TempDir(), "weights"),
		Write: func(dir string) error {
			writes++
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return err
			}
			return os.WriteFile(filepath.Join(dir, "model.safetensors"), []byte("weights"), 0o644)
		},
		Warn: func(msg string) { warnings = append(warnings, msg) }}
	c, err := NewClient(ClientOptions{Protocol: SGLang, URLs: urls, Vocab: 10, Weights: wts, Retries: 1})
	if err != nil {
		t.Fatal(err)
	}
	return c, wts, &warnings, &writes
}

func versionFolders(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

// TestSyncBringsWorkersToTheVersion: two workers named directly start at
// SGLang's "default"; Sync writes the version once and both load it; a second
// Sync at the same version writes nothing; a worker that restarts with other
// weights is brought back at the next Sync; folders past the newest two are
// pruned, and no temporary folder is left.
func TestSyncBringsWorkersToTheVersion(t *testing.T) {
	a, b := &fakeWorker{version: "default"}, &fakeWorker{version: "default"}
	sa, sb := httptest.NewServer(a), httptest.NewServer(b)
	defer sa.Close()
	defer sb.Close()
	c, wts, warnings, writes := weightsClient(t, sa.URL, sb.URL)
	ctx := context.Background()
	if err := c.Sync(ctx, 0); err != nil {
		t.Fatal(err)
	}
	if a.at() != "0" || b.at() != "0" || *writes != 1 {
		t.Fatalf("after Sync(0): versions %q %q, %d writes; want 0, 0 and 1", a.at(), b.at(), *writes)
	}
	if err := c.Sync(ctx, 0); err != nil || *writes != 1 {
		t.Fatalf("Sync(0) again: %v, %d writes; want nothing written", err, *writes)
	}
	for v := 1; v <= 3; v++ {
		if err := c.Sync(ctx, v); err != nil {
			t.Fatal(err)
		}
	}
	b.mu.Lock()
	b.version = "default" // restarted from its original weights
	b.mu.Unlock()
	if err := c.Sync(ctx, 3); err != nil {
		t.Fatal(err)
	}
	if a.at() != "3" || b.at() != "3" {
		t.Errorf("versions %q %q, want 3 3", a.at(), b.at())
	}
	want := filepath.Join(wts.Dir, VersionFolder(3))
	if len(a.loaded) != 4 || a.loaded[3] != want || len(b.loaded) != 5 || b.loaded[4] != want {
		t.Errorf("loaded %v and %v, want versions 0 to 3 once each (and 3 again on the restarted one), the last %s", a.loaded, b.loaded, want)
	}
	if got := versionFolders(t, wts.Dir); !slices.Equal(got, []string{VersionFolder(2), VersionFolder(3)}) {
		t.Errorf("weights_dir holds %v, want the newest two versions", got)
	}
	if len(*warnings) != 0 {
		t.Errorf("warnings %v", *warnings)
	}
}

// TestSyncTakesOutAFailedWorker: behind a router, a worker whose update
// fails is removed from the router and reported, and the run goes on with
// the other; when the last one fails too, Sync fails naming why.
func TestSyncTakesOutAFailedWorker(t *testing.T) {
	good, bad := &fakeWorker{version: "default"}, &fakeWorker{version: "default", broken: true}
	sg, sbad := httptest.NewServer(good), httptest.NewServer(bad)
	defer sg.Close()
	defer sbad.Close()
	router := &fakeRouter{urls: map[string]string{"id-good": sg.URL, "id-bad": sbad.URL}}
	sr := httptest.NewServer(router)
	defer sr.Close()
	c, _, warnings, _ := weightsClient(t, sr.URL)
	if err := c.Sync(context.Background(), 1); err != nil {
		t.Fatalf("Sync with one worker left: %v", err)
	}
	if good.at() != "1" || !slices.Equal(router.removed, []string{"id-bad"}) {
		t.Errorf("good worker at %q, router removed %v; want 1 and [id-bad]", good.at(), router.removed)
	}
	if len(*warnings) != 1 || !strings.Contains((*warnings)[0], "worker "+sbad.URL+" taken out: its weight update failed") {
		t.Errorf("warnings %q, want the bad worker named", *warnings)
	}
	good.mu.Lock()
	good.broken = true
	good.mu.Unlock()
	err := c.Sync(context.Background(), 2)
	if !errors.Is(err, ErrNoWorker) || !strings.Contains(err.Error(), "no rollout worker left at weight version 2") || !strings.Contains(err.Error(), "cannot load") {
		t.Errorf("Sync with every worker failing = %v, want the no-worker error with the cause", err)
	}
}

// TestSyncDropsAFailedURL: named directly, a worker whose update fails is
// dropped from the client's URLs, so requests go to the others.
func TestSyncDropsAFailedURL(t *testing.T) {
	good, bad := &fakeWorker{version: "default"}, &fakeWorker{version: "default", broken: true}
	sg, sbad := httptest.NewServer(good), httptest.NewServer(bad)
	defer sg.Close()
	defer sbad.Close()
	c, _, _, _ := weightsClient(t, sbad.URL, sg.URL)
	if err := c.Sync(context.Background(), 1); err != nil {
		t.Fatal(err)
	}
	if got := c.urls(); !slices.Equal(got, []string{sg.URL}) {
		t.Errorf("URLs after the failed update %v, want only %s", got, sg.URL)
	}
}

// TestSyncWithoutWeights: a client with no weights_dir takes version 0 to be
// the servers' own weights and refuses any later one.
func TestSyncWithoutWeights(t *testing.T) {
	w := &fakeWorker{version: "default"}
	s := httptest.NewServer(w)
	defer s.Close()
	c, err := NewClient(ClientOptions{Protocol: SGLang, URLs: []string{s.URL}, Vocab: 10})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Sync(context.Background(), 0); err != nil {
		t.Errorf("Sync(0) = %v", err)
	}
	if err := c.Sync(context.Background(), 1); err == nil || !strings.Contains(err.Error(), "no weights_dir") {
		t.Errorf("Sync(1) = %v, want the no-weights_dir error", err)
	}
}

// TestSyncMixedWorkers: of workers named directly, one already at the
// version is neither asked to update nor taken out, a stale one is brought
// to it, and one whose update fails is taken out and reported; the weights
// are written once. While a worker at the version is left, Sync succeeds
// even when every stale one fails. The caller's list of URLs is left as it
// was (the client drops the broken one from its own copy).
func TestSyncMixedWorkers(t *testing.T) {
	for _, c := range []struct {
		name  string
		stale bool // a stale worker that updates fine, besides the current and the broken one
	}{{"current, stale and broken", true}, {"current and broken", false}} {
		t.Run(c.name, func(t *testing.T) {
			current, broken := &fakeWorker{version: "4"}, &fakeWorker{version: "default", broken: true}
			workers := []*fakeWorker{current, broken}
			if c.stale {
				workers = append(workers, &fakeWorker{version: "3"})
			}
			var urls []string
			for _, w := range workers {
				s := httptest.NewServer(w)
				defer s.Close()
				urls = append(urls, s.URL)
			}
			given := slices.Clone(urls)
			cl, _, warnings, writes := weightsClient(t, urls...)
			if err := cl.Sync(context.Background(), 4); err != nil {
				t.Fatalf("Sync with the current worker left: %v", err)
			}
			if !slices.Equal(urls, given) {
				t.Errorf("the caller's URLs became %v, want them left %v", urls, given)
			}
			if n, _ := current.counts(); n != 0 || current.at() != "4" {
				t.Errorf("the worker at version 4: %d update requests, at %q; want none and 4", n, current.at())
			}
			if n, _ := workers[len(workers)-1].counts(); c.stale && (workers[2].at() != "4" || n != 1) {
				t.Errorf("the stale worker: at %q after %d updates, want 4 after 1", workers[2].at(), n)
			}
			live := slices.DeleteFunc(slices.Clone(urls), func(u string) bool { return u == urls[1] })
			if got := cl.urls(); !slices.Equal(got, live) {
				t.Errorf("URLs %v, want all but the broken %s", got, urls[1])
			}
			if len(*warnings) != 1 || !strings.Contains((*warnings)[0], "worker "+urls[1]+" taken out") || *writes != 1 {
				t.Errorf("warnings %q after %d writes; want one naming the broken worker, after 1", *warnings, *writes)
			}
		})
	}
}

// TestSyncRefusesAWorkerAtAnotherVersion: a worker that accepts the update
// but then reports another weight_version than the one asked for (as a server
// that ignores weight_version would) is taken out, the warning naming both
// versions; the other worker is at the version.
func TestSyncRefusesAWorkerAtAnotherVersion(t *testing.T) {
	good, liar := &fakeWorker{version: "default"}, &fakeWorker{version: "default", reports: "default"}
	sg, sl := httptest.NewServer(good), httptest.NewServer(liar)
	defer sg.Close()
	defer sl.Close()
	c, _, warnings, _ := weightsClient(t, sg.URL, sl.URL)
	if err := c.Sync(context.Background(), 3); err != nil {
		t.Fatal(err)
	}
	if updates, loads := liar.counts(); updates != 1 || loads != 1 {
		t.Fatalf("the other worker: %d updates, %d loads; want 1 and 1", updates, loads)
	}
	if got := c.urls(); !slices.Equal(got, []string{sg.URL}) || good.at() != "3" {
		t.Errorf("URLs %v, good worker at %q; want only %s, at 3", got, good.at(), sg.URL)
	}
	want := sl.URL + ` reports weight version "default" after the update to "3"`
	if len(*warnings) != 1 || !strings.Contains((*warnings)[0], want) {
		t.Errorf("warnings %q, want one saying %q", *warnings, want)
	}
}

// failUpdates is a transport whose POSTs to /update_weights_from_disk fail
// to connect; everything else goes through.
type failUpdates struct{}

func (failUpdates) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.URL.Path == "/update_weights_from_disk" {
		return nil, errors.New("connection reset by peer")
	}
	return http.DefaultTransport.RoundTrip(r)
}

// TestSyncRetrySpacing: an update whose POST fails to connect is tried
// 1 + Retries times, the waits between tries Backoff, then doubled each time,
// none after the last; then the worker is taken out.
func TestSyncRetrySpacing(t *testing.T) {
	w := &fakeWorker{version: "default"}
	s := httptest.NewServer(w)
	defer s.Close()
	c, wts, _, _ := weightsClient(t, s.URL)
	c.opt.Retries, c.opt.Backoff, c.opt.HTTP = 3, 5*time.Millisecond, &http.Client{Transport: failUpdates{}}
	var waits []time.Duration
	c.pause = func(_ context.Context, d time.Duration) error {
		waits = append(waits, d)
		return nil
	}
	var warned []string
	wts.Warn = func(msg string) { warned = append(warned, msg) }
	err := c.Sync(context.Background(), 1)
	if !errors.Is(err, ErrNoWorker) || !strings.Contains(err.Error(), "connection reset") {
		t.Errorf("Sync = %v, want the no-worker error with the cause", err)
	}
	want := []time.Duration{5 * time.Millisecond, 10 * time.Millisecond, 20 * time.Millisecond}
	if !slices.Equal(waits, want) || len(warned) != 1 {
		t.Errorf("waits %v, %d warnings; want %v and 1", waits, len(warned), want)
	}
}

// TestSyncTakesOutAnUnreachableWorker: a URL that refuses connections is
// taken for a worker that is down: Sync takes it out and updates the rest,
// and fails with ErrNoWorker only when it was the last.
func TestSyncTakesOutAnUnreachableWorker(t *testing.T) {
	good := &fakeWorker{version: "default"}
	sg := httptest.NewServer(good)
	defer sg.Close()
	dead := httptest.NewServer(&fakeWorker{version: "default"})
	dead.Close()
	c, _, warnings, _ := weightsClient(t, sg.URL, dead.URL)
	if err := c.Sync(context.Background(), 2); err != nil {
		t.Fatalf("Sync with a live worker left: %v", err)
	}
	if got := c.urls(); !slices.Equal(got, []string{sg.URL}) || good.at() != "2" {
		t.Errorf("URLs %v, live worker at %q; want only %s, at 2", got, good.at(), sg.URL)
	}
	if len(*warnings) != 1 || !strings.Contains((*warnings)[0], "worker "+dead.URL+" taken out") {
		t.Errorf("warnings %q, want one naming %s", *warnings, dead.URL)
	}
	alone, _, _, _ := weightsClient(t, dead.URL)
	if err := alone.Sync(context.Background(), 2); !errors.Is(err, ErrNoWorker) {
		t.Errorf("Sync with only an unreachable worker: %v, want ErrNoWorker", err)
	}
}

// fakeVLLM answers as vLLM's OpenAI server in dev mode does: no
// /get_model_info, process_start_time_seconds in /metrics, /collective_rpc
// reload_weights {weights_path} and /reset_prefix_cache; its next fail
// reloads fail (a 500).
type fakeVLLM struct {
	mu     sync.Mutex
	start  string
	loaded []string // weights paths it reloaded
	resets int      // prefix-cache resets
	calls  []string // the dev-mode endpoints called, in order
	fail   int
}

func (f *fakeVLLM) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	switch r.URL.Path {
	case "/metrics":
		w.Write([]byte("# HELP process_start_time_seconds Start time of the process since unix epoch in seconds.\nprocess_start_time_seconds " + f.start + "\n"))
	case "/collective_rpc":
		f.calls = append(f.calls, r.URL.Path)
		if f.fail > 0 {
			f.fail--
			http.Error(w, "reload failed", http.StatusInternalServerError)
			return
		}
		var req struct {
			Method string            `json:"method"`
			Kwargs map[string]string `json:"kwargs"`
		}
		if json.NewDecoder(r.Body).Decode(&req) != nil || req.Method != "reload_weights" {
			http.Error(w, "bad rpc", http.StatusBadRequest)
			return
		}
		f.loaded = append(f.loaded, req.Kwargs["weights_path"])
		w.Write([]byte(`{"results":[null]}`))
	case "/reset_prefix_cache":
		f.calls = append(f.calls, r.URL.Path)
		f.resets++
		w.Write([]byte(`{"success":true}`))
	default:
		http.NotFound(w, r)
	}
}

// TestSyncVLLM: with the OpenAI protocol, a server without /get_model_info
// is taken for vLLM: Sync reloads the version through /collective_rpc and
// resets its prefix cache, a second Sync at the version does nothing, and a
// restart (another process start time) brings the version back. A policy
// with tied embeddings is loaded from the version's untied copy, whose
// lm_head is the embedding.
func TestSyncVLLM(t *testing.T) {
	v := &fakeVLLM{start: "1.7e+09"}
	s := httptest.NewServer(v)
	defer s.Close()
	cfg, err := qwen3.NamedConfig("tiny")
	if err != nil {
		t.Fatal(err)
	}
	cfg.TieEmbeddings = false
	wts := &Weights{Dir: filepath.Join(t.TempDir(), "weights"),
		Write:  func(dir string) error { return qwen3.WriteRandom(cfg, dir, "F32", 1) },
		Untied: qwen3.UntiedFolder,
		Warn:   func(msg string) { t.Errorf("warned: %s", msg) }}
	c, err := NewClient(ClientOptions{Protocol: OpenAI, URLs: []string{s.URL}, Vocab: cfg.VocabSize, Weights: wts, Retries: 1})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, version := range []int{0, 0, 1} {
		if err := c.Sync(ctx, version); err != nil {
			t.Fatal(err)
		}
	}
	v.mu.Lock()
	v.start = "1.8e+09" // restarted from its original weights
	v.mu.Unlock()
	if err := c.Sync(ctx, 1); err != nil {
		t.Fatal(err)
	}
	cfg.TieEmbeddings = true
	if err := c.Sync(ctx, 2); err != nil {
		t.Fatal(err)
	}
	folder := func(v int) string { return filepath.Join(wts.Dir, VersionFolder(v)) }
	want := []string{folder(0), folder(1), folder(1), filepath.Join(folder(2), qwen3.UntiedName)}
	if !slices.Equal(v.loaded, want) || v.resets != 4 {
		t.Fatalf("reloaded %v with %d prefix-cache resets, want %v and 4", v.loaded, v.resets, want)
	}
	untied, err := qwen3.LoadConfig(want[3])
	if err != nil {
		t.Fatal(err)
	}
	ck, err := qwen3.OpenCheckpoint(want[3])
	if err != nil {
		t.Fatal(err)
	}
	defer ck.Close()
	head, err1 := ck.Read("lm_head.weight", dtypes.Float32)
	embed, err2 := ck.Read("model.embed_tokens.weight", dtypes.Float32)
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	h, _ := qwen3.Float32s(head)
	e, _ := qwen3.Float32s(embed)
	if untied.TieEmbeddings || !slices.Equal(h, e) || len(ck.Names()) != len(untied.Tensors()) {
		t.Errorf("the untied copy: tie_word_embeddings %v, lm_head equal to the embedding %v, %d tensors (want %d)",
			untied.TieEmbeddings, slices.Equal(h, e), len(ck.Names()), len(untied.Tensors()))
	}
}

// openAIClient is an OpenAI-protocol client of urls with weightsClient's
// stand-in weights (one file written into a temporary weights_dir) and its
// warnings.
func openAIClient(t *testing.T, urls ...string) (*Client, *Weights, *[]string) {
	t.Helper()
	_, wts, warnings, _ := weightsClient(t, urls...)
	c, err := NewClient(ClientOptions{Protocol: OpenAI, URLs: urls, Vocab: 10, Weights: wts, Retries: 1})
	if err != nil {
		t.Fatal(err)
	}
	return c, wts, warnings
}

// TestSyncSGLangTakesNoServerForVLLM: with the SGLang protocol, a server
// without /get_model_info is no vLLM server: Sync asks it to
// /update_weights_from_disk, which it lacks, and takes it out, never
// reloading it through /collective_rpc.
func TestSyncSGLangTakesNoServerForVLLM(t *testing.T) {
	v := &fakeVLLM{start: "1.7e+09"}
	s := httptest.NewServer(v)
	defer s.Close()
	c, _, warnings, _ := weightsClient(t, s.URL)
	err := c.Sync(context.Background(), 1)
	v.mu.Lock()
	defer v.mu.Unlock()
	if !errors.Is(err, ErrNoWorker) || len(v.calls) != 0 || len(*warnings) != 1 {
		t.Errorf("Sync: %v, dev-mode calls %v, warnings %v; want ErrNoWorker, no call and the worker taken out", err, v.calls, *warnings)
	}
}

// TestSyncOpenAIUpdatesABusySGLangServer: with the OpenAI protocol, a server
// whose /get_model_info fails with a status other than 404 (a 503, busy) is
// no vLLM server: Sync updates it through /update_weights_from_disk.
func TestSyncOpenAIUpdatesABusySGLangServer(t *testing.T) {
	f := &fakeWorker{version: "default"}
	var busy atomic.Bool
	busy.Store(true)
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/get_model_info" && busy.Swap(false) {
			http.Error(w, "busy", http.StatusServiceUnavailable)
			return
		}
		f.ServeHTTP(w, r)
	}))
	defer s.Close()
	c, wts, warnings := openAIClient(t, s.URL)
	if err := c.Sync(context.Background(), 1); err != nil {
		t.Fatal(err)
	}
	want := filepath.Join(wts.Dir, VersionFolder(1))
	if f.at() != "1" || !slices.Equal(f.loaded, []string{want}) || len(*warnings) != 0 {
		t.Errorf("version %q, loaded %v, warnings %v; want 1 loaded from %s", f.at(), f.loaded, *warnings, want)
	}
}

// TestSyncVLLMRecordsOnlyASucceededReload: a vLLM server whose reload fails
// is taken out of its router with no version recorded, so that when it is
// listed again the next Sync reloads it; each reload is followed, never
// preceded, by a prefix-cache reset, and a failed one by none.
func TestSyncVLLMRecordsOnlyASucceededReload(t *testing.T) {
	v := &fakeVLLM{start: "1.7e+09", fail: 1}
	s := httptest.NewServer(v)
	defer s.Close()
	router := &fakeRouter{urls: map[string]string{"id-v": s.URL}}
	sr := httptest.NewServer(router)
	defer sr.Close()
	c, wts, warnings := openAIClient(t, sr.URL)
	ctx := context.Background()
	if err := c.Sync(ctx, 1); !errors.Is(err, ErrNoWorker) {
		t.Fatalf("Sync with the reload failing: %v, want ErrNoWorker", err)
	}
	router.mu.Lock()
	removed := slices.Clone(router.removed)
	router.urls["id-v"] = s.URL // registered again
	router.mu.Unlock()
	if err := c.Sync(ctx, 1); err != nil {
		t.Fatal(err)
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	want := []string{filepath.Join(wts.Dir, VersionFolder(1))}
	calls := []string{"/collective_rpc", "/collective_rpc", "/reset_prefix_cache"}
	if !slices.Equal(removed, []string{"id-v"}) || !slices.Equal(v.loaded, want) || !slices.Equal(v.calls, calls) {
		t.Errorf("removed %v, reloaded %v through %v; want id-v removed, then %v reloaded through %v", removed, v.loaded, v.calls, want, calls)
	}
	if len(*warnings) != 1 {
		t.Errorf("warnings %v, want the one of the failed reload", *warnings)
	}
}
