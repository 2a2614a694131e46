// CUDA quantize / dequantize. Memory-bound kernels, one launch per call:
//
//   per-token (dynamic) and per-tensor (static): one block per row. Pass 1
//     reduces the row's statistics (amax, or min/max) across the block; pass 2
//     reads the row again (an L2 hit: a row is at most a few tens of KB) and
//     writes q. 16-byte loads when the row start, row stride and H allow.
//   per-group (dynamic): one warp per group of `group_size` elements; the
//     statistics are a warp-shuffle reduction.
//   dequantize: one block per row, element scale chosen by its group.
//
// The scalar math is quant/quant_math.h, shared with the CPU backend, so the
// results are bit-identical.
#include <algorithm>

#include "core/cuda_check.h"
#include "quant/cuda/float_access.cuh"
#include "quant/cuda/quant_cuda.h"
#include "quant/quant_math.h"

namespace qgemm::detail {
namespace {

using namespace quant;

// Threads per block for the row kernels, by hidden size: enough threads to
// keep 16-byte loads in flight, few enough that short rows waste little.
//   H ≤ 1024 → 128, H ≤ 4096 → 256, larger → 512.
int row_block_threads(int64_t hidden) { return hidden <= 1024 ? 128 : hidden <= 4096 ? 256 : 512; }

__device__ __forceinline__ Stats warp_reduce(Stats s) {
#pragma unroll
  for (int offset = 16; offset > 0; offset /= 2) {
    Stats other;
    other.amax = __shfl_xor_sync(0xffffffffu, s.amax, offset);
    other.min = __shfl_xor_sync(0xffffffffu, s.min, offset);
    other.max = __shfl_xor_sync(0xffffffffu, s.max, offset);
    s.merge(other);
  }
  return s;
}

// Statistics of the whole block, returned to every thread.
__device__ Stats block_reduce(Stats s) {
  __shared__ Stats partial[32];
  __shared__ Stats total;
  s = warp_reduce(s);
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (lane == 0) partial[warp] = s;
  __syncthreads();
  if (warp == 0) {
    Stats t = lane < static_cast<int>(blockDim.x / 32) ? partial[lane] : Stats{};
    t = warp_reduce(t);
    if (lane == 0) total = t;
  }
  __syncthreads();
  return total;
}

template <bool kFp8>
__device__ __forceinline__ uint8_t quantize_one(float x, float scale, int32_t zero_point, Range r) {
  if constexpr (kFp8) {
    return quantize_fp8(x, scale);
  } else {
    return static_cast<uint8_t>(quantize_int8(x, scale, zero_point, r));
  }
}

// Applies fn(index, float value) over one row, vectorized when allowed.
template <DType kIn, bool kVectorized, typename Fn>
__device__ __forceinline__ void for_each_in_row(const typename FloatAccess<kIn>::Storage* row,
                                                int64_t hidden, Fn fn) {
  using A = FloatAccess<kIn>;
  if constexpr (kVectorized) {
    for (int64_t i = threadIdx.x * A::kVec; i < hidden; i += blockDim.x * A::kVec) {
      float v[A::kVec];
      load_vector<kIn>(row + i, v);
#pragma unroll
      for (int e = 0; e < A::kVec; ++e) fn(i + e, v[e]);
    }
  } else {
    for (int64_t i = threadIdx.x; i < hidden; i += blockDim.x) fn(i, A::load(row + i));
  }
}

// One block per row: per-token dynamic (kDynamic) or static per-tensor.
template <DType kIn, bool kFp8, bool kDynamic, bool kVectorized>
__global__ void quantize_rows_kernel(const QuantArgs a) {
  using A = FloatAccess<kIn>;
  const int64_t row = blockIdx.x;
  const auto* in = static_cast<const typename A::Storage*>(a.in) + row * a.in_stride;
  uint8_t* out = static_cast<uint8_t*>(a.out) + row * a.out_stride;
  const Range range = range_of(kFp8 ? DType::kFloat8E4M3 : DType::kInt8, a.narrow_range);

  float scale;
  int32_t zero_point = 0;
  if constexpr (kDynamic) {
    Stats stats;
    for_each_in_row<kIn, kVectorized>(in, a.hidden, [&](int64_t, float x) { stats.add(x); });
    stats = block_reduce(stats);
    scale = a.asymmetric ? asymmetric_scale(stats) : symmetric_scale(stats, range);
    if (a.asymmetric) zero_point = asymmetric_zero_point(stats, scale);
    if (threadIdx.x == 0) {
      a.scale[row * a.scale_row_stride] = scale;
      if (a.asymmetric) a.azp[row * a.scale_row_stride] = zero_point;
    }
  } else {
    scale = a.scale[0];
    if (a.azp != nullptr) zero_point = a.azp[0];
  }

  if constexpr (kVectorized) {
    for (int64_t i = threadIdx.x * A::kVec; i < a.hidden; i += blockDim.x * A::kVec) {
      float v[A::kVec];
      load_vector<kIn>(in + i, v);
      ByteVector<A::kVec> q;
#pragma unroll
      for (int e = 0; e < A::kVec; ++e) q.bytes[e] = quantize_one<kFp8>(v[e], scale, zero_point, range);
      *reinterpret_cast<ByteVector<A::kVec>*>(out + i) = q;
    }
  } else {
    for (int64_t i = threadIdx.x; i < a.hidden; i += blockDim.x) {
      out[i] = quantize_one<kFp8>(A::load(in + i), scale, zero_point, range);
    }
  }
}

// One warp per (row, group); grid-stride over all groups.
template <DType kIn, bool kFp8>
__global__ void quantize_groups_kernel(const QuantArgs a) {
  using A = FloatAccess<kIn>;
  const Range range = range_of(kFp8 ? DType::kFloat8E4M3 : DType::kInt8, a.narrow_range);
  const int lane = threadIdx.x % 32;
  const int64_t warps = static_cast<int64_t>(gridDim.x) * (blockDim.x / 32);
  for (int64_t work = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32; work < a.tokens * a.groups;
       work += warps) {
    const int64_t row = work / a.groups, group = work % a.groups;
    const auto* in = static_cast<const typename A::Storage*>(a.in) + row * a.in_stride + group * a.group_size;
    uint8_t* out = static_cast<uint8_t*>(a.out) + row * a.out_stride + group * a.group_size;
    Stats stats;
    for (int64_t i = lane; i < a.group_size; i += 32) stats.add(A::load(in + i));
    stats = warp_reduce(stats);
    const float scale = a.asymmetric ? asymmetric_scale(stats) : symmetric_scale(stats, range);
    const int32_t zero_point = a.asymmetric ? asymmetric_zero_point(stats, scale) : 0;
    if (lane == 0) {
      const int64_t s = row * a.scale_row_stride + group * a.scale_group_stride;
      a.scale[s] = scale;
      if (a.asymmetric) a.azp[s] = zero_point;
    }
    for (int64_t i = lane; i < a.group_size; i += 32) {
      out[i] = quantize_one<kFp8>(A::load(in + i), scale, zero_point, range);
    }
  }
}

template <DType kOut, bool kFp8>
__global__ void dequantize_rows_kernel(const QuantArgs a) {
  using A = FloatAccess<kOut>;
  const int64_t row = blockIdx.x;
  const uint8_t* in = static_cast<const uint8_t*>(a.in) + row * a.in_stride;
  auto* out = static_cast<typename A::Storage*>(a.out) + row * a.out_stride;
  for (int64_t i = threadIdx.x; i < a.hidden; i += blockDim.x) {
    const int64_t s = row * a.scale_row_stride + (i / a.group_size) * a.scale_group_stride;
    float x;
    if constexpr (kFp8) {
      x = dequantize_fp8(in[i], a.scale[s]);
    } else {
      x = dequantize_int8(static_cast<int8_t>(in[i]), a.scale[s], a.azp != nullptr ? a.azp[s] : 0);
    }
    A::store(out + i, x);
  }
}

// True when every row of `in` and `out` can be accessed in 16-byte input vectors.
template <DType kIn>
bool rows_vectorizable(const QuantArgs& a) {
  constexpr int vec = FloatAccess<kIn>::kVec;
  const size_t in_bytes = sizeof(typename FloatAccess<kIn>::Storage);
  return a.hidden % vec == 0 && is_aligned(a.in, 16) && (a.in_stride * in_bytes) % 16 == 0 &&
         is_aligned(a.out, vec) && a.out_stride % vec == 0;
}

template <DType kIn, bool kFp8>
void launch_quantize(const QuantArgs& a, cudaStream_t stream) {
  if (a.mode == QuantMode::kDynamicPerGroup) {
    constexpr int kThreads = 256;
    const int64_t work = a.tokens * a.groups;
    const auto blocks = static_cast<unsigned>(std::min<int64_t>((work + 7) / 8, 65535 * 8));
    quantize_groups_kernel<kIn, kFp8><<<blocks, kThreads, 0, stream>>>(a);
    return;
  }
  const auto grid = static_cast<unsigned>(a.tokens);
  const int threads = row_block_threads(a.hidden);
  const bool vectorized = rows_vectorizable<kIn>(a);
  if (a.mode == QuantMode::kDynamicPerToken) {
    if (vectorized) quantize_rows_kernel<kIn, kFp8, true, true><<<grid, threads, 0, stream>>>(a);
    else quantize_rows_kernel<kIn, kFp8, true, false><<<grid, threads, 0, stream>>>(a);
  } else {
    if (vectorized) quantize_rows_kernel<kIn, kFp8, false, true><<<grid, threads, 0, stream>>>(a);
    else quantize_rows_kernel<kIn, kFp8, false, false><<<grid, threads, 0, stream>>>(a);
  }
}

template <bool kFp8>
void dispatch_quantize(const QuantArgs& a, cudaStream_t stream) {
  switch (a.float_dtype) {
    case DType::kFloat32: return launch_quantize<DType::kFloat32, kFp8>(a, stream);
    case DType::kFloat16: return launch_quantize<DType::kFloat16, kFp8>(a, stream);
    default: return launch_quantize<DType::kBFloat16, kFp8>(a, stream);
  }
}

template <bool kFp8>
void dispatch_dequantize(const QuantArgs& a, cudaStream_t stream) {
  const auto grid = static_cast<unsigned>(a.tokens);
  const int threads = row_block_threads(a.hidden);
  switch (a.float_dtype) {
    case DType::kFloat32: dequantize_rows_kernel<DType::kFloat32, kFp8><<<grid, threads, 0, stream>>>(a); break;
    case DType::kFloat16: dequantize_rows_kernel<DType::kFloat16, kFp8><<<grid, threads, 0, stream>>>(a); break;
    default: dequantize_rows_kernel<DType::kBFloat16, kFp8><<<grid, threads, 0, stream>>>(a); break;
  }
}

void check_grid(const QuantArgs& a, const char* op) {
  if (a.mode != QuantMode::kDynamicPerGroup && a.tokens > 2147483647) {
    throw Error(ErrorKind::kValue, std::string(op) + ": T=" + std::to_string(a.tokens) + " rows exceed the grid limit");
  }
}

}  // namespace

void quantize_cuda(const QuantArgs& a) {
  check_grid(a, "quantize");
  CudaDeviceGuard guard(a.device);
  const auto stream = as_cuda_stream(a.stream);
  if (a.quant_dtype == DType::kFloat8E4M3) dispatch_quantize<true>(a, stream);
  else dispatch_quantize<false>(a, stream);
  QGEMM_CUDA_CHECK(cudaGetLastError());
}

void dequantize_cuda(const QuantArgs& a) {
  check_grid(a, "dequantize");
  CudaDeviceGuard guard(a.device);
  const auto stream = as_cuda_stream(a.stream);
  if (a.quant_dtype == DType::kFloat8E4M3) dispatch_dequantize<true>(a, stream);
  else dispatch_dequantize<false>(a, stream);
  QGEMM_CUDA_CHECK(cudaGetLastError());
}

}  // namespace qgemm::detail
