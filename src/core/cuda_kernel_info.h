// cuda_kernel_info.h — what launch decisions need to know about one kernel
// on one device, read from the CUDA runtime once per (kernel, device) and
// cached, so that launching stays free of runtime queries: how many of its
// CTAs are resident on the whole device at once, and the architecture its
// loaded code was compiled for.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <cstdint>

#include "core/cuda_check.h"
#include "core/cuda_device_info.h"

namespace qgemm::detail {

struct KernelInfo {
  // The PTX version the loaded code was compiled from (80, 90, …), never more
  // than its binary version: sm_80 code on a Hopper, or compute_80 PTX
  // JIT-compiled for a newer GPU, reports 80.
  int arch = 0;
  // CTAs of `threads` threads (and the given dynamic shared memory) resident
  // on the whole device at once: occupancy per SM × SMs, at least 1.
  int64_t resident_ctas = 1;
};

// The KernelInfo of kKernel on `device` (which must be current) when launched
// with `threads` threads and `dynamic_smem` bytes. Above 48 KB of dynamic
// shared memory, the first call also opts the kernel in
// (cudaFuncAttributeMaxDynamicSharedMemorySize), which its launches need.
template <auto kKernel>
KernelInfo kernel_info(int device, int threads, int dynamic_smem = 0) {
  static std::atomic<int64_t> cache[64];  // (arch << 40 | resident_ctas) + 1; 0 = not read yet
  const bool cached = device >= 0 && device < 64;
  int64_t packed = cached ? cache[device].load(std::memory_order_acquire) - 1 : -1;
  if (packed < 0) {
    if (dynamic_smem > 48 * 1024) {
      QGEMM_CUDA_CHECK(cudaFuncSetAttribute(kKernel, cudaFuncAttributeMaxDynamicSharedMemorySize, dynamic_smem));
    }
    cudaFuncAttributes attributes{};
    QGEMM_CUDA_CHECK(cudaFuncGetAttributes(&attributes, kKernel));
    int per_sm = 0;
    QGEMM_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kKernel, threads,
                                                                   static_cast<size_t>(dynamic_smem)));
    const int sms = cuda_device_info(device).sm_count;
    const int64_t arch = std::min(attributes.ptxVersion, attributes.binaryVersion);
    packed = arch << 40 | std::max<int64_t>(int64_t{per_sm} * sms, 1);
    if (cached) cache[device].store(packed + 1, std::memory_order_release);
  }
  return KernelInfo{static_cast<int>(packed >> 40), packed & ((int64_t{1} << 40) - 1)};
}

}  // namespace qgemm::detail
