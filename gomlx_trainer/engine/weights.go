package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// ErrNoWorker is wrapped by Sync's error when no worker is left to sample
// from: every one failed its weight update, or none is listed.
var ErrNoWorker = errors.New("no rollout worker left")

// Weights say how a Client brings its servers to the policy's weights.
type Weights struct {
	Dir   string                 // weights_dir: one folder per version, named VersionFolder(version)
	Write func(dir string) error // writes the policy as it is now as a Hugging Face folder (config.json + safetensors) into dir
	Keep  int                    // newest version folders kept (0: 2, the one the servers load and the one before)
	Warn  func(msg string)       // told of each worker taken out (nil: not told)
	// Checkpoint, when set, is a Hugging Face folder holding the weights to
	// sample from as they are (the model `mathrl eval` evaluates): Sync has
	// every worker load it under the weight version CheckpointVersion(its
	// absolute path), whatever version it is asked for, and Dir, Write and
	// Keep are unused.
	Checkpoint string
	// Untied returns a folder of the weights of the Hugging Face folder dir
	// with the output head untied (dir itself when it is), which vLLM servers
	// load: vLLM 0.32's in-place reload leaves a tied lm_head at its old
	// weights (docs/vllm.md). nil: they load dir as it is.
	Untied func(dir string) (string, error)
}

// CheckpointVersion is the weight version of the workers that loaded the
// checkpoint folder dir (an absolute path): "checkpoint:" and the path, so
// that no training run's version, a number, is taken for it.
func CheckpointVersion(dir string) string { return "checkpoint:" + dir }

// VersionFolder is the folder of weights_dir that holds the weights after
// version optimizer steps.
func VersionFolder(version int) string { return fmt.Sprintf("version-%06d", version) }

// worker is one inference server: its URL and, behind a router, its id there.
type worker struct {
	url, id string
	router  string // the router it was listed by ("" when named directly)
	vllm    bool   // a vLLM server (no /get_model_info): updated through its dev-mode /collective_rpc
}

// Sync brings every worker to the weights after version optimizer steps: it
// lists the workers (a router's, through its GET /workers, or the servers
// named in URLs), asks each for its weight_version (GET /get_model_info),
// and when any has another, writes the policy into weights_dir (atomically,
// one folder per version, older ones pruned) and calls POST
// /update_weights_from_disk {model_path, weight_version} on each such worker,
// then checks it reports the version. So a worker that restarted with other
// weights comes back at the current ones at the next sync. A worker whose
// update fails is taken out (removed from its router, or from the client's
// URLs) and reported through Weights.Warn; with none left, Sync fails.
// A 401 or 403 (ErrUnauthorized: a missing or wrong API key) fails Sync at
// once, retrying nothing and taking no worker out. Without Weights, version
// 0 is taken to be the servers' own weights; with Weights.Checkpoint, the
// workers load that folder, whatever the version.
func (c *Client) Sync(ctx context.Context, version int) error {
	if c.opt.Weights == nil && version == 0 {
		return nil // nothing to push: the servers' own weights are the policy's before its first update
	}
	c.syncMu.Lock()
	defer c.syncMu.Unlock()
	if c.opt.Weights != nil && c.opt.Weights.Checkpoint != "" {
		dir, err := filepath.Abs(c.opt.Weights.Checkpoint)
		if err != nil {
			return fmt.Errorf("engine: checkpoint %s: %w", c.opt.Weights.Checkpoint, err)
		}
		return c.bringTo(ctx, CheckpointVersion(dir), func() (string, error) { return dir, nil })
	}
	return c.bringTo(ctx, strconv.Itoa(version), func() (string, error) { return c.writeVersion(version) })
}

