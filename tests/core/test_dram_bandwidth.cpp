// The peak DRAM bandwidth arithmetic of core/dram_bandwidth.h (the runtime
// query that feeds it: test_dram_bandwidth_cuda.cu).
#include <gtest/gtest.h>

#include "core/dram_bandwidth.h"

namespace qgemm {
namespace {

TEST(DramBandwidth, PeakFromMemoryClockAndBusWidth) {
  EXPECT_EQ(detail::peak_dram_gbps(2619000, 5120), 3352);  // H100 SXM: 2619 MHz, HBM3 5120 bits
  EXPECT_EQ(detail::peak_dram_gbps(3201000, 6144), 4916);  // H200: 3201 MHz, HBM3e 6144 bits
  EXPECT_EQ(detail::peak_dram_gbps(0, 6144), 0);           // an unknown clock: 0, which the launch rules read as unknown
}

TEST(DramBandwidth, FastPerSmDrawsTheLineBetweenH100AndH200) {
  EXPECT_FALSE(detail::dram_fast_per_sm(3352, 132));  // H100 SXM: 25 GB/s per SM
  EXPECT_TRUE(detail::dram_fast_per_sm(4814, 132));   // H200: 36
  EXPECT_FALSE(detail::dram_fast_per_sm(30 * 132, 132));
  EXPECT_TRUE(detail::dram_fast_per_sm(30 * 132 + 1, 132));
  EXPECT_FALSE(detail::dram_fast_per_sm(0, 132));  // unknown
  EXPECT_FALSE(detail::dram_fast_per_sm(4814, 0));
}

}  // namespace
}  // namespace qgemm
