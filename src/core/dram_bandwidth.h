// dram_bandwidth.h — a GPU's peak DRAM bandwidth from its memory clock and
// bus width (host arithmetic, tested without a GPU).
#pragma once

#include <cstdint>

namespace qgemm::detail {

// Two transfers per memory clock (DDR): kHz × 1e3 × 2 × bits / 8 / 1e9 = GB/s.
// H100 SXM: 2619 MHz × 5120 bits = 3352 GB/s; H200: 3201 MHz × 6144 bits = 4916 GB/s.
constexpr int64_t peak_dram_gbps(int64_t memory_clock_khz, int64_t bus_width_bits) {
  return memory_clock_khz * bus_width_bits / 4'000'000;
}

// Whether a GPU's DRAM gives each of its `sms` SMs more than
// kFastDramGbpsPerSm of peak bandwidth: the line between an H100 SXM (3352
// GB/s on 132 SMs: 25 per SM) and an H200 (4814 as the runtime reports it:
// 36), where launch rules measured on both part ways — weight-only's int8
// decode kernel (wonly/cuda/wonly_stream_plan.h) and the Hopper tile model
// at short K (gemm/cuda/tile_model.h). 0 (unknown) is not fast.
constexpr int64_t kFastDramGbpsPerSm = 30;
constexpr bool dram_fast_per_sm(int64_t peak_dram_gbps, int64_t sms) {
  return sms > 0 && peak_dram_gbps > kFastDramGbpsPerSm * sms;
}

}  // namespace qgemm::detail
