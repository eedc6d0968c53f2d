// Package bench measures how fast a Qwen3 model trains and generates on a
// GoMLX backend: the time of one training step (forward, backward and the GRPO
// trainer's AdamW update of every weight, on a batch of full sequences) and of
// one decoding step of the sampler (a batch of sequences, one token each, with
// the KV cache). It reports tokens per second and, given the device's peak,
// model FLOPs utilisation. The first call of each shape compiles; that time is
// reported apart and never mixed into the rates.
//
// Compare measures the same shapes on several GoMLX backends and on the
// PyTorch eager + transformers baseline (scripts/bench/torch_qwen3.py, run by
// RunTorch with the references' venv python) and reports them side by side
// with the ratios of their step times.
package bench
