package grpo

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gomlx/compute"
	"github.com/gomlx/compute/dtypes"

	"github.com/mathrl/mathrl/gomlx_trainer/engine"
	"github.com/mathrl/mathrl/gomlx_trainer/engine/inprocess"
	"github.com/mathrl/mathrl/gomlx_trainer/qwen3"
	"github.com/mathrl/mathrl/gomlx_trainer/sampler"
	"github.com/mathrl/mathrl/gomlx_trainer/serve"
	"github.com/mathrl/mathrl/internal/testenv"
)

// fleetWorker is a mathrl serve worker on a loopback port, in process, that
// the test can kill as a crash looks from the network (its listener and
// every connection closed at once) and start again on the same port.
type fleetWorker struct {
	t        testing.TB
	backend  compute.Backend
	model    string // the folder it starts from
	addr     string
	mu       sync.Mutex
	conns    []net.Conn
	ln       net.Listener
	served   atomic.Int64 // /generate requests it has answered
	refuse   atomic.Bool  // answer /update_weights_from_disk with a 500
	onServe  func(n int64)
	stopServ context.CancelFunc
}

func startFleetWorker(t testing.TB, b compute.Backend, model string) *fleetWorker {
	w := &fleetWorker{t: t, backend: b, model: model, addr: "127.0.0.1:0"}
	w.start()
	t.Cleanup(w.kill)
	return w
}

func (w *fleetWorker) url() string { return "http://" + w.addr }

// start serves the worker's model on its address, one sequence at a time
// (--max-batch 1), so that every answer is the same whichever worker gives
// it and whatever else is being sampled.
func (w *fleetWorker) start() {
	srv, err := serve.New(serve.Options{Backend: w.backend, ModelPath: w.model, DType: dtypes.Float32, MaxBatch: 1})
	if err != nil {
		w.t.Fatal(err)
	}
	ln, err := net.Listen("tcp", w.addr)
	if err != nil {
		w.t.Fatal(err)
	}
	w.mu.Lock()
	w.ln, w.addr, w.conns = ln, ln.Addr().String(), nil
	w.mu.Unlock()
	ctx, cancel := context.WithCancel(context.Background())
	w.stopServ = cancel
	counted := http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/update_weights_from_disk" && w.refuse.Load() {
			http.Error(rw, "refused by the test", http.StatusInternalServerError)
			return
		}
		srv.Handler().ServeHTTP(rw, r)
		if r.URL.Path == "/generate" {
			if n := w.served.Add(1); w.onServe != nil {
				w.onServe(n)
			}
		}
	})
	hs := &http.Server{Handler: counted, ConnState: func(c net.Conn, s http.ConnState) {
		if s == http.StateNew {
			w.mu.Lock()
			w.conns = append(w.conns, c)
			w.mu.Unlock()
		}
	}}
	go hs.Serve(ln)
	go srv.Serve(ctx, nopListener{}) // runs the scheduler; hs answers on ln
}

// kill closes the listener and every connection at once, as a crash does.
func (w *fleetWorker) kill() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.ln == nil {
		return
	}
	w.ln.Close()
	for _, c := range w.conns {
		c.Close()
	}
	w.ln, w.conns = nil, nil
	w.stopServ()
}

// nopListener never accepts: serve.Server.Serve runs its scheduler on it
// while the test's own http.Server answers.
type nopListener struct{}

func (nopListener) Accept() (net.Conn, error) { select {} }
func (nopListener) Close() error              { return nil }
func (nopListener) Addr() net.Addr            { return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)} }

// startRouter runs the SGLang router (scripts/setup.sh installs it) in front
// of the workers, round robin with a health check every second, and waits
// until it lists them all healthy.
func startRouter(t testing.TB, workers ...*fleetWorker) string {
	t.Helper()
	python := testenv.CacheFile(t, filepath.Join("router-venv", "bin", "python"))
	port, metrics := freePort(t), freePort(t)
	args := []string{"-m", "sglang_router.launch_router", "--host", "127.0.0.1", "--port", port, "--policy", "round_robin",
		"--health-check-interval-secs", "1", "--log-level", "warn", "--prometheus-host", "127.0.0.1", "--prometheus-port", metrics,
		"--worker-urls"}
	for _, w := range workers {
		args = append(args, w.url())
	}
	var log bytes.Buffer
	cmd := exec.Command(python, args...)
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	url := "http://127.0.0.1:" + port
	deadline := time.Now().Add(60 * time.Second)
	for healthyWorkers(url) < len(workers) {
		if time.Now().After(deadline) {
			t.Fatalf("the router did not list %d healthy workers within 60 s:\n%s", len(workers), log.String())
		}
		time.Sleep(200 * time.Millisecond)
	}
	return url
}

