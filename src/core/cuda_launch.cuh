// cuda_launch.cuh — how qgemm launches its hand-written kernels: with
// programmatic dependent launch (PDL, qgemm/launch.h) where the GPU, the
// kernel's loaded code and the process-wide switch allow it, the ordinary
// way otherwise.
//
// The contract: every kernel launched through launch_pdl_kernel calls
// wait_for_preceding_grids() before its first global-memory access. A launch
// with programmatic stream serialization lets the kernel's blocks start while
// the previous kernel in the stream is still running; `griddepcontrol.wait`
// holds them until that kernel has completed and flushed its memory, so
// nothing the kernel reads or writes can race with it. Each kernel also
// calls allow_dependent_launch() (`griddepcontrol.launch_dependents`) once
// per block, which lets the next kernel be launched early: the dependent
// grid launches when all blocks have signalled or exited.
#pragma once

#include <cuda_runtime.h>

#include <mutex>
#include <unordered_map>
#include <utility>

#include "core/cuda_check.h"
#include "core/cuda_device_info.h"
#include "core/cuda_kernel_info.h"
#include "qgemm/launch.h"

namespace qgemm::detail {

// The first statement of every kernel launched by launch_pdl_kernel: returns
// once the preceding grid in the stream has completed and its memory is
// visible. A no-op in code compiled for architectures without PDL
// (launch_pdl_kernel never launches such code programmatically).
__device__ __forceinline__ void wait_for_preceding_grids() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;\n" ::: "memory");
#endif
}

// Lets the next kernel in the stream be launched once every block of this
// grid has called it (or exited). Where a kernel calls it is a performance
// choice only (the next kernel still waits for this one to complete):
// right after the wait, the next kernel's blocks can take slots as soon as
// this grid's last wave is resident; at the end of a block's work, they are
// scheduled while the last blocks drain. Measured per kernel family
// (docs/performance.md, "Programmatic dependent launch").
__device__ __forceinline__ void allow_dependent_launch() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;\n" ::: "memory");
#endif
}

// The PTX version of the code `kernel` runs on `device` (80 for sm_80 code on
// a Hopper), read once per (kernel, device) and cached (later launches take an
// uncontended lock and a hash lookup; nothing is allocated after the first).
inline int loaded_code_arch(const void* kernel, int device) {
  static std::mutex mutex;
  static std::unordered_map<const void*, int> cache[64];
  const bool cached = device >= 0 && device < 64;
  std::lock_guard<std::mutex> lock(mutex);
  if (cached) {
    const auto it = cache[device].find(kernel);
    if (it != cache[device].end()) return it->second;
  }
  cudaFuncAttributes attributes{};
  QGEMM_CUDA_CHECK(cudaFuncGetAttributes(&attributes, kernel));
  const int arch = attributes.ptxVersion < attributes.binaryVersion ? attributes.ptxVersion : attributes.binaryVersion;
  if (cached) cache[device].emplace(kernel, arch);
  return arch;
}

// Whether PDL is on for launches on `device`: the switch, and a GPU that has it.
inline bool device_launches_programmatically(int device) {
  return programmatic_dependent_launch() && cuda_device_info(device).major >= 9;
}

// Whether a launch of `kernel` on `device` uses PDL.
inline bool launches_programmatically(const void* kernel, int device) {
  return device_launches_programmatically(device) && loaded_code_arch(kernel, device) >= 90;
}

// Launches kernel<<<grid, block, smem, stream>>>(args...) — with PDL where
// launches_programmatically says so — whose CTAs along z form clusters of
// `cluster_z` (1: no cluster attribute). `device` is the current device.
// Launch errors throw (QGEMM_CUDA_CHECK).
template <class... Params, class... Args>
void launch_pdl_kernel_in_clusters(void (*kernel)(Params...), dim3 grid, dim3 block, size_t smem, cudaStream_t stream,
                                   int device, int cluster_z, Args&&... args) {
  cudaLaunchConfig_t config{};
  config.gridDim = grid;
  config.blockDim = block;
  config.dynamicSmemBytes = smem;
  config.stream = stream;
  cudaLaunchAttribute attributes[2];
  unsigned count = 0;
  if (cluster_z > 1) attributes[count++] = z_cluster_attribute(cluster_z);
  if (launches_programmatically(reinterpret_cast<const void*>(kernel), device)) {
    attributes[count] = cudaLaunchAttribute{};
    attributes[count].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attributes[count].val.programmaticStreamSerializationAllowed = 1;
    ++count;
  }
  config.attrs = attributes;
  config.numAttrs = count;
  QGEMM_CUDA_CHECK(cudaLaunchKernelEx(&config, kernel, std::forward<Args>(args)...));
}

// The common case: no cluster.
template <class... Params, class... Args>
void launch_pdl_kernel(void (*kernel)(Params...), dim3 grid, dim3 block, size_t smem, cudaStream_t stream, int device,
                       Args&&... args) {
  launch_pdl_kernel_in_clusters(kernel, grid, block, smem, stream, device, 1, std::forward<Args>(args)...);
}

}  // namespace qgemm::detail
