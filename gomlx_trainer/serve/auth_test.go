package serve

import (
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gomlx/compute/dtypes"

	"github.com/mathrl/mathrl/gomlx_trainer/backend/backendtest"
	"github.com/mathrl/mathrl/gomlx_trainer/engine"
	"github.com/mathrl/mathrl/gomlx_trainer/qwen3"
)

// call sends a request with Authorization set to auth ("" sends none) and
// returns the status and the answer.
func call(t *testing.T, method, url, auth, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(data)
}

// TestServeAPIKey: with an API key, every endpoint but /health answers 401
// to a request without the key, with another key or with the key in another
// scheme, and serves one with Authorization: Bearer <key>.
func TestServeAPIKey(t *testing.T) {
	dir2 := tinyDir(t, 2)
	r := startWith(t, Options{ModelPath: tinyDir(t, 1), MaxBatch: 2, APIKey: "s3cret"}, nil)
	endpoints := []struct{ method, path, body string }{
		{"POST", "/generate", `{"input_ids": [1, 2], "sampling_params": {"max_new_tokens": 2}}`},
		{"POST", "/v1/completions", `{"prompt": [1, 2], "max_tokens": 2}`},
		{"GET", "/health_generate", ""},
		{"GET", "/get_model_info", ""},
		{"GET", "/server_info", ""},
		{"POST", "/update_weights_from_disk", `{"model_path": "` + dir2 + `", "weight_version": "7"}`},
		{"POST", "/flush_cache", ""},
	}
	for _, e := range endpoints {
		for _, auth := range []string{"", "Bearer wrong", "Bearer s3cre", "Bearer s3cretx", "Basic s3cret", "s3cret", "bearer s3cret"} {
			if code, body := call(t, e.method, r.url+e.path, auth, e.body); code != http.StatusUnauthorized || !strings.Contains(body, "API key") {
				t.Errorf("%s %s with Authorization %q: %d %s; want 401", e.method, e.path, auth, code, strings.TrimSpace(body))
			}
		}
	}
	if code, body := call(t, "GET", r.url+"/get_model_info", "Bearer s3cret", ""); code != 200 || !strings.Contains(body, `"weight_version":"default"`) {
		t.Errorf("the refused update changed the weights: %d %s", code, body)
	}
	for _, e := range endpoints {
		if code, body := call(t, e.method, r.url+e.path, "Bearer s3cret", e.body); code != http.StatusOK {
			t.Errorf("%s %s with the key: %d %s; want 200", e.method, e.path, code, strings.TrimSpace(body))
		}
	}
	if code, body := call(t, "GET", r.url+"/health", "", ""); code != http.StatusOK {
		t.Errorf("/health without the key: %d %s; want 200", code, body)
	}
}

// TestServeWithoutAPIKey: without a key every endpoint serves a request
// that sends none.
func TestServeWithoutAPIKey(t *testing.T) {
	r := start(t, tinyDir(t, 1), 2, nil)
	if code, body := call(t, "GET", r.url+"/get_model_info", "", ""); code != http.StatusOK {
		t.Errorf("/get_model_info: %d %s", code, body)
	}
}

