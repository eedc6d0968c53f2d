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
	"testing"
)

// fakeWorker keeps a weight version as SGLang's /get_model_info reports it
// and takes /update_weights_from_disk when model_path holds the file the
// test's Write puts there; broken makes every update fail.
type fakeWorker struct {
	mu      sync.Mutex
	version string
	loaded  []string // model paths it loaded
	broken  bool
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
		if _, err := os.Stat(filepath.Join(req.ModelPath, "model.safetensors")); err != nil || f.broken {
			w.WriteHeader(http.StatusBadRequest)
			json.NewEncoder(w).Encode(map[string]any{"success": false, "message": "model_path: cannot load"})
			return
		}
		f.version, f.loaded = req.WeightVersion, append(f.loaded, req.ModelPath)
		json.NewEncoder(w).Encode(map[string]any{"success": true, "message": "ok"})
	default:
		http.NotFound(w, r)
	}
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
