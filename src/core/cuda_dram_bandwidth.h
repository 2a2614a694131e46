// cuda_dram_bandwidth.h — a device's peak DRAM bandwidth, queried from the
// runtime once per device and cached (cuda_device_cache.h). Apart from
// cuda_device_info.h so that the CUTLASS translation units, which include
// that header, do not depend on it.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "core/cuda_check.h"
#include "core/cuda_device_cache.h"
#include "core/dram_bandwidth.h"

namespace qgemm::detail {

inline int64_t query_peak_dram_gbps(int device) {
  int clock_khz = 0, bus_bits = 0;
  QGEMM_CUDA_CHECK(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrMemoryClockRate, device));
  QGEMM_CUDA_CHECK(cudaDeviceGetAttribute(&bus_bits, cudaDevAttrGlobalMemoryBusWidth, device));
  return peak_dram_gbps(clock_khz, bus_bits);
}

// Peak DRAM bandwidth of `device` in GB/s (peak_dram_gbps of its memory
// clock and bus width): what the decode kernel's launch rule compares with
// what one CTA per SM streams (gemm/cuda/skinny_stream_launch.h), and what
// the Hopper tile model reads for its costs on fast DRAM
// (gemm/cuda/tile_model.h, dram_regime).
inline int64_t cuda_peak_dram_gbps(int device) { return cached_per_device<query_peak_dram_gbps>(device); }

}  // namespace qgemm::detail
