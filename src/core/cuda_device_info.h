// cuda_device_info.h — what launch decisions read about a CUDA device
// (compute capability, SM count, peak DRAM bandwidth), queried from the
// runtime once per device and cached, so that dispatching a call makes no
// runtime queries.
#pragma once

#include <cuda_runtime.h>

#include <atomic>
#include <cstdint>

#include "core/cuda_check.h"
#include "core/dram_bandwidth.h"

namespace qgemm::detail {

struct CudaDeviceInfo {
  int major = 0, minor = 0;  // compute capability
  int sm_count = 1;
  // Peak DRAM bandwidth in GB/s (peak_dram_gbps): what the decode kernel's
  // launch rule compares with what one CTA per SM streams
  // (skinny_stream_launch.h).
  int dram_gbps = 0;
};

inline CudaDeviceInfo cuda_device_info(int device) {
  // Packed as major << 56 | minor << 48 | dram_gbps << 24 | sm_count, + 1
  // (0 = not read yet).
  static std::atomic<uint64_t> cache[64];
  const bool cached = device >= 0 && device < 64;
  uint64_t packed = cached ? cache[device].load(std::memory_order_relaxed) : 0;
  if (packed == 0) {
    int major = 0, minor = 0, sms = 0, clock_khz = 0, bus_bits = 0;
    QGEMM_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
    QGEMM_CUDA_CHECK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device));
    QGEMM_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    QGEMM_CUDA_CHECK(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrMemoryClockRate, device));
    QGEMM_CUDA_CHECK(cudaDeviceGetAttribute(&bus_bits, cudaDevAttrGlobalMemoryBusWidth, device));
    const uint64_t gbps = static_cast<uint64_t>(peak_dram_gbps(clock_khz, bus_bits)) & 0xffffff;
    packed = (static_cast<uint64_t>(major & 0xff) << 56 | static_cast<uint64_t>(minor & 0xff) << 48 | gbps << 24 |
              (static_cast<uint64_t>(sms) & 0xffffff)) +
             1;
    if (cached) cache[device].store(packed, std::memory_order_relaxed);
  }
  packed -= 1;
  return CudaDeviceInfo{static_cast<int>(packed >> 56), static_cast<int>((packed >> 48) & 0xff),
                        static_cast<int>(packed & 0xffffff), static_cast<int>((packed >> 24) & 0xffffff)};
}

}  // namespace qgemm::detail