// bringTo has every worker not at weight version want load the folder
// folder returns (called once, only when some worker needs it), taking out
// those whose update fails.
func (c *Client) bringTo(ctx context.Context, want string, folder func() (string, error)) error {
	workers, err := c.workers(ctx)
	if err != nil {
		return err
	}
	var stale []worker
	for _, w := range workers {
		v, err := c.weightVersion(ctx, w.url)
		if errors.Is(err, errNoModelInfo) && c.opt.Protocol == OpenAI {
			w.vllm = true
			v, err = c.vllmVersion(ctx, w.url)
		}
		if errors.Is(err, ErrUnauthorized) {
			return fmt.Errorf("engine: %s: %w", c.opt.Protocol, err)
		}
		if err != nil || v != want {
			stale = append(stale, w)
		}
	}
	if len(stale) == 0 {
		return nil
	}
	if c.opt.Weights == nil {
		return fmt.Errorf("engine: %s: %d worker(s) are not at weight version %s, and the client has no weights_dir to push them from", c.opt.Protocol, len(stale), want)
	}
	dir, err := folder()
	if err != nil {
		return err
	}
	errs := c.updateAll(ctx, stale, dir, want)
	for _, err := range errs {
		if errors.Is(err, ErrUnauthorized) {
			return fmt.Errorf("engine: %s: %w", c.opt.Protocol, err)
		}
	}
	failed := 0
	for i, err := range errs {
		if err != nil {
			failed++
			c.takeOut(ctx, stale[i], err)
		}
	}
	if failed == len(workers) {
		return fmt.Errorf("engine: %s: %w at weight version %s; the last failed with: %w", c.opt.Protocol, ErrNoWorker, want, firstError(errs))
	}
	if c.opt.Weights.Checkpoint != "" {
		return nil // the checkpoint is the caller's folder: nothing to prune
	}
	return c.prune()
}

// updateAll has each stale worker load dir as version want, at once, and
// returns each one's error: vLLM servers through their dev-mode endpoints,
// from Weights.Untied's copy of dir when it is set, the others through
// POST /update_weights_from_disk.
func (c *Client) updateAll(ctx context.Context, stale []worker, dir, want string) []error {
	vdir, verr := dir, error(nil) // the folder vLLM servers load
	if c.opt.Weights.Untied != nil && slices.ContainsFunc(stale, func(w worker) bool { return w.vllm }) {
		vdir, verr = c.opt.Weights.Untied(dir)
	}
	errs := make([]error, len(stale))
	var wg sync.WaitGroup
	for i, w := range stale {
		switch {
		case w.vllm && verr != nil:
			errs[i] = fmt.Errorf("vLLM server %s: %w", w.url, verr)
		case w.vllm:
			wg.Go(func() { errs[i] = c.updateVLLM(ctx, w, vdir, want) })
		default:
			wg.Go(func() { errs[i] = c.update(ctx, w, dir, want) })
		}
	}
	wg.Wait()
	return errs
}

// workers lists the servers behind the client's URLs: each URL that answers
// GET /workers with a list is a router and stands for the workers it lists,
// any other is a worker itself, one that cannot be reached too (its update
// then fails and takes it out, as any failed worker's does).
func (c *Client) workers(ctx context.Context) ([]worker, error) {
	var out []worker
	for _, u := range c.urls() {
		listed, err := c.routerWorkers(ctx, u)
		if errors.Is(err, errUnreachable) && ctx.Err() == nil {
			listed, err = nil, nil
		}
		if err != nil {
			return nil, err
		}
		if listed == nil {
			out = append(out, worker{url: u})
		}
		out = append(out, listed...)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("engine: %s: %w", c.opt.Protocol, ErrNoWorker)
	}
	return out, nil
}

// errUnreachable marks a URL that did not answer GET /workers at all.
var errUnreachable = errors.New("no answer")

// routerWorkers returns the workers the router at u lists, or nil if u is no
// router (its GET /workers is not a list of workers).
func (c *Client) routerWorkers(ctx context.Context, u string) ([]worker, error) {
	status, body, err := c.do(ctx, http.MethodGet, u+"/workers", nil)
	if errors.Is(err, ErrUnauthorized) {
		return nil, fmt.Errorf("engine: %s: listing the workers of %s: %w", c.opt.Protocol, u, err)
	}
	if err != nil {
		return nil, fmt.Errorf("engine: %s: listing the workers of %s: %w: %w", c.opt.Protocol, u, errUnreachable, err)
	}
	var list struct {
		Workers *[]struct {
			ID  string `json:"id"`
			URL string `json:"url"`
		} `json:"workers"`
	}
	if status != http.StatusOK || json.Unmarshal(body, &list) != nil || list.Workers == nil {
		return nil, nil
	}
	out := []worker{}
	for _, w := range *list.Workers {
		out = append(out, worker{url: strings.TrimRight(w.URL, "/"), id: w.ID, router: u})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("engine: %s: the router at %s lists no worker", c.opt.Protocol, u)
	}
	return out, nil
}

