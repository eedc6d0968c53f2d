package sampler

import (
	"encoding/binary"
	"fmt"

	"github.com/gomlx/compute"
	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/shapes"
	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/core/tensors/dtensor"
)

// prefix is the key/value cache of a prompt's tokens but its last, computed
// alone: one row per device, all the same prompt, fed in chunks of
// key.maxChunk into a cache of key.slots slots. Its values depend on those
// tokens, the weights, the chunk length and the slots only, never on the
// session's other prompts, so a prefix copied into any number of rows holds
// the numbers that prefilling each of those rows would have computed, bit for
// bit.
type prefix struct {
	key    prefixKey
	cache  []*tensors.Tensor // as a session's cache, of one row per device
	bytes  int64
	chunks int // steps its prefill took
}

// prefixKey is what a prefix's values depend on.
type prefixKey struct {
	s        *Sampler // the weights
	ids      string   // the tokens, 4 bytes each
	maxChunk int
	slots    int
}

func newPrefixKey(s *Sampler, ids []int, maxChunk, slots int) prefixKey {
	return prefixKey{s: s, ids: idsKey(ids), maxChunk: maxChunk, slots: slots}
}

// idsKey is ids as a map key, 4 bytes each.
func idsKey(ids []int) string {
	b := make([]byte, 0, 4*len(ids))
	for _, id := range ids {
		b = binary.LittleEndian.AppendUint32(b, uint32(id))
	}
	return string(b)
}

func (p *prefix) free() {
	for _, t := range p.cache {
		t.FinalizeAll()
	}
	p.cache = nil
}

// prefill computes the prefix of key: ids fed in chunks of key.maxChunk, as
// Step feeds a batch, on one row per device. The chunks run the greedy step
// graph, its sampled ids ignored.
func (s *Sampler) prefill(ids []int, key prefixKey) (*prefix, error) {
	devices := s.mesh.count()
	cache, err := s.emptyCache(devices, key.slots)
	if err != nil {
		return nil, err
	}
	exec, err := s.exec(mode{greedy: true})
	if err != nil {
		return nil, err
	}
	p := &prefix{key: key}
	for done := 0; done < len(ids); p.chunks++ {
		n := min(len(ids)-done, key.maxChunk)
		chunk := min(ChunkBucket(n), key.slots)
		tokens := make([][]int32, devices)
		start, lens, keys := make([]int32, devices), make([]int32, devices), make([]uint32, devices)
		for d := range devices {
			tokens[d] = make([]int32, chunk)
			for j, id := range ids[done : done+n] {
				tokens[d][j] = int32(id)
			}
			start[d], lens[d] = int32(done), int32(n)
		}
		host := []any{tokens, start, lens, float32(1), int32(0), float32(1), keys} // greedy: the knobs are unused
		if _, _, cache, err = s.mesh.call(s.backend, exec, host, cache); err != nil {
			return nil, fmt.Errorf("sampler: prefill: %w", err)
		}
		done += n
	}
	p.cache = cache
	for _, t := range cache {
		p.bytes += int64(t.Shape().Memory())
	}
	return p, nil
}

// place returns cache with p copied into rows (whose slots must still be
// zero: the prefix is added into them, as Extend adds keys and values),
// slots 0 to p's last; the cache must have at least p's slots. Each tensor
// is given up as its new one is made.
func (s *Sampler) place(cache []*tensors.Tensor, p *prefix, rows []int) ([]*tensors.Tensor, error) {
	sh := cache[0].Shape()
	key := [4]int{sh.Dimensions[0], sh.Dimensions[2], p.key.slots, len(rows)}
	exec, ok := s.places[key]
	if !ok {
		var err error
		exec, err = graph.NewExec(s.backend, addRows)
		if err != nil {
			return nil, fmt.Errorf("sampler: %w", err)
		}
		if m := s.mesh; m != nil {
			exec.AutoSharding(m.mesh).WithInputShardingSpecs(m.batch, m.repl, m.repl).WithOutputShardingSpecs(m.batch)
		}
		s.places[key] = exec
	}
	index := make([]int32, len(rows))
	for k, i := range rows {
		index[k] = int32(i)
	}
	indexShards, err := s.mesh.replicate(index)
	if err != nil {
		return nil, fmt.Errorf("sampler: %w", err)
	}
	devices := s.mesh.count()
	per := len(cache) / devices
	out := make([]*tensors.Tensor, len(cache))
	for j := range per {
		var args []any
		for d := range devices {
			donated, err := graph.DonateTensorBuffer(cache[d*per+j], s.backend, compute.DeviceNum(d))
			if err != nil {
				return nil, fmt.Errorf("sampler: %w", err)
			}
			args = append(args, donated, p.cache[d*per+j], indexShards[d])
		}
		placed, err := exec.Call(args...)
		if err != nil {
			return nil, fmt.Errorf("sampler: copying a prompt's cache into %d rows: %w", len(rows), err)
		}
		for d := range devices {
			out[d*per+j] = placed[d]
		}
	}
	return out, nil
}

