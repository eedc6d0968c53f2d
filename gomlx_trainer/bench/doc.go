// Package bench measures how fast a Qwen3 model trains and generates on a
// GoMLX backend: the time of one training step (forward, backward and the GRPO
// trainer's AdamW update of every weight, on a batch of full sequences) and of
// one decoding step of the sampler (a batch of sequences, one token each, with
// the KV cache). It reports tokens per second and the rate of each part's
// work: model FLOP/s for the training step and the prefill, bytes read per
// second for decoding. The first call of each shape compiles; that time is
// reported apart and never mixed into the rates.
//
// Compare measures the same shapes on several GoMLX backends and on the
// PyTorch eager + transformers baseline (scripts/bench/torch_qwen3.py, run by
// RunTorch with the references' venv python) and reports them side by side
// with the ratios of their step times.
//
// ModelProducts, MeasureProducts and CompareProducts time the model's matrix
// products alone, each built as the model builds it, at the shapes of a
// training step, of the prefill (a prompt at a time, as the sampler reads
// prompts, and batched) and of a decode step, on GoMLX backends and in
// PyTorch (RunTorchProducts): how much of a step its products take, and which
// product one library multiplies slower than another.
//
// # The roofline
//
// A rate says how close a figure is to the machine's limit only beside that
// limit. Each part's work is counted from the config, never measured:
// TrainFLOPs (PaLM's 6 per weight per token plus attention), PrefillFLOPs (the
// forward third of it, the head at the last prompt token only) and
// DecodeStepBytes (every weight a decode step multiplies by, at the dtype's
// size, plus the key/value cache it attends over) and DecodeStepFLOPs. A
// training step and a prefill multiply matrices of hundreds of rows and are
// bound by compute; a decode step multiplies every weight by a handful of rows
// and is bound by the memory it reads, until the batch is large enough that
// its products take longer than its reads (on 2 CPU cores, at 64 rows of
// Qwen3-0.6B's shapes). So the roofline holds two limits, and ApplyRoofline
// gives each rate as its fraction of one: the model FLOP/s over the matmul
// peak of the model's dtype (MFU), the bytes/s of decoding over the copy
// bandwidth (MBU), and decoding's FLOP/s over the matmul peak too;
// DecodeBound names the one that binds.
//
// MeasureRoofline measures both, in a few seconds, on the machine the benches
// run on:
//
//   - The copy bandwidth is STREAM's Copy kernel (a[i] = b[i]) written with
//     Go's copy on the bench's threads (GOMAXPROCS, which --threads sets for
//     the pure Go backend and PyTorch), each thread its own contiguous part, and
//     counted as STREAM counts it: bytes read plus bytes written. Memory
//     belongs to the machine, not to a backend, so it is measured outside any
//     graph, where no allocation, dispatch or elided identity can blur it. Each
//     buffer is as large as the last-level cache and at least 256 MiB, so that
//     the copy runs from memory; the best of four passes is kept, after one
//     that faults the pages in, to set aside the moments another process took.
//     A decode step mostly reads, and reading alone streams somewhat faster
//     than a copy on many machines, so an MBU near or a little over 100% means
//     the step is as fast as memory allows (or its weights partly sat in a
//     cache larger than the buffers).
//   - The matmul peak is the best FLOP/s of square products [n, n] x [n, n]
//     (2n³ FLOPs), built as the model builds its products
//     (gomlxfix.DotGeneralMatmul), in float32 and bfloat16, on every backend
//     benched: sides double from 256 while a product takes under 100 ms, up to
//     DefaultMatmulMax (2048), one product compiling and three timed at each.
//     The PyTorch baseline times torch.mm under the same rules in its own run.
//     The highest rate of a dtype, wherever it came from, is the machine's
//     peak (Roofline.Peak says which side set it): every side is read against
//     one limit, and a library that multiplies faster shows what the hardware
//     can do.
//
// On a GPU nothing is measured: NamedRooflines holds datasheet figures (the
// H200's 4.8 TB/s, 67 TFLOP/s float32, 989 TFLOP/s dense bfloat16) and
// ParseRoofline reads them or three numbers of another device.
package bench
