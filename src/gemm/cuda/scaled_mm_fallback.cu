// Fallback CUDA scaled GEMM: a shared-memory tiled kernel with byte loads, so
// it accepts any M, N, K, leading dimension and pointer alignment. Each block
// computes a 64×64 tile of D, each thread 4×4 outputs; K advances 32 at a time.
// Accumulation: int32 for int8 (exact), fp32 for fp8; then the scalar
// epilogue shared with the CPU backend (gemm/epilogue_math.h).
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "core/cuda_check.h"
#include "core/cuda_launch.cuh"
#include "core/numeric.h"
#include "gemm/cuda/scaled_mm_fallback.h"
#include "gemm/epilogue_math.h"

namespace qgemm::detail {
namespace {

constexpr int kTileM = 64, kTileN = 64, kTileK = 32;
constexpr int kThreadsX = 16, kThreadsY = 16;  // 256 threads, 4×4 outputs each

template <typename Acc>
__device__ __forceinline__ Acc widen(uint8_t raw);
template <>
__device__ __forceinline__ int32_t widen<int32_t>(uint8_t raw) {
  return static_cast<int8_t>(raw);
}
template <>
__device__ __forceinline__ float widen<float>(uint8_t raw) {
  return numeric::fp8e4m3_bits_to_float(raw);
}

__device__ __forceinline__ float load_out_dtype(const void* base, int64_t i, DType dtype) {
  const uint16_t bits = static_cast<const uint16_t*>(base)[i];
  return dtype == DType::kBFloat16 ? numeric::bf16_bits_to_float(bits)
                                   : numeric::fp16_bits_to_float(bits);
}

__device__ __forceinline__ void store_out_dtype(void* base, int64_t i, DType dtype, float v) {
  static_cast<uint16_t*>(base)[i] = dtype == DType::kBFloat16 ? numeric::float_to_bf16_bits(v)
                                                              : numeric::float_to_fp16_bits(v);
}

template <typename Acc>
__global__ void __launch_bounds__(kThreadsX* kThreadsY)
    scaled_mm_tiled_kernel(const ScaledMmArgs args) {
  wait_for_preceding_grids();
  allow_dependent_launch();
  // Tiles are stored K-major with one element of padding against bank conflicts.
  __shared__ Acc a_tile[kTileM][kTileK + 1];
  __shared__ Acc b_tile[kTileN][kTileK + 1];

  const auto* a = static_cast<const uint8_t*>(args.a);
  const auto* b = static_cast<const uint8_t*>(args.b);
  const int64_t row0 = static_cast<int64_t>(blockIdx.y) * kTileM;
  const int64_t col0 = static_cast<int64_t>(blockIdx.x) * kTileN;
  const int tid = threadIdx.y * kThreadsX + threadIdx.x;

  Acc acc[4][4] = {};
  for (int64_t k0 = 0; k0 < args.k; k0 += kTileK) {
    for (int i = tid; i < kTileM * kTileK; i += kThreadsX * kThreadsY) {
      const int r = i / kTileK, kk = i % kTileK;
      const int64_t row = row0 + r, k = k0 + kk;
      a_tile[r][kk] = (row < args.m && k < args.k) ? widen<Acc>(a[row * args.lda + k]) : Acc(0);
      const int64_t col = col0 + r;
      b_tile[r][kk] = (col < args.n && k < args.k) ? widen<Acc>(b[col * args.ldb + k]) : Acc(0);
    }
    __syncthreads();
#pragma unroll 4
    for (int kk = 0; kk < kTileK; ++kk) {
      Acc a_frag[4], b_frag[4];
#pragma unroll
      for (int i = 0; i < 4; ++i) a_frag[i] = a_tile[threadIdx.y + i * kThreadsY][kk];
#pragma unroll
      for (int j = 0; j < 4; ++j) b_frag[j] = b_tile[threadIdx.x + j * kThreadsX][kk];
#pragma unroll
      for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j) acc[i][j] += a_frag[i] * b_frag[j];
    }
    __syncthreads();
  }

#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const int64_t row = row0 + threadIdx.y + i * kThreadsY;
    if (row >= args.m) continue;
    const float sa = args.scale_a[args.scale_a_per_token ? row : 0];
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      const int64_t col = col0 + threadIdx.x + j * kThreadsX;
      if (col >= args.n) continue;
      float accumulator;
      if constexpr (std::is_same_v<Acc, int32_t>) {
        uint32_t corrected = static_cast<uint32_t>(acc[i][j]);
        if (args.azp_adj != nullptr) {
          const uint32_t zero_point = static_cast<uint32_t>(args.azp ? args.azp[row] : 1);
          corrected -= zero_point * static_cast<uint32_t>(args.azp_adj[col]);
        }
        accumulator = static_cast<float>(static_cast<int32_t>(corrected));
      } else {
        accumulator = acc[i][j];
      }
      const float sb = args.scale_b[args.scale_b_per_channel ? col : 0];
      const float bias = args.bias ? load_out_dtype(args.bias, col, args.out_dtype) : 0.0f;
      store_out_dtype(args.out, row * args.ldo + col, args.out_dtype,
                      dequant_epilogue(accumulator, sa, sb, bias, args.bias != nullptr));
    }
  }
}

}  // namespace

void scaled_mm_fallback_cuda(const ScaledMmArgs& args) {
  const dim3 block(kThreadsX, kThreadsY);
  const dim3 grid(static_cast<unsigned>((args.n + kTileN - 1) / kTileN),
                  static_cast<unsigned>((args.m + kTileM - 1) / kTileM));
  if (grid.y > 65535u) {
    throw Error(ErrorKind::kValue, "scaled_mm: M=" + std::to_string(args.m) +
                                       " is too large for the fallback kernel's grid");
  }
  auto stream = as_cuda_stream(args.stream);
  if (args.input_dtype == DType::kInt8) {
    launch_pdl_kernel(scaled_mm_tiled_kernel<int32_t>, grid, block, 0, stream, args.device.index, args);
  } else {
    launch_pdl_kernel(scaled_mm_tiled_kernel<float>, grid, block, 0, stream, args.device.index, args);
  }
}

}  // namespace qgemm::detail
