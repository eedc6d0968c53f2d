package qwen3

import (
	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/shapes"
	. "github.com/gomlx/gomlx/core/graph" //nolint:revive // GoMLX's graph DSL reads best dot-imported
	"github.com/gomlx/gomlx/ml/model"

	"github.com/mathrl/mathrl/gomlx_trainer/gomlxfix"
)

// CacheShapes returns the shapes of the key/value cache for batch rows of up to
// capacity tokens: for each layer a key then a value tensor, each
// [batch, kvHeads, capacity, headDim] in dtype. Heads come before positions so
// that attention's batched matmuls read the cache as it lies, without a
// transposed copy at every step.
func (c Config) CacheShapes(batch, capacity int, dtype dtypes.DType) []shapes.Shape {
	out := make([]shapes.Shape, 0, 2*c.Layers)
	for i := 0; i < 2*c.Layers; i++ {
		out = append(out, shapes.Make(dtype, batch, c.KVHeads, capacity, c.HeadDim))
	}
	return out
}

// Extend runs a chunk of tokens against the key/value cache.
//
//   - tokens [batch, chunk] int32: row b holds lens[b] real tokens, then padding;
//   - start [batch] int32: the position of row b's first token (the number of
//     tokens already in its cache);
//   - lens [batch] int32: real tokens per row, 0 to chunk (0 leaves the row alone);
//   - cache: as CacheShapes, of any capacity that holds every row's start+lens.
//
// Each real token's key and value are added into its slot with ScatterSum (the
// pure Go backend has no DynamicUpdateSlice, and a Where over the whole cache
// would read and write all of it at every step): slots from start on must still
// be zero, as they are in a cache that starts at zero and is only extended. Each
// token attends to the cached positions up to its own, and Extend returns the float32
// logits [batch, vocab] at each row's last real token (meaningless for rows with
// lens 0) and the new cache. Prefill, decoding and appending tool output are all
// calls of Extend with different chunk lengths.
func Extend(scope *model.Scope, cfg Config, tokens, start, lens *Node, cache []*Node) (logits *Node, newCache []*Node) {
	g := tokens.Graph()
	b, c := tokens.Shape().Dimensions[0], tokens.Shape().Dimensions[1]
	if len(cache) != 2*cfg.Layers {
		panic("qwen3: Extend: cache must hold a key and a value tensor per layer")
	}
	capacity := cache[0].Shape().Dimensions[2]
	start = ConvertDType(start, dtypes.Int32)
	lens = ConvertDType(lens, dtypes.Int32)
	positions := Add(InsertAxes(start, -1), Iota(g, shapes.Make(dtypes.Int32, b, c), 1)) // [b, c]

	slots := Iota(g, shapes.Make(dtypes.Int32, b, c, capacity), 2)
	visible := LessOrEqual(slots, BroadcastToDims(InsertAxes(positions, -1), b, c, capacity)) // [b, c, capacity]
	// Token j of row b goes to cache[b, :, start[b]+j]; padding tokens add zeros
	// (at a clamped position), which leaves the cache unchanged.
	kvh := cfg.KVHeads
	valid := LessThan(Iota(g, shapes.Make(dtypes.Int32, b, c), 1), BroadcastToDims(InsertAxes(lens, -1), b, c))
	valid = BroadcastToDims(Reshape(valid, b, c, 1, 1), b, c, kvh, cfg.HeadDim)
	indexShape := shapes.Make(dtypes.Int32, b, c, kvh, 1)
	index := Concatenate([]*Node{
		Iota(g, indexShape, 0), // row
		Iota(g, indexShape, 2), // kv head
		BroadcastToDims(Reshape(MinScalar(positions, capacity-1), b, c, 1, 1), b, c, kvh, 1), // slot
	}, -1) // [b, c, kvHeads, 3]

	newCache = make([]*Node, len(cache))
	kv := func(layer int, k, v *Node) (*Node, *Node, *Node, bool) {
		write := func(x, old *Node) *Node {
			x = Where(valid, x, ZerosLike(x)) // x: [b, c, kvHeads, headDim]
			return ScatterSum(old, index, x, false, false)
		}
		newCache[2*layer] = write(k, cache[2*layer])
		newCache[2*layer+1] = write(v, cache[2*layer+1])
		return newCache[2*layer], newCache[2*layer+1], visible, true
	}
	h := decoder(scope, cfg, tokens, positions, kv, false) // [b, c, hidden]
	var last *Node
	if c == 1 {
		last = Reshape(h, b, cfg.Hidden)
	} else {
		isLast := Equal(Iota(g, shapes.Make(dtypes.Int32, b, c), 1),
			BroadcastToDims(InsertAxes(AddScalar(lens, -1), -1), b, c))
		last = gomlxfix.DotGeneralMatmul(ConvertDType(isLast, h.DType()), []int{1}, []int{0}, h, []int{1}, []int{0}) // [b, hidden]
	}
	return head(scope, cfg, last), newCache
}