// TestServeWeightsRoot: with a weights root, a model_path outside it (one
// that exists or not, through '..', through a symlink to a folder out of it
// or a folder holding a symlink to a file out of it) is answered the same
// 400, which says nothing of whether it exists, and the server keeps
// serving; folders inside it load, through symlinks that stay inside too,
// and the root may itself be reached through a symlink.
func TestServeWeightsRoot(t *testing.T) {
	tmp := t.TempDir()
	root := filepath.Join(tmp, "weights")
	inside, outside := filepath.Join(root, "version-000001"), tinyDir(t, 3)
	mustWriteTiny(t, inside, 2)
	escape := filepath.Join(root, "version-000002") // a real folder whose safetensors are a symlink out
	if err := os.MkdirAll(escape, 0o755); err != nil {
		t.Fatal(err)
	}
	mustCopy(t, filepath.Join(inside, "config.json"), filepath.Join(escape, "config.json"))
	mustLink(t, filepath.Join(outside, "model.safetensors"), filepath.Join(escape, "model.safetensors"))
	mustLink(t, outside, filepath.Join(root, "out"))
	mustLink(t, inside, filepath.Join(root, "alias"))
	mustLink(t, root, filepath.Join(tmp, "root-link"))

	r := startWith(t, Options{ModelPath: tinyDir(t, 1), MaxBatch: 2, WeightsRoot: filepath.Join(tmp, "root-link")}, nil)
	rel, err := filepath.Rel(inside, outside)
	if err != nil {
		t.Fatal(err)
	}
	refused := []string{
		outside,                              // exists, outside
		filepath.Join(tmp, "none"),           // does not exist, outside
		filepath.Join(root, "none"),          // does not exist, inside
		inside + "/" + rel,                   // '..' out of the root
		inside + "/../version-000001",        // '..' that stays inside: refused all the same
		filepath.Join(root, "out"),           // a symlink to a folder out of the root
		filepath.Join(root, "out", "nested"), // under it, not there
		escape,                               // a folder with a symlink to a file out of the root
		tmp,                                  // the root's parent
		"relative/none",
	}
	var first string
	for _, p := range refused {
		code, body := post(t, r.url+"/update_weights_from_disk", `{"model_path": "`+p+`", "weight_version": "9"}`)
		if first == "" {
			first = body
		}
		if code != http.StatusBadRequest || !strings.Contains(body, "model_path: outside the weights root") || body != first {
			t.Errorf("model_path %s: %d %s; want 400 %s", p, code, strings.TrimSpace(body), strings.TrimSpace(first))
		}
	}
	if code, body := post(t, r.url+"/generate", `{"input_ids": [1], "sampling_params": {"max_new_tokens": 2}}`); code != 200 {
		t.Errorf("after the refused loads: %d %s", code, body)
	}
	if _, info := get(t, r.url+"/get_model_info"); !strings.Contains(info, `"weight_version":"default"`) {
		t.Errorf("a refused load changed the weights: %s", info)
	}
	for _, p := range []string{inside, filepath.Join(root, "alias"), filepath.Join(tmp, "root-link", "version-000001")} {
		code, body := post(t, r.url+"/update_weights_from_disk", `{"model_path": "`+p+`", "weight_version": "v"}`)
		if code != 200 || !strings.Contains(body, `"success":true`) {
			t.Errorf("model_path %s, inside the root: %d %s", p, code, body)
		}
	}
	if _, info := get(t, r.url+"/get_model_info"); !strings.Contains(info, `"weight_version":"v"`) {
		t.Errorf("after the loads inside the root: %s", info)
	}
}

// TestServeRefusesAMissingWeightsRoot: New fails on a weights root that is
// not a folder.
func TestServeRefusesAMissingWeightsRoot(t *testing.T) {
	dir := tinyDir(t, 1)
	for _, root := range []string{filepath.Join(t.TempDir(), "none"), filepath.Join(dir, "config.json")} {
		_, err := New(Options{Backend: backendtest.New(t), ModelPath: dir, DType: dtypes.Float32, WeightsRoot: root})
		if err == nil || !strings.Contains(err.Error(), "weights root") {
			t.Errorf("weights root %s: %v, want an error naming it", root, err)
		}
	}
}

// TestIsLoopback: which --host values listen on loopback only.
func TestIsLoopback(t *testing.T) {
	for host, want := range map[string]bool{"127.0.0.1": true, "127.1.2.3": true, "localhost": true, "LocalHost": true, "::1": true,
		"[::1]": true, "": false, "0.0.0.0": false, "::": false, "10.0.0.5": false, "example.com": false, "localhost.example.com": false} {
		if got := IsLoopback(host); got != want {
			t.Errorf("IsLoopback(%q) = %v, want %v", host, got, want)
		}
	}
}

func mustWriteTiny(t *testing.T, dir string, seed uint64) {
	t.Helper()
	cfg, err := qwen3.NamedConfig("tiny")
	if err == nil {
		err = qwen3.WriteRandom(cfg, dir, "F32", seed)
	}
	if err != nil {
		t.Fatal(err)
	}
}

