package sampler

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/gomlx/compute"
	"github.com/gomlx/compute/shapes"
	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	mlmodel "github.com/gomlx/gomlx/ml/model"

	"github.com/mathrl/mathrl/gomlx_trainer/qwen3"
	"github.com/mathrl/mathrl/gomlx_trainer/seeding"
)

// Options controls one generation session.
type Options struct {
	MaxNewTokens int          // most tokens after the prompt, sampled and appended together (default 256)
	Temperature  float64      // 0 is greedy (argmax)
	TopP         float64      // keep the fewest tokens holding this much probability; 0 or 1 keeps all
	TopK         int          // keep the K most likely tokens; 0 keeps all
	StopIDs      []int        // a sampled id in this list ends its sequence (finish "stop"); nil: the model's eos_token_id
	Seed         uint64       // sequence i draws from the stream seeding.SequenceSeed(Seed, i), unless Seeds says otherwise
	Seeds        []uint64     // per sequence, the seed of its random stream (nil: from Seed); see DrawKey
	Capacity     int          // most key/value cache slots per sequence; 0: longest prompt + MaxNewTokens, rounded up to a power of two
	MaxChunk     int          // most prompt tokens prefilled in one step (longer prompts take several steps); default DefaultMaxChunk
	AppendChunk  int          // most appended tokens (a tool's output, fed at the grown cache) per sequence in one step; default DefaultAppendChunk
	FullCache    bool         // allocate the cache at Capacity from the start instead of growing it (slower; for comparisons)
	PrefillEach  bool         // prefill every sequence's prompt for itself, even when another's is the same (slower; for comparisons)
	Prefixes     *PrefixCache // where prompts' prefills are kept between sessions (nil: none kept); unused with PrefillEach
}

// The chunk defaults. A step's attention scores grow with the tokens fed
// times the cache slots, so a prompt, read at the small cache of the start,
// is fed in large chunks, and a tool's output, appended between turns at the
// cache of a long response, in small ones: 64 tokens at an 18k-slot cache
// hold 1/8 of the scores of 512, and a typical tool output fits one chunk.
const (
	DefaultMaxChunk    = 512
	DefaultAppendChunk = 64
)

// FinishReason says why a sequence stopped.
type FinishReason string

// The finish reasons.
const (
	Running FinishReason = ""       // still generating
	Stop    FinishReason = "stop"   // sampled a stop id (it is the last of IDs)
	Length  FinishReason = "length" // reached MaxNewTokens or the cache capacity
)

// Result is one sequence's output.
type Result struct {
	IDs      []int     // tokens after the prompt, sampled and appended, in order
	LogProbs []float32 // per token of IDs: log_softmax(logits/temperature) of the sampled token (temperature 1 when greedy); 0 for appended tokens
	Sampled  []bool    // per token of IDs: true if the model sampled it, false if it was appended
	Finish   FinishReason
}

// Sampler generates from one model on one backend, keeping the compiled graphs
// between sessions. It is not safe for concurrent use.
type Sampler struct {
	backend compute.Backend
	model   *qwen3.Model
	execs   map[mode]*mlmodel.Exec
	zeros   map[[2]int]*graph.Exec // by batch, length
	clears  map[[2]int]*graph.Exec // by batch, length: zero one row of a cache tensor
	grows   map[[3]int]*graph.Exec // by batch, old length, new length
	places  map[[4]int]*graph.Exec // by batch, length, prefix length, rows: copy a prefix into rows
	mesh    *onMesh                // the devices sessions are split over (nil: one)
}

// New returns a sampler for model on backend.
func New(backend compute.Backend, model *qwen3.Model) *Sampler {
	return &Sampler{backend: backend, model: model, execs: map[mode]*mlmodel.Exec{}, zeros: map[[2]int]*graph.Exec{},
		grows: map[[3]int]*graph.Exec{}, clears: map[[2]int]*graph.Exec{}, places: map[[4]int]*graph.Exec{}}
}