// freePort is a loopback port free a moment ago.
func freePort(t testing.TB) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
}

// healthyWorkers is how many workers the router at url lists as healthy.
func healthyWorkers(url string) int {
	resp, err := http.Get(url + "/workers")
	if err != nil {
		return 0
	}
	defer resp.Body.Close()
	var list struct {
		Workers []struct {
			Healthy bool `json:"is_healthy"`
		} `json:"workers"`
	}
	json.NewDecoder(resp.Body).Decode(&list)
	n := 0
	for _, w := range list.Workers {
		if w.Healthy {
			n++
		}
	}
	return n
}

// addWorker registers a worker with the router (POST /workers), as an
// operator or a launcher does for a restarted one.
func addWorker(t *testing.T, router string, w *fleetWorker) {
	body := fmt.Sprintf(`{"url": %q}`, w.url())
	resp, err := http.Post(router+"/workers", "application/json", bytes.NewBufferString(body))
	if err != nil {
		t.Error(err)
		return
	}
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		t.Errorf("POST %s/workers: status %d", router, resp.StatusCode)
	}
}

// workerVersion is the weight_version a worker reports.
func workerVersion(t *testing.T, w *fleetWorker) string {
	t.Helper()
	resp, err := http.Get(w.url() + "/get_model_info")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var info struct {
		Version string `json:"weight_version"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&info); err != nil {
		t.Fatal(err)
	}
	return info.Version
}

// tapLog is a testLog that shows each line the run logs to on.
type tapLog struct {
	testLog
	on func(line string)
}

func (l *tapLog) Write(p []byte) (int, error) {
	l.on(string(p))
	return l.testLog.Write(p)
}

// fleetRecipe is the smoke recipe sampled through the router, with the
// mismatch metric on.
func fleetRecipe(t *testing.T, router string) Config {
	cfg := smokeConfig(t)
	cfg.NumRollout = 3
	cfg.RolloutEngine, cfg.RolloutEngineURLs = "sglang", []string{router}
	cfg.GetMismatchMetrics = true
	return cfg
}

// initialPolicy writes the recipe's initial policy as the folder the
// workers start from (Sync replaces it with version 0 anyway).
func initialPolicy(t testing.TB, cfg Config) string {
	m, err := newPolicy(cfg)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "initial")
	if err := m.Save(dir, "F32"); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestFleetRouterAndAKilledWorker runs the smoke recipe (3 rollouts) with
// rollout_engine sglang through the SGLang router in front of two mathrl
// serve workers, twice. The first run finishes with both workers at the last
// weight version and the mismatch metric within float32 rounding of 0 (the
// same model code samples and trains). In the second, one worker is killed
// mid-way through the first rollout and started again, at its original
// weights, after it: its requests are retried on the other, the restarted
// worker is registered with the router again and brought to the current
// weights at the next sync, and the run ends with the weights and samples
// of the first, bit for bit, so no sample was lost or counted twice.
func TestFleetRouterAndAKilledWorker(t *testing.T) {
	if testing.Short() {
		t.Skip("trains a tiny model on a fleet")
	}
	b := testBackend(t)
	base := smokeConfig(t)
	model := initialPolicy(t, base)

	run := func(name string, kill bool) (map[string][]float32, [][]int) {
		w1, w2 := startFleetWorker(t, b, model), startFleetWorker(t, b, model)
		router := startRouter(t, w1, w2)
		cfg := fleetRecipe(t, router)
		cfg.Save = filepath.Join(t.TempDir(), name)
		// The kill comes at worker 1's third request after the first
		// evaluation has ended (the log says so), inside the first rollout.
		var evaluated, killedAt atomic.Int64
		log := &tapLog{on: func(line string) {
			if strings.Contains(line, "eval at step 0: avg@") {
				evaluated.Store(w1.served.Load())
			}
		}}
		if kill {
			w1.onServe = func(n int64) {
				if e := evaluated.Load(); e > 0 && n == e+3 && killedAt.CompareAndSwap(0, n) {
					go w1.kill()
				}
			}
		}
		var responses [][]int
		opts := TrainOptions{Backend: b, Tools: arithTools{}, Progress: log, OnRollout: func(r RolloutLog) {
			for _, s := range r.Samples {
				responses = append(responses, s.IDs)
			}
			if kill && r.Rollout == 1 {
				if killedAt.Load() == 0 {
					t.Errorf("%s: worker 1 was not killed during the first rollout", name)
				}
				w1.onServe = nil
				w1.served.Store(0)
				w1.start() // on its port again, at its original weights
				addWorker(t, router, w1)
			}
		}}
		if err := Train(context.Background(), cfg, opts); err != nil {
			t.Fatalf("%s: %v\n%s", name, err, log)
		}
		last := strconv.Itoa(cfg.NumRollout * cfg.StepsPerRollout())
		for i, w := range []*fleetWorker{w1, w2} {
			if v := workerVersion(t, w); v != last {
				t.Errorf("%s: worker %d ends at weight version %q, want %s", name, i+1, v, last)
			}
		}
		steps, _ := RunFolder(cfg.Save).ReadSteps(1 << 30)
		measured := 0
		for _, st := range steps {
			if d, ok := st.Extra["train_rollout_logprob_abs_diff_max"]; ok {
				measured++
				if d > 1e-5 {
					t.Errorf("%s: step %d: the trainer's log-probs differ from the servers' by up to %.3g", name, st.Step, d)
				}
			}
		}
		if measured == 0 || measured != len(steps) {
			t.Errorf("%s: the mismatch metric was logged at %d of %d steps, want every one", name, measured, len(steps))
		}
		if kill {
			t.Logf("%s: worker 1 killed at its request %d, answered %d after its restart", name, killedAt.Load(), w1.served.Load())
			if w1.served.Load() == 0 {
				t.Errorf("%s: the restarted worker answered no request", name)
			}
		}
		final, _ := LatestCheckpoint(RunFolder(cfg.Save).CkptDir())
		return checkpointWeights(t, final), responses
	}
	wantW, wantR := run("whole", false)
	gotW, gotR := run("killed", true)
	if d := maxAbsDiff(t, gotW, wantW); d != 0 {
		t.Errorf("with a worker killed, the final weights differ from the whole fleet's by up to %.3g, want 0", d)
	}
	if len(gotR) != len(wantR) {
		t.Fatalf("with a worker killed, %d samples, want %d", len(gotR), len(wantR))
	}
	for i := range wantR {
		if !slices.Equal(gotR[i], wantR[i]) {
			t.Errorf("sample %d: %v with a worker killed, %v without", i, gotR[i], wantR[i])
		}
	}
}

// TestFleetNoWorkerLeftSaves: one worker, named directly, refuses every
// weight update after the first rollout. The sync before the second rollout
// takes it out, none is left, and the run saves the step it reached (with
// save_interval 0, no other save) and stops with one error saying so.
func TestFleetNoWorkerLeftSaves(t *testing.T) {
	if testing.Short() {
		t.Skip("trains a tiny model on a server")
	}
	b := testBackend(t)
	cfg := smokeConfig(t)
	w := startFleetWorker(t, b, initialPolicy(t, cfg))
	cfg.RolloutEngine, cfg.RolloutEngineURLs, cfg.SaveInterval = "sglang", []string{w.url()}, 0
	var log testLog
	err := Train(context.Background(), cfg, TrainOptions{Backend: b, Tools: arithTools{}, Progress: &log,
		OnRollout: func(RolloutLog) { w.refuse.Store(true) }})
	if !errors.Is(err, engine.ErrNoWorker) || !strings.Contains(err.Error(), "checkpoint saved") {
		t.Fatalf("Train = %v, want the no-worker error after a save\n%s", err, log.String())
	}
	dir, _ := LatestCheckpoint(RunFolder(cfg.Save).CkptDir())
	if filepath.Base(dir) != CheckpointName(cfg.StepsPerRollout()) {
		t.Errorf("newest checkpoint %q, want the one after rollout 1 (%s)", dir, CheckpointName(cfg.StepsPerRollout()))
	}
	if !strings.Contains(log.String(), "worker "+w.url()+" taken out") {
		t.Errorf("the log does not name the worker taken out:\n%s", log.String())
	}
}

// BenchmarkEngines samples the demo's rollout (8 prompts x 8 samples, up to
// 160 new tokens each; no tool calls, so the engines alone are timed) through
// the in-process sampler, through one mathrl serve worker over HTTP (each
// sequence its own request, as through a router) and through the SGLang
// router in front of two workers, in turn in the same run, and reports each
// one's sampled tokens per second and the ratios. The workers run in this
// process, so all three share the machine's cores. Run it with
//
//	go test ./gomlx_trainer/grpo -run '^$' -bench Engines -benchtime 3x
func BenchmarkEngines(b *testing.B) {
	cfg := demoRecipe(b)
	bk := testBackend(b)
	model, proto := policyAndProtocol(b, cfg)
	var prompts [][]int
	for i := range cfg.RolloutBatchSize {
		ids, err := proto.PromptIDs(fmt.Sprintf("Compute %d*%d.", i%9+1, (3*i)%9+1))
		if err != nil {
			b.Fatal(err)
		}
		for range cfg.NSamplesPerPrompt {
			prompts = append(prompts, ids)
		}
	}
	dir := initialPolicy(b, cfg)
	w1, w2 := startFleetWorker(b, bk, dir), startFleetWorker(b, bk, dir)
	router := startRouter(b, w1, w2)
	client := func(url string) engine.Engine {
		c, err := engine.NewClient(engine.ClientOptions{Protocol: engine.SGLang, URLs: []string{url}, Vocab: model.Config.VocabSize})
		if err != nil {
			b.Fatal(err)
		}
		return c
	}
	engines := []struct {
		name string
		eng  engine.Engine
	}{{"builtin", inprocess.New(sampler.New(bk, model))}, {"http1", client(w1.url())}, {"router2", client(router)}}
	o := genOptions{budget: cfg.RolloutMaxResponseLen, temperature: cfg.RolloutTemperature, seed: 1}
	sampleOnce := func(eng engine.Engine) int {
		samples, _, err := generate(context.Background(), eng, proto, nil, prompts, o)
		if err != nil {
			b.Fatal(err)
		}
		tokens := 0
		for _, s := range samples {
			tokens += len(s.IDs)
		}
		return tokens
	}
	for _, e := range engines {
		sampleOnce(e.eng) // compiles every shape
	}
	spent := make([]time.Duration, len(engines))
	tokens := make([]int, len(engines))
	b.ResetTimer()
	for range b.N {
		for i, e := range engines {
			start := time.Now()
			tokens[i] += sampleOnce(e.eng)
			spent[i] += time.Since(start)
		}
	}
	b.StopTimer()
	rate := make([]float64, len(engines))
	for i, e := range engines {
		rate[i] = float64(tokens[i]) / spent[i].Seconds()
		b.ReportMetric(rate[i], "tok/s-"+e.name)
	}
	b.ReportMetric(rate[1]/rate[0], "http1/builtin")
	b.ReportMetric(rate[2]/rate[1], "router2/http1")
}

// TestFleetEvalThroughTheRouter is `mathrl eval` with rollout engine sglang
// through the SGLang router in front of two mathrl serve workers started
// from other weights: both workers load the evaluated checkpoint, the
// router spreads the requests over them, and the samples are the in-process
// evaluation's, byte for byte (each worker samples one sequence at a time;
// the draws are keyed by the sequence's seed and position).
func TestFleetEvalThroughTheRouter(t *testing.T) {
	mc, err := qwen3.NamedConfig("tiny")
	if err != nil {
		t.Fatal(err)
	}
	ckpt, other := filepath.Join(t.TempDir(), "ckpt"), filepath.Join(t.TempDir(), "other")
	if err := qwen3.WriteRandom(mc, ckpt, "F32", 1); err != nil {
		t.Fatal(err)
	}
	if err := qwen3.WriteRandom(mc, other, "F32", 2); err != nil {
		t.Fatal(err)
	}
	bk := testBackend(t)
	w1, w2 := startFleetWorker(t, bk, other), startFleetWorker(t, bk, other)
	router := startRouter(t, w1, w2)

	req := DefaultEvalRequest()
	req.Model, req.Data, req.MaxPrompts, req.K, req.Budget = ckpt, "arith", 4, 2, 12
	req.Tokenizer, req.BatchSize, req.Temperature, req.TopP = "bytes", 8, 1, 1
	req.Out = filepath.Join(t.TempDir(), "builtin.jsonl")
	if _, err := RunEval(context.Background(), bk, req); err != nil {
		t.Fatal(err)
	}
	served := req
	served.Engine, served.EngineURLs, served.Out = "sglang", []string{router}, filepath.Join(t.TempDir(), "router.jsonl")
	if _, err := RunEval(context.Background(), bk, served); err != nil {
		t.Fatal(err)
	}
	want, errW := os.ReadFile(req.Out)
	got, errG := os.ReadFile(served.Out)
	if errW != nil || errG != nil {
		t.Fatal(errW, errG)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("the samples through the router differ from the in-process ones:\n%s\nwant\n%s", got, want)
	}
	abs, err := filepath.Abs(ckpt)
	if err != nil {
		t.Fatal(err)
	}
	for i, w := range []*fleetWorker{w1, w2} {
		if v := workerVersion(t, w); v != engine.CheckpointVersion(abs) {
			t.Errorf("worker %d at weight version %q, want the checkpoint's", i+1, v)
		}
		if w.served.Load() == 0 {
			t.Errorf("worker %d answered no request: the router did not spread them", i+1)
		}
	}
}
