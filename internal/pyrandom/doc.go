// Package pyrandom reproduces, bit for bit, the parts of CPython's
// random.Random that mathrl's datasets were drawn with: seeding from an
// integer, getrandbits, _randbelow and sample. A sample published as
// "random.Random(S).sample(pool, K)" can then be redrawn in Go.
//
// The generator is the Mersenne Twister MT19937 of CPython's _randommodule.c,
// seeded with init_by_array from the 32-bit words of |seed|; _randbelow and
// sample follow Lib/random.py of CPython 3.11, which is also what 3.12 and
// 3.13 do for these calls.
package pyrandom
