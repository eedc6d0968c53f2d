package serve

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gomlx/compute"
	"github.com/gomlx/compute/dtypes"

	"github.com/mathrl/mathrl/gomlx_trainer/qwen3"
	"github.com/mathrl/mathrl/gomlx_trainer/sampler"
)

// Options say what a Server serves.
type Options struct {
	Backend   compute.Backend
	ModelPath string       // Hugging Face folder of the initial weights
	DType     dtypes.DType // compute dtype of the weights
	MaxBatch  int          // rows of the running batch (0: 16)
	// PrefixCacheBytes bounds the device memory of the prompt cache
	// (sampler.PrefixCache), which every weights update flushes:
	// 0 is DefaultPrefixCacheBytes, a negative value no cache.
	PrefixCacheBytes int64
	// APIKey, when set, is the key every request but GET /health must send
	// as Authorization: Bearer <key> (else 401), as SGLang's --api-key.
	APIKey string
	// WeightsRoot, when set, confines /update_weights_from_disk to folders
	// inside it: any other model_path (through a symlink or '..' too) is
	// answered 400, the same whether it exists or not.
	WeightsRoot string
}

// DefaultPrefixCacheBytes is the prompt cache's bound when
// Options.PrefixCacheBytes is 0: the prefills of 14 prompts of up to 512
// tokens of Qwen3-8B in bfloat16 (144 KiB a slot), or 18 of Qwen3-0.6B
// (112 KiB).
const DefaultPrefixCacheBytes = 1 << 30

// Server serves one model. Build it with New, run it with Serve.
type Server struct {
	opt      Options
	root     string               // Options.WeightsRoot, absolute with every symlink resolved ("" when unset)
	prefixes *sampler.PrefixCache // the prompt cache (nil: none)
	scoring  *scorer              // the graphs of scoring requests, of the current weights (the scheduler's; nil until the first)
	jobs     chan *job
	stopc    chan struct{} // closed when the scheduler must stop
	done     chan struct{} // closed when it has

	mu       sync.Mutex
	model    *qwen3.Model // the weights new sessions use (the scheduler swaps it)
	path     string       // where they were read
	version  string       // their weight_version
	draining bool
	inflight sync.WaitGroup
	nextID   atomic.Int64

	// Test hooks, called by the scheduler: after each step with the ids of
	// the requests then in the batch, and when it takes a request from the
	// queue.
	onStep  func(ids []int64)
	onQueue func(id int64)
}

// New loads the model and returns its server.
func New(opt Options) (*Server, error) {
	if opt.MaxBatch == 0 {
		opt.MaxBatch = 16
	}
	if opt.MaxBatch < 1 {
		return nil, fmt.Errorf("serve: max batch %d, want at least 1", opt.MaxBatch)
	}
	root, err := resolveRoot(opt.WeightsRoot)
	if err != nil {
		return nil, err
	}
	m, err := qwen3.LoadOn(opt.Backend, opt.ModelPath, opt.DType)
	if err != nil {
		return nil, fmt.Errorf("serve: %w", err)
	}
	srv := &Server{opt: opt, root: root, jobs: make(chan *job, 1024), stopc: make(chan struct{}), done: make(chan struct{}),
		model: m, path: opt.ModelPath, version: "default"}
	switch {
	case opt.PrefixCacheBytes == 0:
		srv.prefixes = sampler.NewPrefixCache(DefaultPrefixCacheBytes)
	case opt.PrefixCacheBytes > 0:
		srv.prefixes = sampler.NewPrefixCache(opt.PrefixCacheBytes)
	}
	return srv, nil
}

// Serve answers on ln until ctx ends, then refuses new requests (503), lets
// those in flight finish and returns.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	go s.schedule()
	hs := &http.Server{Handler: s.Handler(), ReadHeaderTimeout: 30 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	var err error
	select {
	case err = <-errc:
	case <-ctx.Done():
		s.mu.Lock()
		s.draining = true
		s.mu.Unlock()
		s.inflight.Wait()
		err = hs.Shutdown(context.Background())
	}
	close(s.stopc)
	<-s.done
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
}

