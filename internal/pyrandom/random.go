package pyrandom

import (
	"fmt"
	"math"
	"math/bits"
)

// Getrandbits returns random.getrandbits(k) for 0 <= k <= 64: the top k bits
// of one output for k <= 32, else 32-bit words from the least significant up,
// the last one cut to its top bits. It panics for other k.
func (r *Rand) Getrandbits(k int) uint64 {
	if k < 0 || k > 64 {
		panic(fmt.Sprintf("pyrandom: Getrandbits(%d): k must be in [0, 64]", k))
	}
	var v uint64
	for pos := 0; k > 0; pos, k = pos+32, k-32 {
		w := r.Uint32()
		if k < 32 {
			w >>= 32 - k
		}
		v |= uint64(w) << pos
	}
	return v
}

// Randbelow returns random._randbelow(n) (_randbelow_with_getrandbits): draws
// of n.bit_length() bits until one is below n. It panics unless n > 0.
func (r *Rand) Randbelow(n int) int {
	if n <= 0 {
		panic(fmt.Sprintf("pyrandom: Randbelow(%d): n must be positive", n))
	}
	k := bits.Len(uint(n))
	v := r.Getrandbits(k)
	for v >= uint64(n) {
		v = r.Getrandbits(k)
	}
	return int(v)
}

// Sample returns the indices random.sample(population, k) picks from a
// population of n items, in the order drawn. As CPython does, it keeps a pool
// of the n indices when n is at most the size of a k-element set (21, plus
// 4**ceil(log(3k, 4)) when k > 5) and otherwise redraws indices already taken.
// It panics unless 0 <= k <= n.
func (r *Rand) Sample(n, k int) []int {
	if k < 0 || k > n {
		panic(fmt.Sprintf("pyrandom: Sample(%d, %d): sample larger than population or negative", n, k))
	}
	result := make([]int, k)
	setsize := 21
	if k > 5 {
		setsize += int(math.Pow(4, math.Ceil(math.Log(float64(3*k))/math.Log(4))))
	}
	if n <= setsize {
		pool := make([]int, n)
		for i := range pool {
			pool[i] = i
		}
		for i := range k {
			j := r.Randbelow(n - i)
			result[i] = pool[j]
			pool[j] = pool[n-i-1]
		}
		return result
	}
	selected := make(map[int]bool, k)
	for i := range k {
		j := r.Randbelow(n)
		for selected[j] {
			j = r.Randbelow(n)
		}
		selected[j] = true
		result[i] = j
	}
	return result
}
