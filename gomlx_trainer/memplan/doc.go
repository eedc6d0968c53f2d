// Package memplan predicts the peak device memory of a GRPO run before it
// starts: one training step (weights, gradient accumulators, AdamW moments and
// the activations of one micro-batch at the longest sequence) and one sampling
// session (weights, the key/value cache and the working set of one step). It
// also finds the largest micro-batch and sampling batch that fit a memory size.
// It is arithmetic on a qwen3.Config and a few numbers of a recipe: it never
// builds a graph or touches a backend.
//
// # What is assumed
//
// The formulas follow what the graphs of grpo.Learner, qwen3 and sampler
// allocate (each term's doc comment gives its reasoning). Two backends free
// buffers by different rules, so the per-element constants come in two sets:
//
//   - XLA (GPU): elementwise chains are fused, so only the outputs of matmuls,
//     reductions and the fusions that feed them are held; a weight's gradient
//     is added into its float32 accumulator as soon as it is computed; donated
//     variables (accumulators, moments, weights, the sampler's cache) are
//     updated in place. XLA's own rematerialisation is assumed off. These
//     constants are assumptions until checked against a GPU's reported peak.
//   - CPU (GoMLX's pure Go backend): every op writes its own buffer (reusing an
//     input's in place when it is the input's last use), ops run in the order
//     the graph was built, so the whole forward pass runs before the backward
//     and every weight gradient is alive until the accumulators are added at
//     the end. The package's tests measure these constants on small shapes.
//     In a build with GOEXPERIMENT=simd on an AVX2 CPU, GoMLX's AVX kernels
//     hold larger scratch buffers than the plain build's, a term of their
//     own (matmul workspace).
//
// # Several devices
//
// With Devices > 1 (num_devices, sharding data or fsdp) the figures are those
// of the first device, which also runs the sampler and the KL reference
// (Sharded, TrainStep, Sampling). The XLA rules then follow what XLA's SPMD
// partitioner made of grpo.Learner's graphs on XLA's CPU devices, checked
// there against the shards each device holds and XLA's buffer assignment of
// the per-device programs (TestShardedPeakOnXLA).
//
// Terms below a megabyte (norm statistics, per-row scalars, masks of one row)
// are left out.
package memplan