// weightVersion is the weight_version a worker's GET /get_model_info reports.
func (c *Client) weightVersion(ctx context.Context, u string) (string, error) {
	status, body, err := c.do(ctx, http.MethodGet, u+"/get_model_info", nil)
	if err != nil {
		return "", fmt.Errorf("GET %s/get_model_info: %w", u, err)
	}
	var info struct {
		Version *string `json:"weight_version"`
	}
	if status == http.StatusNotFound {
		return "", fmt.Errorf("GET %s/get_model_info: status %d (%w): %s", u, status, errNoModelInfo, snippet(body))
	}
	if status != http.StatusOK || json.Unmarshal(body, &info) != nil || info.Version == nil {
		return "", fmt.Errorf("GET %s/get_model_info: status %d: %s", u, status, snippet(body))
	}
	return *info.Version, nil
}

// errNoModelInfo marks a server without GET /get_model_info (404): with the
// OpenAI protocol, a vLLM server.
var errNoModelInfo = errors.New("no such endpoint")

// writeVersion writes the policy into weights_dir's folder of version, whole
// or not at all (a temporary folder renamed), and returns its absolute path.
func (c *Client) writeVersion(version int) (string, error) {
	root, err := filepath.Abs(c.opt.Weights.Dir)
	if err != nil {
		return "", fmt.Errorf("engine: weights_dir %s: %w", c.opt.Weights.Dir, err)
	}
	dir := filepath.Join(root, VersionFolder(version))
	tmp := dir + ".tmp"
	if err := os.RemoveAll(tmp); err != nil {
		return "", fmt.Errorf("engine: weights_dir: %w", err)
	}
	if err := os.MkdirAll(root, 0o755); err != nil {
		return "", fmt.Errorf("engine: weights_dir: %w", err)
	}
	if err := c.opt.Weights.Write(tmp); err != nil {
		os.RemoveAll(tmp)
		return "", fmt.Errorf("engine: writing the weights of version %d into %s: %w", version, tmp, err)
	}
	if err := os.RemoveAll(dir); err != nil { // a version written before a resume
		return "", fmt.Errorf("engine: weights_dir: %w", err)
	}
	if err := os.Rename(tmp, dir); err != nil {
		return "", fmt.Errorf("engine: weights_dir: %w", err)
	}
	return dir, nil
}

// update asks one worker to load dir as version want, then checks that it
// reports it. A connection error is retried like a request's.
func (c *Client) update(ctx context.Context, w worker, dir, want string) error {
	body, _ := json.Marshal(map[string]string{"model_path": dir, "weight_version": want})
	wait := c.opt.Backoff
	for try := 0; ; try++ {
		status, resp, err := c.do(ctx, http.MethodPost, w.url+"/update_weights_from_disk", body)
		if err == nil {
			var ans struct {
				Success bool   `json:"success"`
				Message string `json:"message"`
			}
			if status != http.StatusOK || json.Unmarshal(resp, &ans) != nil || !ans.Success {
				return fmt.Errorf("POST %s/update_weights_from_disk: status %d: %s", w.url, status, snippet(resp))
			}
			got, err := c.weightVersion(ctx, w.url)
			if err != nil {
				return err
			}
			if got != want {
				return fmt.Errorf("%s reports weight version %q after the update to %q", w.url, got, want)
			}
			return nil
		}
		if ctx.Err() != nil || try >= c.opt.Retries || errors.Is(err, ErrUnauthorized) {
			return fmt.Errorf("POST %s/update_weights_from_disk: %w", w.url, err)
		}
		if err := c.sleep(ctx, wait); err != nil {
			return err
		}
		wait *= 2
	}
}

// takeOut stops sending requests to a worker whose update failed: its
// router forgets it (DELETE /workers/{id}), or the client drops its URL.
func (c *Client) takeOut(ctx context.Context, w worker, why error) {
	msg := fmt.Sprintf("engine: worker %s taken out: its weight update failed: %v", w.url, why)
	if w.router != "" {
		if status, body, err := c.do(ctx, http.MethodDelete, w.router+"/workers/"+w.id, nil); err != nil || status/100 != 2 {
			msg += fmt.Sprintf(" (and its router %s did not remove it: %v %s)", w.router, err, snippet(body))
		}
	} else {
		c.mu.Lock()
		c.opt.URLs = slices.DeleteFunc(c.opt.URLs, func(u string) bool { return u == w.url })
		c.mu.Unlock()
	}
	if c.opt.Weights.Warn != nil {
		c.opt.Weights.Warn(msg)
	}
}