// Session is a batch of sequences being generated. Drive it with Step or Run;
// between steps, sequences that have finished can be given more tokens with
// Append (a tool's response, say) and then continue.
type Session struct {
	s        *Sampler
	opts     Options
	mode     mode
	capacity int
	stop     map[int]bool

	rows    int               // the caller's sequences; on a mesh, rows past them pad the batch to split
	cache   []*tensors.Tensor // allocated slots per sequence: cache[0]'s axis 2, at most capacity; on a mesh, each tensor's shards device by device
	seeds   []uint64          // each row's seed
	limits  []int             // each row's MaxNewTokens
	knobs   []*tensors.Tensor // temperature, top-k and top-p, sent to the device once
	cached  []int             // tokens already in each row's cache
	pending [][]int           // tokens to feed each row at its next step
	shared  []int             // prompt tokens of each row's cache copied from another row's prefill or opts.Prefixes
	active  []bool
	results []Result
	sampled int // tokens sampled so far, over all sequences

	prefilled    int // prompt tokens prefilled so far (not copied)
	prefillSteps int // steps of the prefill graph so far
}

// Start checks the prompts and options and returns a session whose prompts
// are read, all but their last token: each distinct prompt is prefilled once,
// alone (in chunks of MaxChunk tokens), and copied into the rows of every
// sequence with that prompt (unless PrefillEach). Its first Step feeds each
// sequence its prompt's last token and samples the first new ones.
func (s *Sampler) Start(prompts [][]int, opts Options) (*Session, error) {
	cfg := s.model.Config
	if len(prompts) == 0 {
		return nil, errors.New("sampler: no prompts")
	}
	if opts.MaxNewTokens == 0 {
		opts.MaxNewTokens = 256
	}
	if opts.MaxChunk == 0 {
		opts.MaxChunk = DefaultMaxChunk
	}
	if opts.AppendChunk == 0 {
		opts.AppendChunk = DefaultAppendChunk
	}
	switch {
	case opts.MaxNewTokens < 0:
		return nil, fmt.Errorf("sampler: max new tokens %d, want > 0", opts.MaxNewTokens)
	case opts.Temperature < 0:
		return nil, fmt.Errorf("sampler: temperature %g, want >= 0", opts.Temperature)
	case opts.TopP < 0 || opts.TopP > 1:
		return nil, fmt.Errorf("sampler: top-p %g, want 0 to 1", opts.TopP)
	case opts.TopK < 0:
		return nil, fmt.Errorf("sampler: top-k %d, want >= 0", opts.TopK)
	case opts.MaxChunk < 1:
		return nil, fmt.Errorf("sampler: max chunk %d, want >= 1", opts.MaxChunk)
	case opts.AppendChunk < 1:
		return nil, fmt.Errorf("sampler: append chunk %d, want >= 1", opts.AppendChunk)
	}
	longest := 0
	for i, p := range prompts {
		if len(p) == 0 {
			return nil, fmt.Errorf("sampler: prompt %d is empty", i)
		}
		if err := checkIDs(p, cfg.VocabSize); err != nil {
			return nil, fmt.Errorf("sampler: prompt %d: %w", i, err)
		}
		longest = max(longest, len(p))
	}
	capacity := opts.Capacity
	if capacity == 0 {
		capacity = DefaultCapacity(longest + opts.MaxNewTokens)
	}
	if longest >= capacity {
		return nil, fmt.Errorf("sampler: prompt of %d tokens leaves no room in a cache of %d", longest, capacity)
	}
	stopIDs := opts.StopIDs
	if stopIDs == nil {
		stopIDs = cfg.EOSTokenIDs
	}
	if err := checkIDs(stopIDs, cfg.VocabSize); err != nil {
		return nil, fmt.Errorf("sampler: stop ids: %w", err)
	}
	sess, err := s.newSession(prompts, opts, capacity, stopIDs, s.mesh.count())
	if err != nil {
		return nil, err
	}
	initial := CacheBucket(longest, capacity)
	if opts.FullCache {
		initial = capacity
	}
	if sess.cache, err = s.emptyCache(len(sess.active), initial); err != nil {
		return nil, err
	}
	rows := make([]int, sess.rows)
	for i := range rows {
		rows[i] = i
	}
	if err := sess.prefill(rows); err != nil {
		sess.Close()
		return nil, err
	}
	return sess, nil
}

