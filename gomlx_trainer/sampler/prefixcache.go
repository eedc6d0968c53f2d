package sampler

import (
	"container/list"
	"sync"
)

// PrefixCache keeps the prefixes of prompts (the keys and values of a
// prompt's tokens but its last) between sessions, so that a prompt sampled
// again, by a later session or a server's later request, is not prefilled
// again: a session whose Options.Prefixes is set takes each prompt's prefix
// from it when it holds one, computed by the same sampler with the same
// MaxChunk and cache slots (then the numbers are those of prefilling it
// anew, bit for bit), and adds those it computes. It holds at most maxBytes
// of device memory, dropping the least recently used prefixes first; a
// prefix larger than that is used and not kept.
//
// It matches whole prompts, not the longest cached prefix of a prompt as a
// radix tree does: a partial match would feed the rest of the prompt in
// other chunks than a fresh prefill, and so round otherwise.
//
// It is safe for concurrent use: a session holds it while it takes (or
// makes) a prefix and copies it into its rows, so Flush never frees a prefix
// in use, and Stats and Flush wait for that.
type PrefixCache struct {
	mu      sync.Mutex
	max     int64
	bytes   int64
	entries map[prefixKey]*list.Element // of order, whose values are *prefix
	order   *list.List                  // most recently used first
	hits    int64
	misses  int64
}

// PrefixCacheStats is what a PrefixCache holds and how it has served.
type PrefixCacheStats struct {
	Entries  int   `json:"entries"`   // prefixes held
	Bytes    int64 `json:"bytes"`     // their device memory
	MaxBytes int64 `json:"max_bytes"` // the bound
	Hits     int64 `json:"hits"`      // prompts whose prefix was taken from the cache
	Misses   int64 `json:"misses"`    // prompts prefilled (and then kept, if they fit)
}

// NewPrefixCache returns an empty cache of at most maxBytes.
func NewPrefixCache(maxBytes int64) *PrefixCache {
	return &PrefixCache{max: maxBytes, entries: map[prefixKey]*list.Element{}, order: list.New()}
}

// with calls use with the prefix of key, the cache's or (a miss) the one
// compute returns, which it then keeps when it fits; hit says which. Only one
// call runs at a time.
func (c *PrefixCache) with(key prefixKey, compute func() (*prefix, error), use func(*prefix) error) (hit bool, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.entries[key]; ok {
		c.hits++
		c.order.MoveToFront(e)
		return true, use(e.Value.(*prefix))
	}
	c.misses++
	p, err := compute()
	if err != nil {
		return false, err
	}
	if err := use(p); err != nil || p.bytes > c.max {
		p.free()
		return false, err
	}
	for c.bytes+p.bytes > c.max {
		c.drop(c.order.Back())
	}
	c.entries[key] = c.order.PushFront(p)
	c.bytes += p.bytes
	return false, nil
}

func (c *PrefixCache) drop(e *list.Element) {
	p := c.order.Remove(e).(*prefix)
	delete(c.entries, p.key)
	c.bytes -= p.bytes
	p.free()
}

// Flush frees every prefix (a server does, when its weights change).
func (c *PrefixCache) Flush() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for c.order.Len() > 0 {
		c.drop(c.order.Back())
	}
}

// Stats returns what c holds and its hits and misses so far.
func (c *PrefixCache) Stats() PrefixCacheStats {
	c.mu.Lock()
	defer c.mu.Unlock()
	return PrefixCacheStats{Entries: c.order.Len(), Bytes: c.bytes, MaxBytes: c.max, Hits: c.hits, Misses: c.misses}
}
