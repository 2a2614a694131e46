// cuda_device_info.h — what launch decisions read about a CUDA device
// (compute capability, SM count), queried from the runtime once per device
// and cached (cuda_device_cache.h), so that dispatching a call makes no
// runtime queries.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "core/cuda_check.h"
#include "core/cuda_device_cache.h"

namespace qgemm::detail {

struct CudaDeviceInfo {
  int major = 0, minor = 0;  // compute capability
  int sm_count = 1;
};

// The runtime's figures packed into one value: major << 40 | minor << 32 | SM count.
inline int64_t query_cuda_device_info(int device) {
  int major = 0, minor = 0, sms = 0;
  QGEMM_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
  QGEMM_CUDA_CHECK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device));
  QGEMM_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  return int64_t{major} << 40 | int64_t{minor} << 32 | static_cast<uint32_t>(sms);
}

inline CudaDeviceInfo cuda_device_info(int device) {
  const int64_t packed = cached_per_device<query_cuda_device_info>(device);
  return CudaDeviceInfo{static_cast<int>(packed >> 40), static_cast<int>((packed >> 32) & 0xff),
                        static_cast<int>(packed & 0xffffffff)};
}

}  // namespace qgemm::detail
