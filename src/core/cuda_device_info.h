// cuda_device_info.h — what launch decisions read about a CUDA device
// (compute capability, SM count), queried from the runtime once per device
// and cached, so that dispatching a call makes no runtime queries.
#pragma once

#include <cuda_runtime.h>

#include <atomic>
#include <cstdint>

#include "core/cuda_check.h"

namespace qgemm::detail {

struct CudaDeviceInfo {
  int major = 0, minor = 0;  // compute capability
  int sm_count = 1;
};

inline CudaDeviceInfo cuda_device_info(int device) {
  static std::atomic<int64_t> cache[64];  // (major << 40 | minor << 32 | sm_count) + 1; 0 = not read yet
  const bool cached = device >= 0 && device < 64;
  int64_t packed = cached ? cache[device].load(std::memory_order_relaxed) - 1 : -1;
  if (packed < 0) {
    int major = 0, minor = 0, sms = 0;
    QGEMM_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
    QGEMM_CUDA_CHECK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device));
    QGEMM_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    packed = int64_t{major} << 40 | int64_t{minor} << 32 | static_cast<uint32_t>(sms);
    if (cached) cache[device].store(packed + 1, std::memory_order_relaxed);
  }
  return CudaDeviceInfo{static_cast<int>(packed >> 40), static_cast<int>((packed >> 32) & 0xff),
                        static_cast<int>(packed & 0xffffffff)};
}

}  // namespace qgemm::detail