// newSession lays out a session's rows for prompts on devices: the prompts'
// rows, active, then (when they do not split over the devices) rows padded
// with copies of the first prompt, inactive, that Len and Results leave out.
// It allocates no cache.
func (s *Sampler) newSession(prompts [][]int, opts Options, capacity int, stopIDs []int, devices int) (*Session, error) {
	rows := len(prompts)
	prompts = padRows(prompts, devices)
	sess := &Session{
		s: s, opts: opts, capacity: capacity, stop: map[int]bool{}, rows: rows,
		mode: mode{
			greedy: opts.Temperature == 0,
			topK:   opts.Temperature > 0 && opts.TopK > 0 && opts.TopK < s.model.Config.VocabSize,
			topP:   opts.Temperature > 0 && opts.TopP > 0 && opts.TopP < 1,
		},
		cached:  make([]int, len(prompts)),
		pending: make([][]int, len(prompts)),
		shared:  make([]int, len(prompts)),
		active:  make([]bool, len(prompts)),
		results: make([]Result, len(prompts)),
	}
	for _, id := range stopIDs {
		sess.stop[id] = true
	}
	sess.limits = make([]int, len(prompts))
	for i, p := range prompts[:rows] {
		sess.pending[i] = slices.Clone(p)
		sess.active[i] = true
		sess.limits[i] = opts.MaxNewTokens
	}
	if opts.Seeds != nil && len(opts.Seeds) != rows {
		return nil, fmt.Errorf("sampler: %d seeds for %d prompts", len(opts.Seeds), rows)
	}
	sess.seeds = make([]uint64, len(prompts))
	for i := range sess.seeds {
		sess.seeds[i] = seeding.SequenceSeed(opts.Seed, i)
		if opts.Seeds != nil && i < rows {
			sess.seeds[i] = opts.Seeds[i]
		}
	}
	return sess, nil
}

func checkIDs(ids []int, vocab int) error {
	for j, id := range ids {
		if id < 0 || id >= vocab {
			return fmt.Errorf("token %d is id %d, outside the vocabulary [0, %d)", j, id, vocab)
		}
	}
	return nil
}

// emptyCache makes a zero cache on the device (not on the host, where a large
// model's cache would be allocated twice).
func (s *Sampler) emptyCache(batch, capacity int) ([]*tensors.Tensor, error) {
	key := [2]int{batch, capacity}
	exec, ok := s.zeros[key]
	if !ok {
		cfg, dtype := s.model.Config, s.model.DType
		var err error
		exec, err = graph.NewExec(s.backend, func(g *graph.Graph) []*graph.Node {
			var out []*graph.Node
			for _, sh := range cfg.CacheShapes(batch, capacity, dtype) {
				out = append(out, graph.Zeros(g, sh))
			}
			return out
		})
		if err != nil {
			return nil, fmt.Errorf("sampler: %w", err)
		}
		s.mesh.splitGraph(exec, false)
		s.zeros[key] = exec
	}
	out, err := exec.Call()
	if err != nil {
		return nil, fmt.Errorf("sampler: empty cache: %w", err)
	}
	return out, nil
}

