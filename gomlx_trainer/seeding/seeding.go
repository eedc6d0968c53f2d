// Package seeding says how the sequences of a session get their random
// streams: sequence i of a session started at seed s draws from
// SequenceSeed(s, i), in the in-process sampler and on every server alike,
// so that an engine given the same seeds samples the same tokens.
package seeding

// SequenceSeed is the seed of sequence i of a session started at seed
// (SplitMix64 of their mix), so neighbouring sequences and sessions draw
// unrelated streams. It is below 2^63, so that servers that keep a seed in
// an int64 (SGLang's sampling_seed, vLLM's seed) take it as it is.
func SequenceSeed(seed uint64, i int) uint64 {
	z := seed + uint64(i+1)*0x9e3779b97f4a7c15
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return (z ^ z>>31) >> 1
}
