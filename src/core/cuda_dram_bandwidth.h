// cuda_dram_bandwidth.h — a device's peak DRAM bandwidth, queried from the
// runtime once per device and cached (launch decisions make no runtime
// queries). Apart from cuda_device_info.h so that the CUTLASS translation
// units, which include that header, do not depend on it.
#pragma once

#include <cuda_runtime.h>

#include <atomic>
#include <cstdint>

#include "core/cuda_check.h"
#include "core/dram_bandwidth.h"

namespace qgemm::detail {

// Peak DRAM bandwidth of `device` in GB/s (peak_dram_gbps of its memory
// clock and bus width): what the decode kernel's launch rule compares with
// what one CTA per SM streams (gemm/cuda/skinny_stream_launch.h), and what
// the Hopper tile model reads for short K (gemm/cuda/dispatch_table.h,
// short_k_on_fast_dram).
inline int64_t cuda_peak_dram_gbps(int device) {
  static std::atomic<int64_t> cache[64];  // GB/s + 1; 0 = not read yet
  const bool cached = device >= 0 && device < 64;
  int64_t gbps = cached ? cache[device].load(std::memory_order_relaxed) - 1 : -1;
  if (gbps < 0) {
    int clock_khz = 0, bus_bits = 0;
    QGEMM_CUDA_CHECK(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrMemoryClockRate, device));
    QGEMM_CUDA_CHECK(cudaDeviceGetAttribute(&bus_bits, cudaDevAttrGlobalMemoryBusWidth, device));
    gbps = peak_dram_gbps(clock_khz, bus_bits);
    if (cached) cache[device].store(gbps + 1, std::memory_order_relaxed);
  }
  return gbps;
}

}  // namespace qgemm::detail