// grow returns cache lengthened to length slots per sequence, the new slots
// zero. The tensors are grown one at a time, each old one given up as its new
// one is made, so the device never holds much more than the grown cache.
func (s *Sampler) grow(cache []*tensors.Tensor, length int) ([]*tensors.Tensor, error) {
	sh := cache[0].Shape()
	key := [3]int{sh.Dimensions[0], sh.Dimensions[2], length}
	exec, ok := s.grows[key]
	if !ok {
		var err error
		exec, err = graph.NewExec(s.backend, func(old *graph.Node) *graph.Node {
			dims := slices.Clone(old.Shape().Dimensions)
			dims[2] = length - dims[2]
			return graph.Concatenate([]*graph.Node{old, graph.Zeros(old.Graph(), shapes.Make(old.DType(), dims...))}, 2)
		})
		if err != nil {
			return nil, fmt.Errorf("sampler: %w", err)
		}
		s.mesh.splitGraph(exec, true)
		s.grows[key] = exec
	}
	devices := s.mesh.count()
	per := len(cache) / devices // tensors of the cache
	out := make([]*tensors.Tensor, len(cache))
	for j := range per {
		args := make([]any, devices)
		for d := range devices {
			donated, err := graph.DonateTensorBuffer(cache[d*per+j], s.backend, compute.DeviceNum(d))
			if err != nil {
				return nil, fmt.Errorf("sampler: %w", err)
			}
			args[d] = donated
		}
		grown, err := exec.Call(args...)
		if err != nil {
			return nil, fmt.Errorf("sampler: growing the cache to %d: %w", length, err)
		}
		for d := range devices {
			out[d*per+j] = grown[d]
		}
	}
	return out, nil
}

// exec returns the compiled step for a sampling mode.
func (s *Sampler) exec(m mode) (*mlmodel.Exec, error) {
	if e, ok := s.execs[m]; ok {
		return e, nil
	}
	cfg := s.model.Config
	e, err := mlmodel.NewExec(s.backend, s.model.Store, func(ctx *mlmodel.Scope, in []*graph.Node) []*graph.Node {
		tokens, start, lens := in[0], in[1], in[2]
		temperature, topK, topP, key := in[3], in[4], in[5], in[6]
		logits, cache := qwen3.Extend(ctx, cfg, tokens, start, lens, in[7:])
		ids, logProbs := pick(m, logits, temperature, topK, topP, key)
		return append([]*graph.Node{ids, logProbs}, cache...)
	})
	if err != nil {
		return nil, fmt.Errorf("sampler: %w", err)
	}
	// One graph per batch size, cache length and chunk length: a long run with
	// tool calls meets many of those, and evicting them would mean recompiling.
	e.SetMaxCache(512)
	if err := s.mesh.splitStep(e); err != nil {
		return nil, err
	}
	s.execs[m] = e
	return e, nil
}

// DrawKey is the key of the draw that picks the token following the first
// position tokens of a sequence whose stream has seed (prompt tokens count).
// The draw depends on the key and the logits only, so a sequence continued in
// another session, or by a server given the whole sequence so far and the
// same seed, samples the same tokens.
func DrawKey(seed uint64, position int) uint32 {
	k := fmix32(uint32(seed>>32) ^ 0x6a09e667)
	k = fmix32(k ^ uint32(seed))
	return fmix32(k ^ uint32(position))
}

// fmix32 is MurmurHash3's 32-bit finaliser.
func fmix32(h uint32) uint32 {
	h ^= h >> 16
	h *= 0x85ebca6b
	h ^= h >> 13
	h *= 0xc2b2ae35
	return h ^ h>>16
}

// DefaultCapacity is the cache capacity a session takes when Options.Capacity
// is 0, for sequences of at most n tokens: 64 doubled until it holds n.
func DefaultCapacity(n int) int {
	c := 64
	for c < n {
		c *= 2
	}
	return c
}

// ChunkBucket rounds a chunk length up to 1 or a power of two from 16, so that
// few graphs are compiled.
func ChunkBucket(n int) int {
	if n <= 1 {
		return 1
	}
	b := 16
	for b < n {
		b *= 2
	}
	return b
}

