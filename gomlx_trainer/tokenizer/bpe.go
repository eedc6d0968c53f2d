package tokenizer

import (
	"container/heap"
	"slices"
	"strings"
)

// noMerge is the rank of a pair of tokens that no merge joins.
const noMerge = ^uint32(0)

// merge is one BPE merge rule: the rank (lower merges first) and the id of the
// joined token.
type merge struct {
	rank uint32
	id   int32
}

// pairKey packs a pair of token ids into a map key.
func pairKey(a, b int32) uint64 { return uint64(uint32(a))<<32 | uint64(uint32(b)) }

// lookupMerge returns the merge of the pair (a, b), with rank noMerge if none.
func (t *Tokenizer) lookupMerge(a, b int32) merge {
	if m, ok := t.merges[pairKey(a, b)]; ok {
		return m
	}
	return merge{rank: noMerge}
}

// maxShortWord is the longest piece (in bytes) that packShort packs.
const maxShortWord = 7

// packShort packs a piece of at most maxShortWord bytes, and its length, into
// an integer map key (cheaper to look up than a string key).
func packShort(piece string) uint64 {
	k := uint64(len(piece)) << 56
	for i := 0; i < len(piece); i++ {
		k |= uint64(piece[i]) << (8 * i)
	}
	return k
}

// longWord is the length (in bytes) from which bpe switches from rescanning the
// pair ranks after each merge to a priority queue; both give the same result.
const longWord = 48

// appendBPE appends to ids the tokens of one pre-tokenized piece (raw bytes):
// starting from one token per byte, it repeatedly joins the adjacent pair with
// the lowest merge rank (the leftmost one on ties) until no pair merges.
func (t *Tokenizer) appendBPE(ids []int, piece string) []int {
	switch len(piece) {
	case 1:
		return append(ids, int(t.byteID[piece[0]]))
	case 2:
		if id := t.twoByteWords[int(piece[0])<<8|int(piece[1])]; id >= 0 {
			return append(ids, int(id))
		}
	}
	if len(piece) <= maxShortWord {
		if id, ok := t.shortWords[packShort(piece)]; ok {
			return append(ids, int(id))
		}
	} else if id, ok := t.words[piece]; ok {
		return append(ids, int(id))
	}
	if v, ok := t.cache.Load(piece); ok {
		return append(ids, v.([]int)...)
	}
	n := len(ids)
	ids = t.appendMerged(ids, piece)
	if t.cached.Add(1) <= maxCached {
		t.cache.Store(strings.Clone(piece), slices.Clone(ids[n:]))
	}
	return ids
}

// appendMerged appends the BPE tokens of piece, merging from its bytes.
func (t *Tokenizer) appendMerged(ids []int, piece string) []int {
	if len(piece) >= longWord {
		return t.appendBPEHeap(ids, piece)
	}
	return t.appendBPEShort(ids, piece)
}

// maxCached bounds the number of pieces appendBPE remembers.
const maxCached = 1 << 16

// appendBPEShort is appendBPE's merge loop for pieces shorter than longWord:
// after each merge it rescans the (few) pair ranks for the lowest.
func (t *Tokenizer) appendBPEShort(ids []int, piece string) []int {
	var symBuf [longWord]int32
	var rankBuf [longWord]merge
	syms := symBuf[:len(piece)]
	for i := 0; i < len(piece); i++ {
		syms[i] = t.byteID[piece[i]]
	}
	pairs := rankBuf[:len(piece)-1]
	for i := range pairs {
		pairs[i] = t.lookupMerge(syms[i], syms[i+1])
	}
	for {
		best := -1
		bestRank := noMerge
		for i, p := range pairs {
			if p.rank < bestRank {
				best, bestRank = i, p.rank
			}
		}
		if best < 0 {
			break
		}
		syms[best] = pairs[best].id
		copy(syms[best+1:], syms[best+2:])
		syms = syms[:len(syms)-1]
		copy(pairs[best:], pairs[best+1:])
		pairs = pairs[:len(pairs)-1]
		if best > 0 {
			pairs[best-1] = t.lookupMerge(syms[best-1], syms[best])
		}
		if best < len(pairs) {
			pairs[best] = t.lookupMerge(syms[best], syms[best+1])
		}
	}
	for _, s := range syms {
		ids = append(ids, int(s))
	}
	return ids
}

// candidate is a pair of adjacent symbols waiting in the priority queue.
type candidate struct {
	rank        uint32
	pos         int32 // index of the left symbol
	left, right int32 // the token ids the pair had when queued
}

// candidates is a min-heap ordered by rank, then position.
type candidates []candidate

func (h candidates) Len() int { return len(h) }
func (h candidates) Less(i, j int) bool {
	if h[i].rank != h[j].rank {
		return h[i].rank < h[j].rank
	}
	return h[i].pos < h[j].pos
}
func (h candidates) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *candidates) Push(x any)   { *h = append(*h, x.(candidate)) }
func (h *candidates) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// appendBPEHeap is appendBPE for long pieces: symbols form a linked list and
// pairs wait in a priority queue, so the work grows as n log n, not n².
func (t *Tokenizer) appendBPEHeap(ids []int, piece string) []int {
	n := len(piece)
	syms := make([]int32, n)
	next := make([]int32, n) // -1 at the end
	prev := make([]int32, n) // -1 at the start
	for i := 0; i < n; i++ {
		syms[i] = t.byteID[piece[i]]
		next[i] = int32(i + 1)
		prev[i] = int32(i - 1)
	}
	next[n-1] = -1
	h := make(candidates, 0, n)
	for i := 0; i+1 < n; i++ {
		if m := t.lookupMerge(syms[i], syms[i+1]); m.rank != noMerge {
			h = append(h, candidate{m.rank, int32(i), syms[i], syms[i+1]})
		}
	}
	heap.Init(&h)
	for h.Len() > 0 {
		c := heap.Pop(&h).(candidate)
		r := next[c.pos]
		if syms[c.pos] != c.left || r < 0 || syms[r] != c.right {
			continue // stale: one side was merged since
		}
		m := t.lookupMerge(c.left, c.right)
		syms[c.pos] = m.id
		syms[r] = -1
		next[c.pos] = next[r]
		if next[r] >= 0 {
			prev[next[r]] = c.pos
		}
		if p := prev[c.pos]; p >= 0 {
			if m := t.lookupMerge(syms[p], syms[c.pos]); m.rank != noMerge {
				heap.Push(&h, candidate{m.rank, p, syms[p], syms[c.pos]})
			}
		}
		if q := next[c.pos]; q >= 0 {
			if m := t.lookupMerge(syms[c.pos], syms[q]); m.rank != noMerge {
				heap.Push(&h, candidate{m.rank, c.pos, syms[c.pos], syms[q]})
			}
		}
	}
	for i := int32(0); i >= 0; i = next[i] {
		ids = append(ids, int(syms[i]))
	}
	return ids
}
