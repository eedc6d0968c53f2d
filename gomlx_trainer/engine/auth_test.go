package engine

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// keyed answers 401 to a request without Authorization: Bearer key, as
// mathrl serve --api-key and SGLang do, and passes the others to h; it
// counts both, by path.
type keyed struct {
	key      string
	h        http.Handler
	mu       sync.Mutex
	refused  map[string]int
	accepted map[string]int
}

func (k *keyed) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	k.mu.Lock()
	ok := r.Header.Get("Authorization") == "Bearer "+k.key
	if k.refused == nil {
		k.refused, k.accepted = map[string]int{}, map[string]int{}
	}
	if ok {
		k.accepted[r.Method+" "+r.URL.Path]++
	} else {
		k.refused[r.Method+" "+r.URL.Path]++
	}
	k.mu.Unlock()
	if !ok {
		http.Error(w, `{"error": {"message": "missing or wrong API key"}}`, http.StatusUnauthorized)
		return
	}
	k.h.ServeHTTP(w, r)
}

func (k *keyed) total() (refused, accepted int) {
	k.mu.Lock()
	defer k.mu.Unlock()
	for _, n := range k.refused {
		refused += n
	}
	for _, n := range k.accepted {
		accepted += n
	}
	return refused, accepted
}

// TestClientSendsTheAPIKey: with ClientOptions.APIKey every request carries
// Authorization: Bearer <key>, in both protocols, and is served; without a
// key, or with another, the first request's 401 is an error that names the
// cause (ErrUnauthorized) and shows no key, after one request: a 401 is not
// retried as a 5xx is.
func TestClientSendsTheAPIKey(t *testing.T) {
	ctx := context.Background()
	for _, protocol := range Protocols() {
		for _, key := range []string{"", "wrong", "s3cret"} {
			// A server of its own for each key, closed before counting: Close
			// waits for the handlers of requests the client gave up on.
			k := &keyed{key: "s3cret", h: &fakeServer{reply: echoReply}}
			srv := httptest.NewServer(k)
			c, err := NewClient(ClientOptions{Protocol: protocol, URLs: []string{srv.URL, srv.URL}, Vocab: 100, Backoff: 1, APIKey: key})
			if err != nil {
				t.Fatal(err)
			}
			sess, _ := c.Start(ctx, [][]int{{1}, {2}}, Options{})
			_, err = sess.Generate(ctx, []int{0, 1}, []int{2, 2}, nil)
			srv.Close()
			refused, accepted := k.total()
			if key == "s3cret" {
				if err != nil || refused != 0 || accepted != 2 {
					t.Errorf("%s with the key: %v, %d refused and %d served, want 2 served", protocol, err, refused, accepted)
				}
				continue
			}
			if !errors.Is(err, ErrUnauthorized) || !strings.Contains(err.Error(), "status 401") || !strings.Contains(err.Error(), APIKeyEnv) ||
				strings.Contains(err.Error(), "s3cret") || (key != "" && strings.Contains(err.Error(), key)) {
				t.Errorf("%s with key %q: %v, want ErrUnauthorized naming the status and %s, and no key", protocol, key, err, APIKeyEnv)
			}
			if refused > 2 || accepted != 0 {
				t.Errorf("%s with key %q: %d requests refused, %d served; want at most one per sequence, none retried", protocol, key, refused, accepted)
			}
		}
	}
}

// TestSyncSendsTheAPIKey: Sync sends the key with GET /workers to a router
// and with GET /get_model_info and POST /update_weights_from_disk to its
// workers, which load the version; with a wrong key it fails at once with
// ErrUnauthorized, and writes, retries and takes out nothing.
func TestSyncSendsTheAPIKey(t *testing.T) {
	ctx := context.Background()
	w := &fakeWorker{version: "default"}
	kw := &keyed{key: "s3cret", h: w}
	sw := httptest.NewServer(kw)
	defer sw.Close()
	router := &fakeRouter{urls: map[string]string{"w1": sw.URL}}
	kr := &keyed{key: "s3cret", h: router}
	sr := httptest.NewServer(kr)
	defer sr.Close()

	for _, key := range []string{"wrong", ""} {
		c, _, warnings, writes := weightsClient(t, sr.URL)
		c.opt.APIKey = key
		err := c.Sync(ctx, 1)
		if !errors.Is(err, ErrUnauthorized) || !strings.Contains(err.Error(), "listing the workers") || *writes != 0 || len(*warnings) != 0 {
			t.Errorf("Sync with key %q: %v, %d writes, warnings %q; want ErrUnauthorized listing the workers, nothing written", key, err, *writes, *warnings)
		}
	}
	if r, _ := kr.total(); r != 2 || len(router.removed) != 0 {
		t.Errorf("the router refused %d requests, removed %q; want 2 refused (one a Sync), none removed", r, router.removed)
	}

	c, _, warnings, _ := weightsClient(t, sr.URL)
	c.opt.APIKey = "s3cret"
	if err := c.Sync(ctx, 1); err != nil || w.at() != "1" || len(*warnings) != 0 {
		t.Fatalf("Sync with the key: %v, worker at %q, warnings %q", err, w.at(), *warnings)
	}
	if r, _ := kw.total(); r != 0 || kw.accepted["POST /update_weights_from_disk"] != 1 || kw.accepted["GET /get_model_info"] != 2 {
		t.Errorf("the worker refused %d, served %v; want an update and two version checks, all with the key", r, kw.accepted)
	}

	// A worker that takes another key than its router.
	kw.key = "other"
	c.opt.Weights.Keep = 0
	err := c.Sync(ctx, 2)
	if !errors.Is(err, ErrUnauthorized) || !strings.Contains(err.Error(), "get_model_info") || len(router.removed) != 0 {
		t.Errorf("Sync to a worker of another key: %v, removed %q; want ErrUnauthorized, none taken out", err, router.removed)
	}
	if r, _ := kw.total(); r != 1 {
		t.Errorf("the worker of another key refused %d requests, want 1 (no retry)", r)
	}
}

