package pyrandom

const (
	stateWords = 624 // N of MT19937
	shift      = 397 // M of MT19937
	upperMask  = 0x80000000
	lowerMask  = 0x7fffffff
	matrixA    = 0x9908b0df
)

// Rand is CPython's random.Random: a Mersenne Twister and its index.
type Rand struct {
	mt    [stateWords]uint32
	index int
}

// New returns the generator that random.Random(seed) is in CPython: the state
// made by init_by_array from the little-endian 32-bit words of |seed| (one
// word for 0).
func New(seed int64) *Rand {
	abs := uint64(seed)
	if seed < 0 {
		abs = -abs // two's complement: right for math.MinInt64 too
	}
	key := []uint32{uint32(abs)}
	if hi := uint32(abs >> 32); hi != 0 {
		key = append(key, hi)
	}
	r := &Rand{}
	r.initByArray(key)
	return r
}

// initGenrand is init_genrand of _randommodule.c.
func (r *Rand) initGenrand(s uint32) {
	r.mt[0] = s
	for i := 1; i < stateWords; i++ {
		r.mt[i] = 1812433253*(r.mt[i-1]^(r.mt[i-1]>>30)) + uint32(i)
	}
	r.index = stateWords
}

// initByArray is init_by_array of _randommodule.c.
func (r *Rand) initByArray(key []uint32) {
	r.initGenrand(19650218)
	i, j := 1, 0
	for k := max(stateWords, len(key)); k > 0; k-- {
		r.mt[i] = (r.mt[i] ^ ((r.mt[i-1] ^ (r.mt[i-1] >> 30)) * 1664525)) + key[j] + uint32(j)
		i++
		j++
		if i >= stateWords {
			r.mt[0] = r.mt[stateWords-1]
			i = 1
		}
		if j >= len(key) {
			j = 0
		}
	}
	for k := stateWords - 1; k > 0; k-- {
		r.mt[i] = (r.mt[i] ^ ((r.mt[i-1] ^ (r.mt[i-1] >> 30)) * 1566083941)) - uint32(i)
		i++
		if i >= stateWords {
			r.mt[0] = r.mt[stateWords-1]
			i = 1
		}
	}
	r.mt[0] = 0x80000000 // MSB is 1, assuring a non-zero initial array
}

// twist regenerates the whole state (the first branch of genrand_uint32).
func (r *Rand) twist() {
	mix := func(a, b, c uint32) uint32 {
		y := (a & upperMask) | (b & lowerMask)
		return c ^ (y >> 1) ^ (matrixA * (y & 1))
	}
	kk := 0
	for ; kk < stateWords-shift; kk++ {
		r.mt[kk] = mix(r.mt[kk], r.mt[kk+1], r.mt[kk+shift])
	}
	for ; kk < stateWords-1; kk++ {
		r.mt[kk] = mix(r.mt[kk], r.mt[kk+1], r.mt[kk+shift-stateWords])
	}
	r.mt[stateWords-1] = mix(r.mt[stateWords-1], r.mt[0], r.mt[shift-1])
	r.index = 0
}

// Uint32 returns the next 32-bit output (genrand_uint32 of _randommodule.c).
func (r *Rand) Uint32() uint32 {
	if r.index >= stateWords {
		r.twist()
	}
	y := r.mt[r.index]
	r.index++
	y ^= y >> 11
	y ^= (y << 7) & 0x9d2c5680
	y ^= (y << 15) & 0xefc60000
	y ^= y >> 18
	return y
}