// enter counts a request in flight; false when the server is draining.
func (s *Server) enter() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.draining {
		return false
	}
	s.inflight.Add(1)
	return true
}

// info is what the informational endpoints report.
type info struct {
	path, version string
	cfg           qwen3.Config
}

func (s *Server) info() info {
	s.mu.Lock()
	defer s.mu.Unlock()
	return info{path: s.path, version: s.version, cfg: s.model.Config}
}

// context is the longest sequence the server takes, prompt and new tokens.
func (i info) context() int {
	if i.cfg.MaxPositions > 0 {
		return i.cfg.MaxPositions
	}
	return 4096
}

// knobs are the sampling options a session compiles in: requests share a
// batch only when theirs are equal.
type knobs struct {
	temperature, topP float64
	topK              int
	stops             string // the stop ids, sorted, as text (comparable)
	stopIDs           []int
}

func newKnobs(temperature, topP float64, topK int, stops []int) knobs {
	stops = slices.Clone(stops)
	slices.Sort(stops)
	stops = slices.Compact(stops)
	if topK < 0 {
		topK = 0
	}
	if stops == nil {
		stops = []int{}
	}
	return knobs{temperature: temperature, topP: topP, topK: topK, stops: fmt.Sprint(stops), stopIDs: stops}
}

func (k knobs) same(o knobs) bool {
	return k.temperature == o.temperature && k.topP == o.topP && k.topK == o.topK && k.stops == o.stops
}

// job is one request to the scheduler: a sequence to generate, a group of
// them to generate as a batch of their own (group not nil), or new weights to
// use (update not nil).
type job struct {
	id     int64
	ids    []int
	maxNew int
	seed   uint64
	knobs  knobs
	group  []*job // the sequences of a batch request (their knobs are the job's)
	update *update
	score  *scoreJob   // a scoring request: the input's log-probs, nothing sampled
	done   chan result // buffered: the scheduler never waits on it
}

// update is a weights update: the model loaded, and what to report.
type update struct {
	model         *qwen3.Model
	path, version string
}

type result struct {
	r     sample
	group []sample  // a group's, in order
	input []float32 // a scoring job's log-probs, from its start on
	err   error
}

// sample is one sequence's output and how many of its prompt tokens it took
// from a prefill it did not compute (the prompt cache's, or another
// sequence's of its group): SGLang's cached_tokens.
type sample struct {
	sampler.Result
	cached int
}

// submit queues j and waits for its result, or for ctx to end (the client
// gone: the scheduler finishes the job and drops the result).
func (s *Server) submit(ctx context.Context, j *job) result {
	j.id, j.done = s.nextID.Add(1), make(chan result, 1)
	select {
	case s.jobs <- j:
	case <-ctx.Done():
		return result{err: ctx.Err()}
	}
	select {
	case r := <-j.done:
		return r
	case <-ctx.Done():
		return result{err: ctx.Err()}
	}
}

// access says, for the serving line, how requests are authenticated and
// where weights may be loaded from; never the key itself.
func (s *Server) access() string {
	auth := "no API key: anyone who reaches the port is served"
	if s.opt.APIKey != "" {
		auth = "API key required"
	}
	weights := "weight loads from any path"
	if s.root != "" {
		weights = "weight loads confined to " + s.root
	}
	return auth + "; " + weights
}

func (s *Server) isDraining() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.draining
}

// ListenAndServe serves on addr (host:port; a host other than loopback
// exposes the server to the network) until ctx ends, saying where on log.
func (s *Server) ListenAndServe(ctx context.Context, addr string, log io.Writer) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	fmt.Fprintf(log, "mathrl: serving %s on http://%s (SGLang /generate, OpenAI /v1/completions; %d sequences a batch; %s)\n",
		s.opt.ModelPath, ln.Addr(), s.opt.MaxBatch, s.access())
	err = s.Serve(ctx, ln)
	fmt.Fprintln(log, "mathrl: server stopped")
	return err
}
