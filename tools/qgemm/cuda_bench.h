// cuda_bench.h — GPU timing for `qgemm bench`: CUDA events around each run,
// warm-up, median of many runs, inputs rotated across several copies so the
// working set exceeds L2, device-side random fills (never zeros) and the
// measured device-to-device copy bandwidth that bandwidth figures are quoted
// against.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

#include "bench_common.h"
#include "qgemm/tensor.h"

namespace qgemm::tools::cuda {

void check(cudaError_t status, const char* what);

std::string device_name(int device = 0);
size_t l2_bytes(int device = 0);
// Peak DRAM bandwidth in GB/s, as the library's launch rules read it (core/cuda_dram_bandwidth.h).
int peak_dram_gbps(int device = 0);

// Owning device allocation for benchmarks and demos (never in library code).
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(size_t bytes);
  ~DeviceBuffer();
  DeviceBuffer(DeviceBuffer&& other) noexcept;
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  void* get() const { return data_; }
  template <typename T>
  T* as() const { return static_cast<T*>(data_); }
  size_t bytes() const { return bytes_; }

 private:
  void* data_ = nullptr;
  size_t bytes_ = 0;
};

// Fills `count` elements of `dtype` with seeded pseudo-random values:
// integers uniform in [lo, hi]; floats uniform in [lo, hi] (fp8 rounded).
void fill_random(void* data, DType dtype, size_t count, double lo, double hi, uint64_t seed,
                 cudaStream_t stream = nullptr);

// How many copies of a `bytes_per_set` input set make the rotated working set
// at least 3× the L2 cache (at least 1, at most `max_sets`).
int rotation_sets(size_t bytes_per_set, int max_sets = 64);

// Times launch(iteration) on `stream`: `warmup` untimed runs, then `runs`
// runs each between two CUDA events; returns the median and minimum.
TimingStats time_cuda(const std::function<void(int)>& launch, cudaStream_t stream, int warmup,
                      int runs);

// Enqueues one kernel that spins for `ns` nanoseconds.
void spin(uint64_t ns, cudaStream_t stream);

// An idle pause, in milliseconds, before every time_cuda_device (a
// benchmark's --cooldown; 0 by default). The GPU's clock follows its power
// draw and temperature over milliseconds to seconds: without a pause, an
// implementation timed right after a hotter one starts at a lower clock.
void set_cooldown_ms(int ms);

// Device time of launch(iteration): after the cooldown (set_cooldown_ms),
// `warmup` untimed runs, then the `runs` timed launches (each between two
// CUDA events) are queued behind a spin
// kernel that outlasts their host-side enqueueing, so they run back to back
// and the events measure the GPU, not the host's launch overhead. Whether
// the spin outlasted the enqueueing is checked; if not, the block is timed
// again behind a longer spin.
TimingStats time_cuda_device(const std::function<void(int)>& launch, cudaStream_t stream, int warmup,
                             int runs);

// Device-to-device copy of `bytes` (rotated across copies past L2, device
// time): returns (bytes read + bytes written) / time in GB/s. The 1 GiB copy
// is the reference every bandwidth figure is quoted against; a copy of an
// op's own traffic is the floor any single launch of that size has.
double copy_bandwidth_gbps(size_t bytes, cudaStream_t stream, int warmup = 3, int runs = 20);

// Measures the 1 GiB device copy bandwidth, adds it to `report` as the
// "copy" record every bandwidth figure of the run is quoted against, and
// returns it in GB/s.
double record_copy_bandwidth(BenchReport& report, cudaStream_t stream);

}  // namespace qgemm::tools::cuda
