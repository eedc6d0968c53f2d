// Package bench measures how fast a Qwen3 model trains and generates on a
// GoMLX backend: the time of one training step (forward, backward and an SGD
// update of every weight, on a batch of full sequences) and of one decoding step
// of the sampler (a batch of sequences, one token each, with the KV cache). It
// reports tokens per second and, given the device's peak, model FLOPs
// utilisation. The first call of each shape compiles; that time is reported
// apart and never mixed into the rates.
package bench
