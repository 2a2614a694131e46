// What launch decisions read about a device (core/cuda_device_info.h) is
// cached packed in one 64-bit word per device: it must give back exactly
// what the runtime reports, on every call.
#include <gtest/gtest.h>

#include "common/test_util.h"
#include "core/cuda_device_info.h"

namespace qgemm::test {
namespace {

int attribute(cudaDeviceAttr what, int device) {
  int value = 0;
  EXPECT_EQ(cudaDeviceGetAttribute(&value, what, device), cudaSuccess);
  return value;
}

TEST(CudaDeviceInfo, MatchesTheRuntimeOnEveryCall) {
  QGEMM_SKIP_WITHOUT_GPU();
  int devices = 0;
  ASSERT_EQ(cudaGetDeviceCount(&devices), cudaSuccess);
  for (int d = 0; d < devices; ++d) {
    const int64_t gbps = detail::peak_dram_gbps(attribute(cudaDevAttrMemoryClockRate, d),
                                                attribute(cudaDevAttrGlobalMemoryBusWidth, d));
    EXPECT_GT(gbps, 100) << "device " << d;
    for (int call = 0; call < 2; ++call) {  // the first reads the runtime, the second the cache
      const detail::CudaDeviceInfo info = detail::cuda_device_info(d);
      EXPECT_EQ(info.major, attribute(cudaDevAttrComputeCapabilityMajor, d)) << "device " << d;
      EXPECT_EQ(info.minor, attribute(cudaDevAttrComputeCapabilityMinor, d)) << "device " << d;
      EXPECT_EQ(info.sm_count, attribute(cudaDevAttrMultiProcessorCount, d)) << "device " << d;
      EXPECT_EQ(info.dram_gbps, gbps) << "device " << d;
    }
  }
}

}  // namespace
}  // namespace qgemm::test
