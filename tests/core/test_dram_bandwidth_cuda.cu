// The peak DRAM bandwidth launch rules read (core/cuda_dram_bandwidth.h) is
// cached per device: it must give back what the runtime's memory clock and
// bus width say, on the first call and on the cached ones.
#include <gtest/gtest.h>

#include "common/test_util.h"
#include "core/cuda_dram_bandwidth.h"

namespace qgemm::test {
namespace {

int attribute(cudaDeviceAttr what, int device) {
  int value = 0;
  EXPECT_EQ(cudaDeviceGetAttribute(&value, what, device), cudaSuccess);
  return value;
}

TEST(CudaDramBandwidth, MatchesTheRuntimeOnEveryCall) {
  QGEMM_SKIP_WITHOUT_GPU();
  int devices = 0;
  ASSERT_EQ(cudaGetDeviceCount(&devices), cudaSuccess);
  for (int d = 0; d < devices; ++d) {
    const int64_t gbps = detail::peak_dram_gbps(attribute(cudaDevAttrMemoryClockRate, d),
                                                attribute(cudaDevAttrGlobalMemoryBusWidth, d));
    EXPECT_GT(gbps, 100) << "device " << d;
    for (int call = 0; call < 2; ++call) {  // the first reads the runtime, the second the cache
      EXPECT_EQ(detail::cuda_peak_dram_gbps(d), gbps) << "device " << d << ", call " << call;
    }
  }
}

}  // namespace
}  // namespace qgemm::test
