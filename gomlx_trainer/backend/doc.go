// Package backend chooses where GoMLX runs: the CPU (GoMLX's pure Go backend,
// sequential ops) or an NVIDIA GPU (XLA through a PJRT CUDA plugin that is
// dlopen'ed at run time).
//
// The CUDA plugin is taken from --pjrt-plugin, else MATHRL_PJRT_PLUGIN, else
// found in python3's site-packages, where JAX's jax-cuda13-pjrt wheel puts
// jax_plugins/xla_cuda13/xla_cuda_plugin.so and the NVIDIA wheels put their
// libraries (nvidia/*/lib), ptxas (nvidia/cu13/bin) and libdevice
// (nvidia/cu13/nvvm/libdevice). The plan sets LD_LIBRARY_PATH, PATH, XLA_FLAGS
// (--xla_gpu_cuda_data_dir), GOPJRT_CUDA_CHECKS=0 and GOMLX_NO_AUTO_INSTALL=1;
// since the dynamic loader reads LD_LIBRARY_PATH only at start, the program
// re-executes itself once when that variable must change. Nothing is ever
// downloaded.
//
// Resolve only computes a Plan (tests feed it a fake machine); Apply changes the
// process; New does both and opens the backend; Report writes what was found for
// `mathrl doctor`.
package backend
