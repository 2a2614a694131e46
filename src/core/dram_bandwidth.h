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

}  // namespace qgemm::detail
