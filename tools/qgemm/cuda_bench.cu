// GPU timing helpers of cuda_bench.h.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "core/cuda_dram_bandwidth.h"
#include "core/numeric.h"
#include "cuda_bench.h"

namespace qgemm::tools::cuda {

void check(cudaError_t status, const char* what) {
  if (status != cudaSuccess) {
    throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(status));
  }
}

std::string device_name(int device) {
  cudaDeviceProp prop{};
  check(cudaGetDeviceProperties(&prop, device), "cudaGetDeviceProperties");
  return std::string(prop.name) + " (sm_" + std::to_string(prop.major) + std::to_string(prop.minor) +
         ", " + std::to_string(prop.multiProcessorCount) + " SMs)";
}

int peak_dram_gbps(int device) { return static_cast<int>(detail::cuda_peak_dram_gbps(device)); }

size_t l2_bytes(int device) {
  int bytes = 0;
  check(cudaDeviceGetAttribute(&bytes, cudaDevAttrL2CacheSize, device), "L2 size");
  return static_cast<size_t>(bytes);
}

DeviceBuffer::DeviceBuffer(size_t bytes) : bytes_(bytes) {
  if (bytes > 0) check(cudaMalloc(&data_, bytes), "cudaMalloc");
}
DeviceBuffer::~DeviceBuffer() {
  if (data_ != nullptr) cudaFree(data_);
}
DeviceBuffer::DeviceBuffer(DeviceBuffer&& other) noexcept : data_(other.data_), bytes_(other.bytes_) {
  other.data_ = nullptr;
  other.bytes_ = 0;
}
DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& other) noexcept {
  std::swap(data_, other.data_);
  std::swap(bytes_, other.bytes_);
  return *this;
}

namespace {

__device__ uint64_t splitmix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

__global__ void fill_random_kernel(void* data, DType dtype, size_t count, double lo, double hi,
                                   uint64_t seed) {
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<size_t>(gridDim.x) * blockDim.x) {
    const uint64_t r = splitmix64(seed ^ (i * 0x2545f4914f6cdd1dull));
    const double unit = static_cast<double>(r >> 11) * (1.0 / 9007199254740992.0);  // [0, 1)
    const double value = lo + unit * (hi - lo);
    switch (dtype) {
      case DType::kInt8:
        static_cast<int8_t*>(data)[i] = static_cast<int8_t>(lo + static_cast<double>(r % static_cast<uint64_t>(hi - lo + 1)));
        break;
      case DType::kUInt8:
        static_cast<uint8_t*>(data)[i] = static_cast<uint8_t>(lo + static_cast<double>(r % static_cast<uint64_t>(hi - lo + 1)));
        break;
      case DType::kInt32:
        static_cast<int32_t*>(data)[i] = static_cast<int32_t>(lo + static_cast<double>(r % static_cast<uint64_t>(hi - lo + 1)));
        break;
      case DType::kInt64:
        static_cast<int64_t*>(data)[i] = static_cast<int64_t>(lo + static_cast<double>(r % static_cast<uint64_t>(hi - lo + 1)));
        break;
      case DType::kFloat8E4M3:
        static_cast<uint8_t*>(data)[i] = numeric::float_to_fp8e4m3_bits(static_cast<float>(value));
        break;
      case DType::kFloat16:
        static_cast<uint16_t*>(data)[i] = numeric::float_to_fp16_bits(static_cast<float>(value));
        break;
      case DType::kBFloat16:
        static_cast<uint16_t*>(data)[i] = numeric::float_to_bf16_bits(static_cast<float>(value));
        break;
      case DType::kFloat32:
        static_cast<float*>(data)[i] = static_cast<float>(value);
        break;
    }
  }
}

}  // namespace

void fill_random(void* data, DType dtype, size_t count, double lo, double hi, uint64_t seed,
                 cudaStream_t stream) {
  if (count == 0) return;
  const unsigned blocks = static_cast<unsigned>(std::min<size_t>((count + 255) / 256, 65535));
  fill_random_kernel<<<blocks, 256, 0, stream>>>(data, dtype, count, lo, hi, seed);
  check(cudaGetLastError(), "fill_random");
}

int rotation_sets(size_t bytes_per_set, int max_sets) {
  const size_t target = 3 * l2_bytes();
  const size_t sets = bytes_per_set == 0 ? 1 : (target + bytes_per_set - 1) / bytes_per_set;
  return static_cast<int>(std::clamp<size_t>(sets, 1, static_cast<size_t>(max_sets)));
}

namespace {

// Enqueues launch(first) … launch(first + runs − 1), each between two CUDA
// events, on `stream`; `collect` waits for them and returns the intervals.
class TimedBlock {
 public:
  TimedBlock(const std::function<void(int)>& launch, cudaStream_t stream, int first, int runs) : events_(2 * runs) {
    for (auto& e : events_) check(cudaEventCreate(&e), "cudaEventCreate");
    for (int i = 0; i < runs; ++i) {
      check(cudaEventRecord(events_[2 * i], stream), "cudaEventRecord");
      launch(first + i);
      check(cudaEventRecord(events_[2 * i + 1], stream), "cudaEventRecord");
    }
  }
  ~TimedBlock() {
    for (auto& e : events_) cudaEventDestroy(e);
  }
  TimedBlock(const TimedBlock&) = delete;
  TimedBlock& operator=(const TimedBlock&) = delete;
  TimingStats collect() {
    check(cudaEventSynchronize(events_.back()), "cudaEventSynchronize");
    check(cudaGetLastError(), "timed launches");
    std::vector<double> samples(events_.size() / 2);
    for (size_t i = 0; i < samples.size(); ++i) {
      float ms = 0;
      check(cudaEventElapsedTime(&ms, events_[2 * i], events_[2 * i + 1]), "cudaEventElapsedTime");
      samples[i] = ms * 1e3;
    }
    return summarize(samples);
  }