// TestClientTakes403AsUnauthorized: a 403 (what a proxy or router that
// knows the key but refuses it answers) is ErrUnauthorized as a 401 is:
// Generate fails after one request a sequence, naming the status, and Sync
// fails at once, writing and taking out nothing.
func TestClientTakes403AsUnauthorized(t *testing.T) {
	ctx := context.Background()
	// forbidding is a server that answers 403 to everything, counting the
	// requests (one each for Generate and for Sync, so that a request of
	// Generate's still in flight when it returns is not counted as Sync's).
	forbidding := func() (url string, count func() int) {
		var mu sync.Mutex
		requests := 0
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			requests++
			mu.Unlock()
			http.Error(w, `{"error": {"message": "forbidden"}}`, http.StatusForbidden)
		}))
		t.Cleanup(srv.Close)
		return srv.URL, func() int { mu.Lock(); defer mu.Unlock(); return requests }
	}

	url, count := forbidding()
	c, err := NewClient(ClientOptions{Protocol: SGLang, URLs: []string{url}, Vocab: 100, Backoff: 1, APIKey: "s3cret"})
	if err != nil {
		t.Fatal(err)
	}
	sess, _ := c.Start(ctx, [][]int{{1}, {2}}, Options{})
	_, err = sess.Generate(ctx, []int{0, 1}, []int{2, 2}, nil)
	if !errors.Is(err, ErrUnauthorized) || !strings.Contains(err.Error(), "status 403") || strings.Contains(err.Error(), "s3cret") {
		t.Errorf("Generate on a 403: %v, want ErrUnauthorized naming status 403, and no key", err)
	}
	if n := count(); n > 2 {
		t.Errorf("Generate sent %d requests for 2 sequences, want no retry", n)
	}

	url, count = forbidding()
	wc, _, warnings, writes := weightsClient(t, url)
	wc.opt.APIKey = "s3cret"
	if err := wc.Sync(ctx, 1); !errors.Is(err, ErrUnauthorized) || *writes != 0 || len(*warnings) != 0 || len(wc.urls()) != 1 {
		t.Errorf("Sync on a 403: %v, %d writes, warnings %q, urls %q; want ErrUnauthorized, nothing written nor taken out", err, *writes, *warnings, wc.urls())
	}
	if n := count(); n != 1 {
		t.Errorf("Sync sent %d requests, want 1 (GET /workers, not retried)", n)
	}
}

// writeGuarded answers 401 to POST /update_weights_from_disk without
// Authorization: Bearer key, as a proxy that guards only the writes does,
// and passes every other request to h; it counts the refusals.
type writeGuarded struct {
	key     string
	h       http.Handler
	mu      sync.Mutex
	refused int
}

func (g *writeGuarded) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/update_weights_from_disk" && r.Header.Get("Authorization") != "Bearer "+g.key {
		g.mu.Lock()
		g.refused++
		g.mu.Unlock()
		http.Error(w, `{"error": {"message": "missing or wrong API key"}}`, http.StatusUnauthorized)
		return
	}
	g.h.ServeHTTP(w, r)
}

// TestSyncStopsAtARefusedUpdate: a worker whose version check answers but
// whose POST /update_weights_from_disk is refused the key makes Sync fail
// with ErrUnauthorized after that one update request (not retried), and
// takes out no worker: neither it nor the worker that loaded the version
// leaves the client's URLs, and nothing is reported taken out.
func TestSyncStopsAtARefusedUpdate(t *testing.T) {
	ctx := context.Background()
	ok := &fakeWorker{version: "default"}
	sok := httptest.NewServer(ok)
	defer sok.Close()
	guarded := &writeGuarded{key: "other", h: &fakeWorker{version: "default"}}
	sg := httptest.NewServer(guarded)
	defer sg.Close()

	c, _, warnings, _ := weightsClient(t, sok.URL, sg.URL)
	c.opt.APIKey = "s3cret"
	err := c.Sync(ctx, 1)
	if !errors.Is(err, ErrUnauthorized) || !strings.Contains(err.Error(), "update_weights_from_disk") || strings.Contains(err.Error(), "s3cret") {
		t.Errorf("Sync with an update refused: %v, want ErrUnauthorized naming the update, and no key", err)
	}
	if urls := c.urls(); len(urls) != 2 || len(*warnings) != 0 {
		t.Errorf("Sync with an update refused took workers out: urls %q, warnings %q", urls, *warnings)
	}
	guarded.mu.Lock()
	defer guarded.mu.Unlock()
	if guarded.refused != 1 {
		t.Errorf("the guarded worker refused %d updates, want 1 (no retry)", guarded.refused)
	}
}