// CacheBucket is how many cache slots per sequence are allocated while the
// longest sequence holds n tokens: a power of two from 64 up to 2048, then a
// multiple of 2048, at most the capacity. Each step attends over all allocated
// slots, so the cache grows with the sequences rather than being read at full
// capacity from the first token. Each length compiles its own step graphs, so
// the lengths are few: 10 up to 8k tokens, 14 up to 16k.
func CacheBucket(n, capacity int) int {
	const linearFrom = 2048
	w := 64
	for w < n && w < linearFrom {
		w *= 2
	}
	if w < n {
		w = (n + linearFrom - 1) / linearFrom * linearFrom
	}
	return min(w, capacity)
}

// Step feeds every active sequence its pending tokens (a prompt's last, the
// last sampled, or at most AppendChunk appended ones) and samples the next
// token of each sequence whose pending tokens are all in. It reports whether
// any sequence is still active.
func (ss *Session) Step() (bool, error) {
	if ss.cache == nil {
		return false, errors.New("sampler: step on a session that is closed or failed")
	}
	n := len(ss.active)
	feed := make([]int, n)
	longest, reach := 0, 0
	for i := range n {
		if ss.active[i] {
			feed[i] = min(len(ss.pending[i]), ss.opts.AppendChunk)
			longest = max(longest, feed[i])
			reach = max(reach, ss.cached[i]+feed[i])
		}
	}
	if longest == 0 {
		return false, nil
	}
	if allocated := ss.cache[0].Shape().Dimensions[2]; reach > allocated {
		var err error
		if ss.cache, err = ss.s.grow(ss.cache, CacheBucket(reach, ss.capacity)); err != nil {
			return false, err
		}
	}
	chunk := min(ChunkBucket(longest), ss.cache[0].Shape().Dimensions[2])
	tokens := make([][]int32, n)
	start := make([]int32, n)
	lens := make([]int32, n)
	keys := make([]uint32, n)
	for i := range n {
		keys[i] = DrawKey(ss.seeds[i], ss.cached[i]+feed[i])
		tokens[i] = make([]int32, chunk)
		for j := 0; j < feed[i]; j++ {
			tokens[i][j] = int32(ss.pending[i][j])
		}
		start[i] = int32(ss.cached[i])
		lens[i] = int32(feed[i])
	}
	exec, err := ss.s.exec(ss.mode)
	if err != nil {
		return false, err
	}
	if ss.knobs == nil {
		ss.knobs = []*tensors.Tensor{tensors.FromScalar(float32(max(ss.opts.Temperature, 1e-6))),
			tensors.FromScalar(int32(ss.opts.TopK)), tensors.FromScalar(float32(ss.opts.TopP))}
	}
	ids, logProbs, cache, err := ss.s.mesh.call(ss.s.backend, exec, []any{tokens, start, lens, ss.knobs[0], ss.knobs[1], ss.knobs[2], keys}, ss.cache)
	if err != nil {
		return false, fmt.Errorf("sampler: step: %w", err)
	}
	ss.cache = cache

	anyActive := false
	for i := range n {
		if feed[i] == 0 {
			continue
		}
		ss.cached[i] += feed[i]
		ss.pending[i] = ss.pending[i][feed[i]:]
		if len(ss.pending[i]) == 0 {
			id := int(ids[i])
			r := &ss.results[i]
			r.IDs = append(r.IDs, id)
			r.LogProbs = append(r.LogProbs, logProbs[i])
			r.Sampled = append(r.Sampled, true)
			ss.sampled++
			ss.pending[i] = []int{id}
			switch {
			case ss.stop[id]:
				ss.finish(i, Stop)
			case len(r.IDs) >= ss.limits[i] || ss.cached[i]+1 > ss.capacity:
				ss.finish(i, Length)
			}
		}
	}
	for i := range n {
		anyActive = anyActive || ss.active[i]
	}
	return anyActive, nil
}

func (ss *Session) finish(i int, why FinishReason) {
	ss.active[i] = false
	ss.results[i].Finish = why
}

// Run steps until no sequence is active or ctx is cancelled.
func (ss *Session) Run(ctx context.Context) error {
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		more, err := ss.Step()
		if err != nil || !more {
			return err
		}
	}
}

