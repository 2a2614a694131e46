// CUDA dispatch of weight_only_mm by the number of tokens M (the table below),
// and the CUDA weight prepacking.
//
// Instantiations: 2 dtypes (bf16, fp16) × 2 weights (int4, int8) × 4 rows of
// the table = 16 kernels, plus one prepack kernel. The gemv rows' block
// shapes per weight type (measured, issue 7) are at `launch` in wonly_gemv.cu.
#include <algorithm>
#include <cstdint>

#include "core/cuda_check.h"
#include "wonly/cuda/wonly_cuda.h"

namespace qgemm::detail {
namespace {

enum class WonlyKernel { kGemv, kMma };

struct WonlyConfig {
  int64_t max_m;       // rows with M ≤ max_m (first match wins)
  WonlyKernel kernel;
  int tile;            // gemv: n8 token blocks; mma: tokens per block tile
  const char* why;
};

// clang-format off
constexpr WonlyConfig kConfigs[] = {
  {8,  WonlyKernel::kGemv, 1,   "decode: one n8 token block; weight streamed once, HFMA2 dequant, tensor cores "
                                "multiply (int4: 32-row blocks, int8: 16-row blocks at 3 blocks/SM)"},
  {16, WonlyKernel::kGemv, 2,   "two n8 token blocks share every dequantized weight register; int4 64-row "
                                "blocks so fewer blocks re-read the activations from L2"},
  {64, WonlyKernel::kMma,  64,  "64-token tile: little padding waste for 17..64 tokens"},
  {INT64_MAX, WonlyKernel::kMma, 128, "128×128 tile: each dequantized weight feeds 128 tokens"},
};
// clang-format on

// out[tile(row, c)] = w[row, chunk c]: one thread per 16-byte chunk.
__global__ void prepack_kernel(uint8_t* out, const uint8_t* w, int64_t n, int64_t chunks,
                               int64_t ld_bytes, WeightAddressing addr) {
  const int64_t total = n * chunks;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t row = i / chunks, c = i % chunks;
    alignas(16) uint8_t bytes[16];
    for (int b = 0; b < 16; ++b) bytes[b] = w[row * ld_bytes + c * 16 + b];  // any alignment
    *reinterpret_cast<uint4*>(out + addr.chunk_offset(row, c)) = *reinterpret_cast<uint4*>(bytes);
  }
}

}  // namespace

void weight_only_mm_cuda(const WeightOnlyArgs& args) {
  CudaDeviceGuard guard(args.device);
  for (const WonlyConfig& config : kConfigs) {
    if (args.m > config.max_m) continue;
    if (config.kernel == WonlyKernel::kGemv) launch_wonly_gemv(args, config.tile);
    else launch_wonly_mma(args, config.tile);
    return;
  }
}

void weight_only_prepack_cuda(uint8_t* out, const uint8_t* w, int64_t n, int64_t k,
                              int64_t ld_bytes, bool int4, Device device, Stream stream) {
  CudaDeviceGuard guard(device);
  const int64_t kc = int4 ? 128 : 64;
  const int64_t k_tiles = (k + kc - 1) / kc;
  const int64_t bytes = (n + 15) / 16 * k_tiles * 1024;
  cudaStream_t s = as_cuda_stream(stream);
  QGEMM_CUDA_CHECK(cudaMemsetAsync(out, 0, static_cast<size_t>(bytes), s));  // padding
  const int64_t chunks = k / (int4 ? 32 : 16);
  const int64_t total = n * chunks;
  const auto blocks = static_cast<unsigned>(std::min<int64_t>((total + 255) / 256, 65535));
  prepack_kernel<<<blocks, 256, 0, s>>>(out, w, n, chunks, ld_bytes, prepacked_addressing(k_tiles));
  QGEMM_CUDA_CHECK(cudaGetLastError());
}

}  // namespace qgemm::detail
