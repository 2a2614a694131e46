// cuda_device_cache.h — a figure of a CUDA device that launch decisions read
// (cuda_device_info.h, cuda_dram_bandwidth.h), queried from the runtime on
// the first call for a device and cached, so that dispatching a call makes
// no runtime queries.
#pragma once

#include <atomic>
#include <cstdint>

namespace qgemm::detail {

// Query(device) on the first call for a device, then the cached value (one
// cache per Query; values 0 … 2^63 − 2). Devices past the cache's 64 are
// queried on every call. Concurrent first calls may each query: they store
// the same value.
template <int64_t (*Query)(int)>
int64_t cached_per_device(int device) {
  static std::atomic<int64_t> cache[64];  // value + 1; 0 = not read yet
  const bool cached = device >= 0 && device < 64;
  int64_t value = cached ? cache[device].load(std::memory_order_relaxed) - 1 : -1;
  if (value < 0) {
    value = Query(device);
    if (cached) cache[device].store(value + 1, std::memory_order_relaxed);
  }
  return value;
}

}  // namespace qgemm::detail