func mustCopy(t *testing.T, from, to string) {
	t.Helper()
	data, err := os.ReadFile(from)
	if err == nil {
		err = os.WriteFile(to, data, 0o644)
	}
	if err != nil {
		t.Fatal(err)
	}
}

func mustLink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

// TestServeTakesTheClientsKey: engine.Client with ClientOptions.APIKey
// samples on a server of that key and syncs its weights; with another key
// it gets ErrUnauthorized.
func TestServeTakesTheClientsKey(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	r := startWith(t, Options{ModelPath: tinyDir(t, 1), MaxBatch: 2, APIKey: "s3cret", WeightsRoot: root}, nil)
	for _, key := range []string{"s3cret", "wrong"} {
		wts := &engine.Weights{Dir: root, Write: func(dir string) error { mustWriteTiny(t, dir, 5); return nil }}
		c, err := engine.NewClient(engine.ClientOptions{Protocol: engine.SGLang, URLs: []string{r.url}, Vocab: 300, APIKey: key, Weights: wts})
		if err != nil {
			t.Fatal(err)
		}
		err = c.Sync(ctx, 1)
		if err == nil {
			var sess engine.Session
			if sess, err = c.Start(ctx, [][]int{{1, 2}}, engine.Options{Temperature: 1}); err == nil {
				_, err = sess.Generate(ctx, []int{0}, []int{3}, nil)
			}
		}
		if want := key == "s3cret"; (err == nil) != want || !want && !errors.Is(err, engine.ErrUnauthorized) {
			t.Errorf("key %q: %v", key, err)
		}
	}
	if _, info := call(t, "GET", r.url+"/get_model_info", "Bearer s3cret", ""); !strings.Contains(info, `"weight_version":"1"`) {
		t.Errorf("after the sync: %s", info)
	}
}

// TestServeAPIKeyWantsTheKeyAfterBearer: the scheme alone, with or without
// its space, or with the key after two spaces or followed by more, is not
// the key: 401.
func TestServeAPIKeyWantsTheKeyAfterBearer(t *testing.T) {
	r := startWith(t, Options{ModelPath: tinyDir(t, 1), MaxBatch: 2, APIKey: "s3cret"}, nil)
	for _, auth := range []string{"Bearer", "Bearer ", "Bearer  s3cret", "Bearer s3cret x", "Bearer\ts3cret"} {
		if code, body := call(t, "GET", r.url+"/get_model_info", auth, ""); code != http.StatusUnauthorized {
			t.Errorf("Authorization %q: %d %s; want 401", auth, code, strings.TrimSpace(body))
		}
	}
	if code, body := call(t, "GET", r.url+"/get_model_info", "Bearer s3cret", ""); code != http.StatusOK {
		t.Errorf("with the key: %d %s", code, body)
	}
}

// TestServeWeightsRootIsAFolderNotAPrefix: a folder beside the root whose
// name starts with the root's (root .../weights, folder .../weights-old) is
// outside it, and a symlink inside the root to that folder leads outside
// too: both get the same 400 as any path outside.
func TestServeWeightsRootIsAFolderNotAPrefix(t *testing.T) {
	tmp := t.TempDir()
	root, sibling := filepath.Join(tmp, "weights"), filepath.Join(tmp, "weights-old")
	mustWriteTiny(t, filepath.Join(root, "version-000001"), 2)
	mustWriteTiny(t, sibling, 3)
	mustLink(t, sibling, filepath.Join(root, "old"))
	r := startWith(t, Options{ModelPath: tinyDir(t, 1), MaxBatch: 2, WeightsRoot: root}, nil)
	for _, p := range []string{sibling, filepath.Join(root, "old")} {
		code, body := post(t, r.url+"/update_weights_from_disk", `{"model_path": "`+p+`", "weight_version": "9"}`)
		if code != http.StatusBadRequest || !strings.Contains(body, "model_path: outside the weights root") {
			t.Errorf("model_path %s: %d %s; want 400 outside the weights root", p, code, strings.TrimSpace(body))
		}
	}
	if _, info := get(t, r.url+"/get_model_info"); !strings.Contains(info, `"weight_version":"default"`) {
		t.Errorf("a refused load changed the weights: %s", info)
	}
}