// Append adds tokens (a tool's response, say) after sequence i's last token and
// makes it active again: the next Step reads them, without recomputing the
// prefix, and samples what follows. Sequence i must have finished. The tokens
// count against MaxNewTokens and the cache capacity, keeping room for one sampled
// token; those that do not fit are dropped and the sequence finishes with
// "length" instead of resuming. Appending no tokens resumes a sequence that
// stopped on a stop id.
func (ss *Session) Append(i int, ids []int) error {
	if i < 0 || i >= ss.rows {
		return fmt.Errorf("sampler: append to sequence %d of %d", i, ss.rows)
	}
	if ss.active[i] {
		return fmt.Errorf("sampler: append to sequence %d while it is still generating", i)
	}
	if err := checkIDs(ids, ss.s.model.Config.VocabSize); err != nil {
		return fmt.Errorf("sampler: append to sequence %d: %w", i, err)
	}
	r := &ss.results[i]
	room := min(ss.limits[i]-len(r.IDs), ss.capacity-ss.cached[i]-len(ss.pending[i])) - 1
	fits := ids
	if len(ids) > room {
		fits = ids[:max(room, 0)]
	}
	for _, id := range fits {
		r.IDs = append(r.IDs, id)
		r.LogProbs = append(r.LogProbs, 0)
		r.Sampled = append(r.Sampled, false)
	}
	ss.pending[i] = append(ss.pending[i], fits...)
	if len(fits) < len(ids) || room <= 0 {
		ss.finish(i, Length)
		return nil
	}
	ss.active[i] = true
	r.Finish = Running
	return nil
}

// Limit lowers sequence i's MaxNewTokens to maxNew (at least 1), before its
// first Step: a batch whose sequences have different budgets.
func (ss *Session) Limit(i, maxNew int) error {
	switch {
	case i < 0 || i >= ss.rows:
		return fmt.Errorf("sampler: limit sequence %d of %d", i, ss.rows)
	case maxNew < 1 || maxNew > ss.limits[i]:
		return fmt.Errorf("sampler: limit sequence %d to %d new tokens, want 1 to %d", i, maxNew, ss.limits[i])
	}
	ss.limits[i] = maxNew
	return nil
}

// StartSlots returns a session of n empty rows, each a slot that Admit fills
// with a sequence, and fills again once that sequence has finished: a server's
// continuous batching. opts.Capacity bounds every sequence (prompt and new
// tokens); opts.MaxNewTokens and opts.Seed are unused (Admit gives each
// sequence its own).
func (s *Sampler) StartSlots(n int, opts Options) (*Session, error) {
	if n < 1 {
		return nil, fmt.Errorf("sampler: %d slots, want at least 1", n)
	}
	if s.mesh != nil {
		return nil, errors.New("sampler: slot sessions run on one device, not on a mesh")
	}
	if opts.Capacity < 2 {
		return nil, fmt.Errorf("sampler: slots need a capacity of at least 2 tokens, not %d", opts.Capacity)
	}
	prompts := make([][]int, n)
	for i := range prompts {
		prompts[i] = []int{0}
	}
	opts.MaxNewTokens = 1
	ss, err := s.Start(prompts, opts)
	if err != nil {
		return nil, err
	}
	for i := range n {
		ss.pending[i], ss.active[i] = nil, false
	}
	return ss, nil
}

