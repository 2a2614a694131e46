// The per-device cache behind cuda_device_info and cuda_peak_dram_gbps
// (core/cuda_device_cache.h), with fake queries: each device is queried once
// and then read from the cache, each query keeps its own cache, a value of 0
// is cached like any other, and devices past the cache are queried every time.
#include <gtest/gtest.h>

#include <cstdint>

#include "core/cuda_device_cache.h"

namespace qgemm::test {
namespace {

int g_queries = 0;
int64_t device_times_ten(int device) {
  ++g_queries;
  return int64_t{device} * 10;
}
int g_other_queries = 0;
int64_t device_plus_big(int device) {
  ++g_other_queries;
  return (int64_t{1} << 62) + device;
}

TEST(CudaDeviceCache, QueriesEachDeviceOnce) {
  g_queries = 0;
  for (int call = 0; call < 3; ++call) {
    for (int device = 0; device < 4; ++device) {
      EXPECT_EQ(detail::cached_per_device<device_times_ten>(device), device * 10) << "call " << call;
    }
  }
  EXPECT_EQ(g_queries, 4);  // device 0's value, 0, is cached too
  // A cache of its own per query.
  g_other_queries = 0;
  EXPECT_EQ(detail::cached_per_device<device_plus_big>(2), (int64_t{1} << 62) + 2);
  EXPECT_EQ(detail::cached_per_device<device_plus_big>(2), (int64_t{1} << 62) + 2);
  EXPECT_EQ(g_other_queries, 1);
  EXPECT_EQ(detail::cached_per_device<device_times_ten>(2), 20);
  // Past the 64 cached devices (and negative ones): queried on every call.
  g_queries = 0;
  EXPECT_EQ(detail::cached_per_device<device_times_ten>(64), 640);
  EXPECT_EQ(detail::cached_per_device<device_times_ten>(64), 640);
  EXPECT_EQ(detail::cached_per_device<device_times_ten>(-1), -10);
  EXPECT_EQ(g_queries, 3);
}

}  // namespace
}  // namespace qgemm::test