// prune removes all but the newest Keep version folders of weights_dir.
func (c *Client) prune() error {
	keep := c.opt.Weights.Keep
	if keep <= 0 {
		keep = 2
	}
	entries, err := os.ReadDir(c.opt.Weights.Dir)
	if err != nil {
		return fmt.Errorf("engine: weights_dir: %w", err)
	}
	var versions []string // VersionFolder names sort by version
	for _, e := range entries {
		if e.IsDir() && strings.HasPrefix(e.Name(), "version-") && !strings.HasSuffix(e.Name(), ".tmp") {
			versions = append(versions, e.Name())
		}
	}
	slices.Sort(versions)
	for _, name := range versions[:max(len(versions)-keep, 0)] {
		if err := os.RemoveAll(filepath.Join(c.opt.Weights.Dir, name)); err != nil {
			return fmt.Errorf("engine: weights_dir: %w", err)
		}
	}
	return nil
}

// urls is a copy of the client's live URLs.
func (c *Client) urls() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.opt.URLs)
}

// do sends one request with an optional JSON body and returns the status
// and the body.
func (c *Client) do(ctx context.Context, method, url string, data []byte) (int, []byte, error) {
	if method == http.MethodPost {
		return c.post(ctx, url, data)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, nil)
	if err != nil {
		return 0, nil, err
	}
	return c.send(req)
}

// vLLM's OpenAI server reports no weight version, so the client keeps the
// version it last loaded into each vLLM server, with the server's process
// start time (process_start_time_seconds in its GET /metrics): a server that
// restarted since, at other weights, so reports another start time and is
// brought back at the next sync.

// vllmVersion is the version the client last loaded into the vLLM server at
// u, or "" when it loaded none, or the server restarted since.
func (c *Client) vllmVersion(ctx context.Context, u string) (string, error) {
	start, err := c.vllmStart(ctx, u)
	if err != nil {
		return "", err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if p, ok := c.vllmLoaded[u]; ok && p.start == start {
		return p.version, nil
	}
	return "", nil
}

// vllmStart is process_start_time_seconds from the GET /metrics of the vLLM
// server at u.
func (c *Client) vllmStart(ctx context.Context, u string) (string, error) {
	status, body, err := c.do(ctx, http.MethodGet, u+"/metrics", nil)
	if err != nil {
		return "", err
	}
	if status != http.StatusOK {
		return "", fmt.Errorf("GET %s/metrics: status %d: %s", u, status, snippet(body))
	}
	for _, line := range strings.Split(string(body), "\n") {
		if v, ok := strings.CutPrefix(line, "process_start_time_seconds "); ok {
			return strings.TrimSpace(v), nil
		}
	}
	return "", fmt.Errorf("GET %s/metrics: no process_start_time_seconds", u)
}

// updateVLLM loads dir into the vLLM server w in place, through its dev-mode
// endpoints (the server started with VLLM_SERVER_DEV_MODE=1): POST
// /collective_rpc {method: reload_weights, kwargs: {weights_path: dir}},
// then POST /reset_prefix_cache (the cached prefixes were computed with the
// old weights), and records want as its version.
func (c *Client) updateVLLM(ctx context.Context, w worker, dir, want string) error {
	start, err := c.vllmStart(ctx, w.url)
	if err != nil {
		return err
	}
	body, _ := json.Marshal(map[string]any{"method": "reload_weights", "kwargs": map[string]string{"weights_path": dir}})
	for _, call := range []struct {
		path string
		body []byte
	}{{"/collective_rpc", body}, {"/reset_prefix_cache", nil}} {
		status, resp, err := c.do(ctx, http.MethodPost, w.url+call.path, call.body)
		if err != nil {
			return fmt.Errorf("POST %s%s: %w", w.url, call.path, err)
		}
		if status != http.StatusOK {
			return fmt.Errorf("POST %s%s: status %d: %s (is the server in dev mode, VLLM_SERVER_DEV_MODE=1?)", w.url, call.path, status, snippet(resp))
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.vllmLoaded == nil {
		c.vllmLoaded = map[string]vllmLoad{}
	}
	c.vllmLoaded[w.url] = vllmLoad{version: want, start: start}
	return nil
}

// vllmLoad is the version the client loaded into a vLLM server and the
// server's start time then.
type vllmLoad struct{ version, start string }