// Admit puts a new sequence in row i, which must not be active: prompt, the
// seed of its stream and at most maxNew new tokens. The row's cache is
// cleared and the prompt read but its last token (prefilled alone, or copied
// from the session's Options.Prefixes), which the next Step feeds.
func (ss *Session) Admit(i int, prompt []int, seed uint64, maxNew int) error {
	switch {
	case ss.cache == nil:
		return errors.New("sampler: admit to a session that is closed or failed")
	case i < 0 || i >= len(ss.active):
		return fmt.Errorf("sampler: admit to row %d of %d", i, len(ss.active))
	case ss.active[i]:
		return fmt.Errorf("sampler: admit to row %d while it is still generating", i)
	case len(prompt) == 0:
		return errors.New("sampler: admit an empty prompt")
	case len(prompt) >= ss.capacity:
		return fmt.Errorf("sampler: prompt of %d tokens leaves no room in a cache of %d", len(prompt), ss.capacity)
	case maxNew < 1:
		return fmt.Errorf("sampler: max new tokens %d, want > 0", maxNew)
	}
	if err := checkIDs(prompt, ss.s.model.Config.VocabSize); err != nil {
		return fmt.Errorf("sampler: admit: %w", err)
	}
	if ss.cached[i] > 0 {
		var err error
		if ss.cache, err = ss.s.clearRow(ss.cache, i); err != nil {
			return err
		}
	}
	ss.cached[i], ss.pending[i], ss.shared[i] = 0, slices.Clone(prompt), 0
	ss.seeds[i], ss.limits[i], ss.results[i] = seed, maxNew, Result{}
	if err := ss.prefill([]int{i}); err != nil {
		ss.Close()
		return err
	}
	ss.active[i] = true
	return nil
}

// clearRow returns cache with row i zero (Extend adds into slots it takes to
// be zero). Each tensor is given up as its cleared copy is made.
func (s *Sampler) clearRow(cache []*tensors.Tensor, i int) ([]*tensors.Tensor, error) {
	sh := cache[0].Shape()
	key := [2]int{sh.Dimensions[0], sh.Dimensions[2]}
	exec, ok := s.clears[key]
	if !ok {
		var err error
		exec, err = graph.NewExec(s.backend, func(old, row *graph.Node) *graph.Node {
			rows := graph.Iota(old.Graph(), shapes.Make(row.DType(), old.Shape().Dimensions...), 0)
			return graph.Where(graph.Equal(rows, row), graph.ZerosLike(old), old)
		})
		if err != nil {
			return nil, fmt.Errorf("sampler: %w", err)
		}
		s.clears[key] = exec
	}
	out := make([]*tensors.Tensor, len(cache))
	for k, t := range cache {
		donated, err := graph.DonateTensorBuffer(t, s.backend, 0)
		if err != nil {
			return nil, fmt.Errorf("sampler: %w", err)
		}
		cleared, err := exec.Call(donated, int32(i))
		if err != nil {
			return nil, fmt.Errorf("sampler: clearing row %d of the cache: %w", i, err)
		}
		out[k] = cleared[0]
	}
	return out, nil
}

// Active reports whether sequence i is still generating.
func (ss *Session) Active(i int) bool { return ss.active[i] }

// Sampled returns the number of tokens the session has sampled so far, over
// all sequences (appended tokens not included).
func (ss *Session) Sampled() int { return ss.sampled }

// Len is the number of sequences.
func (ss *Session) Len() int { return ss.rows }

// Result returns sequence i's output so far (slices are copies).
func (ss *Session) Result(i int) Result {
	r := ss.results[i]
	return Result{IDs: slices.Clone(r.IDs), LogProbs: slices.Clone(r.LogProbs), Sampled: slices.Clone(r.Sampled), Finish: r.Finish}
}

// Results returns every sequence's output so far.
func (ss *Session) Results() []Result {
	out := make([]Result, ss.rows)
	for i := range out {
		out[i] = ss.Result(i)
	}
	return out
}

// Close frees the session's cache and its other tensors.
func (ss *Session) Close() {
	for _, t := range append(ss.cache, ss.knobs...) {
		t.FinalizeAll()
	}
	ss.cache, ss.knobs = nil, nil
}

// Generate runs a session to the end: every prompt is extended until a stop id,
// MaxNewTokens or the cache capacity.
func (s *Sampler) Generate(ctx context.Context, prompts [][]int, opts Options) ([]Result, error) {
	ss, err := s.Start(prompts, opts)
	if err != nil {
		return nil, err
	}
	defer ss.Close()
	if err := ss.Run(ctx); err != nil {
		return nil, err
	}
	return ss.Results(), nil
}