 private:
  std::vector<cudaEvent_t> events_;
};

}  // namespace

TimingStats time_cuda(const std::function<void(int)>& launch, cudaStream_t stream, int warmup,
                      int runs) {
  for (int i = 0; i < warmup; ++i) launch(i);
  return TimedBlock(launch, stream, warmup, runs).collect();
}

namespace {

__global__ void spin_kernel(uint64_t ns) {
  uint64_t start, now;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  do {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  } while (now - start < ns);
}

}  // namespace

void spin(uint64_t ns, cudaStream_t stream) {
  spin_kernel<<<1, 1, 0, stream>>>(ns);
  check(cudaGetLastError(), "spin");
}

namespace {
int cooldown_ms = 0;
}  // namespace

void set_cooldown_ms(int ms) { cooldown_ms = std::max(0, ms); }

TimingStats time_cuda_device(const std::function<void(int)>& launch, cudaStream_t stream, int warmup,
                             int runs) {
  if (cooldown_ms > 0) {
    check(cudaStreamSynchronize(stream), "cooldown");
    std::this_thread::sleep_for(std::chrono::milliseconds(cooldown_ms));
  }
  for (int i = 0; i < warmup; ++i) launch(i);
  // The spin must outlast the host's enqueueing of the timed launches: if it
  // ends first, the GPU waits for the host between launches and the
  // intervals include the launch cost (a 13 µs GEMM read 138 µs for a whole
  // block after a --cooldown pause). Checked once all are enqueued; if the
  // spin had already finished, the block is timed again behind a spin four
  // times as long.
  cudaEvent_t spun;
  check(cudaEventCreateWithFlags(&spun, cudaEventDisableTiming), "cudaEventCreate");
  uint64_t spin_ns = 2'000'000 + 30'000 * static_cast<uint64_t>(runs);  // 30 µs of host time per run
  int next = warmup;
  TimingStats stats;
  for (int attempt = 0; attempt < 4; ++attempt, spin_ns *= 4, next += runs) {
    spin(spin_ns, stream);
    check(cudaEventRecord(spun, stream), "cudaEventRecord");
    TimedBlock block(launch, stream, next, runs);
    const cudaError_t spinning = cudaEventQuery(spun);
    if (spinning == cudaErrorNotReady) {
      // "Not ready" is a status: clear it if the runtime kept it as the last
      // error, and leave any other error for collect() to report.
      if (cudaPeekAtLastError() == cudaErrorNotReady) (void)cudaGetLastError();
    } else {
      check(spinning, "cudaEventQuery");
    }
    stats = block.collect();
    if (spinning == cudaErrorNotReady) break;
    std::fprintf(stderr, "time_cuda_device: the %.1f ms spin ended before the timed launches were queued; timing again\n",
                 static_cast<double>(spin_ns) * 1e-6);
  }
  cudaEventDestroy(spun);
  return stats;
}

double copy_bandwidth_gbps(size_t bytes, cudaStream_t stream, int warmup, int runs) {
  // Half an op's traffic is often an odd byte count (a static scale adds 4
  // bytes to T·H·3); copied exactly, every rotated set but the first would
  // start at an unaligned address. Rounded up to whole 256-byte blocks.
  bytes = (bytes + 255) / 256 * 256;
  const int sets = rotation_sets(2 * bytes);  // cold reads, as for the ops quoted against it
  DeviceBuffer src(bytes * sets), dst(bytes * sets);
  fill_random(src.get(), DType::kInt8, bytes * sets, -128, 127, 1, stream);
  const auto stats = time_cuda_device(
      [&](int i) {
        const size_t offset = bytes * static_cast<size_t>(i % sets);
        check(cudaMemcpyAsync(dst.as<uint8_t>() + offset, src.as<uint8_t>() + offset, bytes,
                              cudaMemcpyDeviceToDevice, stream),
              "copy");
      },
      stream, warmup, runs);
  return 2.0 * static_cast<double>(bytes) / (stats.median_us * 1e3);
}

double record_copy_bandwidth(BenchReport& report, cudaStream_t stream) {
  constexpr size_t kBytes = size_t(1) << 30;
  constexpr int kRuns = 20;
  const double gbps = copy_bandwidth_gbps(kBytes, stream, 3, kRuns);
  BenchRecord record;
  record.op = "copy";
  record.impl = "cudaMemcpy-d2d";
  record.shape = "1GiB";
  record.device = "cuda";
  record.bytes = 2.0 * kBytes;
  record.median_us = record.bytes / (gbps * 1e3);
  record.runs = kRuns;
  record.extra["copy_gbps"] = gbps;
  report.add(record);
  return gbps;
}

}  // namespace qgemm::tools::cuda
