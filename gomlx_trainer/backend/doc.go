// Package backend chooses where GoMLX runs: the CPU through GoMLX's pure Go
// backend (sequential ops), the CPU through XLA's compiler (a PJRT CPU plugin),
// or an NVIDIA GPU (XLA through a PJRT CUDA plugin). Plugins are dlopen'ed at
// run time; nothing is ever downloaded.
//
// The CPU plugin (xla-cpu) is taken from --pjrt-plugin, else
// MATHRL_PJRT_CPU_PLUGIN, else found in a project cache (.cache/pjrt-cpu, where
// scripts/setup.sh installs CPUPluginPackage) or in python3's site-packages.
//
// The CUDA plugin is taken from --pjrt-plugin, else MATHRL_PJRT_PLUGIN, else
// found in python3's site-packages, where JAX's jax-cuda13-pjrt wheel puts
// jax_plugins/xla_cuda13/xla_cuda_plugin.so and the NVIDIA wheels put their
// libraries (nvidia/*/lib), ptxas (nvidia/cu13/bin) and libdevice
// (nvidia/cu13/nvvm/libdevice). The plan sets LD_LIBRARY_PATH, PATH, XLA_FLAGS
// (--xla_gpu_cuda_data_dir), GOPJRT_CUDA_CHECKS=0 and GOMLX_NO_AUTO_INSTALL=1;
// since the dynamic loader reads LD_LIBRARY_PATH only at start, the program
// re-executes itself once when that variable must change.
//
// auto is CUDA when its plugin and an NVIDIA driver are found, else xla-cpu
// when its plugin is found, else the pure Go backend, and Plan.Line then says
// so in one line.
//
// Resolve only computes a Plan (tests feed it a fake machine); Apply changes the
// process; New does both and opens the backend; Report writes what was found for
// `mathrl doctor`.
//
// Compiles.Watch wraps a backend to count the graphs compiled on it and the
// time they took, apart for the code that asked for them (the trainer splits
// them between sampling and training); it changes nothing that is computed.
package backend