// addRows adds prefix [1, kvHeads, p, headDim] into rows [k] of cache
// [b, kvHeads, slots, headDim] (p <= slots), at slots 0 to p-1: a scatter,
// which writes the rows only rather than reading and writing the whole cache.
func addRows(cache, prefix, rows *graph.Node) *graph.Node {
	g := cache.Graph()
	k := rows.Shape().Dimensions[0]
	dims := prefix.Shape().Dimensions
	heads, p, dim := dims[1], dims[2], dims[3]
	at := shapes.Make(dtypes.Int32, k, heads, p, 1)
	index := graph.Concatenate([]*graph.Node{
		graph.BroadcastToDims(graph.Reshape(rows, k, 1, 1, 1), k, heads, p, 1), // row
		graph.Iota(g, at, 1), // kv head
		graph.Iota(g, at, 2), // slot
	}, -1)
	return graph.ScatterSum(cache, index, graph.BroadcastToDims(prefix, k, heads, p, dim), false, false)
}

// replicate returns host value v once per device, as a replicated input of
// a graph on the mesh takes it (on one device: v itself).
func (m *onMesh) replicate(v any) ([]any, error) {
	if m == nil {
		return []any{v}, nil
	}
	t, err := tensors.FromAnyValue(v)
	if err != nil {
		return nil, err
	}
	dt, err := dtensor.ShardTensor(m.repl, t)
	if err != nil {
		return nil, err
	}
	var out []any
	for _, shard := range dt.Shards() {
		out = append(out, shard)
	}
	return out, nil
}

// prefill reads the prompts of rows, their pending tokens, but the last
// token of each: the rows with the same prompt take one prefix, the
// session's Options.Prefixes' or computed once (each row its own with
// PrefillEach), copied into their rows. The rows' caches must be zero.
func (ss *Session) prefill(rows []int) error {
	for _, g := range ss.promptGroups(rows) {
		ids := ss.pending[g[0]]
		ids = ids[:len(ids)-1]
		key := newPrefixKey(ss.s, ids, ss.opts.MaxChunk, CacheBucket(len(ids), ss.capacity))
		compute := func() (*prefix, error) {
			p, err := ss.s.prefill(ids, key)
			if err == nil {
				ss.prefilled, ss.prefillSteps = ss.prefilled+len(ids), ss.prefillSteps+p.chunks
			}
			return p, err
		}
		use := func(p *prefix) error { return ss.place(p, g) }
		hit := false
		var err error
		if c := ss.opts.Prefixes; c != nil && !ss.opts.PrefillEach {
			hit, err = c.with(key, compute, use)
		} else {
			var p *prefix
			if p, err = compute(); err == nil {
				err = use(p)
				p.free()
			}
		}
		if err != nil {
			return err
		}
		for k, i := range g {
			ss.cached[i], ss.pending[i] = len(ids), ss.pending[i][len(ids):]
			if hit || k > 0 {
				ss.shared[i] = len(ids)
			}
		}
	}
	return nil
}

// promptGroups splits rows by their pending tokens, in the order of each
// group's first row, leaving out prompts of one token (nothing to prefill);
// with PrefillEach every row is a group of its own.
func (ss *Session) promptGroups(rows []int) [][]int {
	var groups [][]int
	first := map[string]int{} // prompt -> its group
	for _, i := range rows {
		p := ss.pending[i]
		if len(p) < 2 {
			continue
		}
		k := idsKey(p)
		if g, ok := first[k]; ok && !ss.opts.PrefillEach {
			groups[g] = append(groups[g], i)
			continue
		}
		first[k] = len(groups)
		groups = append(groups, []int{i})
	}
	return groups
}

// place copies p into rows of the session's cache, grown first if it has
// fewer slots than p.
func (ss *Session) place(p *prefix, rows []int) error {
	var err error
	if ss.cache[0].Shape().Dimensions[2] < p.key.slots {
		if ss.cache, err = ss.s.grow(ss.cache, p.key.slots); err != nil {
			return err
		}
	}
	ss.cache, err = ss.s.place(ss.cache, p, rows)
	return err
}

// SharedPrefix is how many of sequence i's prompt tokens were not prefilled
// for it but copied: from another sequence of the session with the same
// prompt, or from Options.Prefixes.
func (ss *Session) SharedPrefix(i int) int { return ss.shared[i] }

// Prefilled is how many prompt tokens the session has prefilled (those
// copied not counted).
func (ss *Session) Prefilled() int { return ss.prefilled }
