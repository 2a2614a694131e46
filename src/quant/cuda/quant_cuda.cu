// CUDA quantize / dequantize. Memory-bound kernels, one launch per call:
//
//   per-token (dynamic): one block per row. When the row can be read in
//     16-byte vectors and fits in registers (≤ kCachedVectors vectors per
//     thread, i.e. H ≤ 32768 bf16), each thread loads its vectors once, the
//     block reduces the statistics (amax, or min/max) and the same registers
//     are quantized: one DRAM read of x. Otherwise pass 1 reduces and pass 2
//     reads the row again (an L2 hit) — any H, any alignment.
//   per-tensor (static): one block per row, a single pass.
//   per-group (dynamic): each thread holds one 16-byte vector and the
//     group_size / vector lanes that share a group reduce with shuffles (any
//     alignment or group size falls back to one warp per group, scalar).
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

// Per-token dynamic with the row held in registers: thread i owns vectors
// i, i + blockDim, … (at most kCachedVectors of them).
constexpr int kCachedVectors = 4;

template <DType kIn, bool kFp8>
__global__ void quantize_rows_cached_kernel(const QuantArgs a) {
  using A = FloatAccess<kIn>;
  const int64_t row = blockIdx.x;
  const auto* in = static_cast<const typename A::Storage*>(a.in) + row * a.in_stride;
  uint8_t* out = static_cast<uint8_t*>(a.out) + row * a.out_stride;
  const Range range = range_of(kFp8 ? DType::kFloat8E4M3 : DType::kInt8, a.narrow_range);

  float v[kCachedVectors][A::kVec];
  Stats stats;
#pragma unroll
  for (int j = 0; j < kCachedVectors; ++j) {
    const int64_t i = (threadIdx.x + j * static_cast<int64_t>(blockDim.x)) * A::kVec;
    if (i < a.hidden) {
      load_vector<kIn>(in + i, v[j]);
#pragma unroll
      for (int e = 0; e < A::kVec; ++e) stats.add(v[j][e]);
    }
  }
  stats = block_reduce(stats);
  const float scale = a.asymmetric ? asymmetric_scale(stats) : symmetric_scale(stats, range);
  const int32_t zero_point = a.asymmetric ? asymmetric_zero_point(stats, scale) : 0;
  if (threadIdx.x == 0) {
    a.scale[row * a.scale_row_stride] = scale;
    if (a.asymmetric) a.azp[row * a.scale_row_stride] = zero_point;
  }
#pragma unroll
  for (int j = 0; j < kCachedVectors; ++j) {
    const int64_t i = (threadIdx.x + j * static_cast<int64_t>(blockDim.x)) * A::kVec;
    if (i < a.hidden) {
      ByteVector<A::kVec> q;
#pragma unroll
      for (int e = 0; e < A::kVec; ++e) q.bytes[e] = quantize_one<kFp8>(v[j][e], scale, zero_point, range);
      *reinterpret_cast<ByteVector<A::kVec>*>(out + i) = q;
    }
  }
}

// Per-group with one 16-byte vector per thread: `lanes` = group_size / kVec
// consecutive lanes (a power of two ≤ 32) share a group; grid-stride over
// all (row, group) pairs.
template <DType kIn, bool kFp8>
__global__ void quantize_groups_vector_kernel(const QuantArgs a, int lanes) {
  using A = FloatAccess<kIn>;
  const Range range = range_of(kFp8 ? DType::kFloat8E4M3 : DType::kInt8, a.narrow_range);
  const int64_t slots = static_cast<int64_t>(gridDim.x) * blockDim.x;
  const int64_t vectors = a.tokens * a.hidden / A::kVec;
  // Every thread of a warp runs the same number of iterations (the shuffles
  // need all 32): the loop bound is rounded up to whole grid strides.
  for (int64_t v = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; v - threadIdx.x % 32 < vectors;
       v += slots) {
    const bool active = v < vectors;
    const int64_t row = active ? v / (a.hidden / A::kVec) : 0;
    const int64_t i = active ? (v % (a.hidden / A::kVec)) * A::kVec : 0;
    const auto* in = static_cast<const typename A::Storage*>(a.in) + row * a.in_stride + i;
    float x[A::kVec];
    Stats stats;
    if (active) {
      load_vector<kIn>(in, x);
#pragma unroll
      for (int e = 0; e < A::kVec; ++e) stats.add(x[e]);
    }
    for (int offset = lanes / 2; offset > 0; offset /= 2) {
      Stats other;
      other.amax = __shfl_xor_sync(0xffffffffu, stats.amax, offset);
      other.min = __shfl_xor_sync(0xffffffffu, stats.min, offset);
      other.max = __shfl_xor_sync(0xffffffffu, stats.max, offset);
      stats.merge(other);
    }
    if (!active) continue;
    const float scale = a.asymmetric ? asymmetric_scale(stats) : symmetric_scale(stats, range);
    const int32_t zero_point = a.asymmetric ? asymmetric_zero_point(stats, scale) : 0;
    const int64_t group = i / a.group_size;
    if (i % a.group_size == 0) {
      const int64_t s = row * a.scale_row_stride + group * a.scale_group_stride;
      a.scale[s] = scale;
      if (a.asymmetric) a.azp[s] = zero_point;
    }
    ByteVector<A::kVec> q;
#pragma unroll
    for (int e = 0; e < A::kVec; ++e) q.bytes[e] = quantize_one<kFp8>(x[e], scale, zero_point, range);
    *reinterpret_cast<ByteVector<A::kVec>*>(static_cast<uint8_t*>(a.out) + row * a.out_stride + i) = q;
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

// One block per row. Vectorized: kVec quantized bytes in, one 16-byte vector
// out per step, one scale per vector (group_size is a multiple of kVec).
template <DType kOut, bool kFp8, bool kVectorized>
__global__ void dequantize_rows_kernel(const QuantArgs a) {
  using A = FloatAccess<kOut>;
  constexpr int kStep = kVectorized ? A::kVec : 1;
  const int64_t row = blockIdx.x;
  const uint8_t* in = static_cast<const uint8_t*>(a.in) + row * a.in_stride;
  auto* out = static_cast<typename A::Storage*>(a.out) + row * a.out_stride;
  for (int64_t i = threadIdx.x * kStep; i < a.hidden; i += blockDim.x * kStep) {
    const int64_t s = row * a.scale_row_stride + (i / a.group_size) * a.scale_group_stride;
    const float scale = a.scale[s];
    const int32_t zero_point = !kFp8 && a.azp != nullptr ? a.azp[s] : 0;
    ByteVector<kStep> q = *reinterpret_cast<const ByteVector<kStep>*>(in + i);
    alignas(16) typename A::Storage x[kStep];
#pragma unroll
    for (int e = 0; e < kStep; ++e) {
      float v;
      if constexpr (kFp8) {
        v = dequantize_fp8(q.bytes[e], scale);
      } else {
        v = dequantize_int8(static_cast<int8_t>(q.bytes[e]), scale, zero_point);
      }
      A::store(x + e, v);
    }
    if constexpr (kVectorized) {
      *reinterpret_cast<uint4*>(out + i) = *reinterpret_cast<const uint4*>(x);
    } else {
      out[i] = x[0];
    }
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

// Threads for the register-cached row kernel: enough that kCachedVectors
// vectors each cover the row, a multiple of 32, at most 1024; 0 when the row
// does not fit (then the two-pass kernel runs).
template <DType kIn>
int cached_row_threads(int64_t hidden) {
  const int64_t vectors = hidden / FloatAccess<kIn>::kVec;
  const int64_t threads = ((vectors + kCachedVectors - 1) / kCachedVectors + 31) / 32 * 32;
  return threads <= 1024 ? static_cast<int>(std::max<int64_t>(threads, 32)) : 0;
}

template <DType kIn, bool kFp8>
void launch_quantize(const QuantArgs& a, cudaStream_t stream) {
  const bool vectorized = rows_vectorizable<kIn>(a);
  if (a.mode == QuantMode::kDynamicPerGroup) {
    constexpr int vec = FloatAccess<kIn>::kVec;
    const int64_t lanes = a.group_size / vec;
    if (vectorized && a.group_size % vec == 0 && lanes <= 32 && (lanes & (lanes - 1)) == 0) {
      constexpr int kThreads = 256;
      const int64_t vectors = a.tokens * a.hidden / vec;
      const auto blocks = static_cast<unsigned>(std::min<int64_t>((vectors + kThreads - 1) / kThreads, 65535 * 4));
      quantize_groups_vector_kernel<kIn, kFp8><<<blocks, kThreads, 0, stream>>>(a, static_cast<int>(lanes));
    } else {
      constexpr int kThreads = 256;
      const int64_t work = a.tokens * a.groups;
      const auto blocks = static_cast<unsigned>(std::min<int64_t>((work + 7) / 8, 65535 * 8));
      quantize_groups_kernel<kIn, kFp8><<<blocks, kThreads, 0, stream>>>(a);
    }
    return;
  }
  const auto grid = static_cast<unsigned>(a.tokens);
  if (a.mode == QuantMode::kDynamicPerToken) {
    const int cached_threads = cached_row_threads<kIn>(a.hidden);
    if (vectorized && cached_threads > 0) {
      quantize_rows_cached_kernel<kIn, kFp8><<<grid, cached_threads, 0, stream>>>(a);
    } else if (vectorized) {
      quantize_rows_kernel<kIn, kFp8, true, true><<<grid, row_block_threads(a.hidden), 0, stream>>>(a);
    } else {
      quantize_rows_kernel<kIn, kFp8, true, false><<<grid, row_block_threads(a.hidden), 0, stream>>>(a);
    }
  } else {
    if (vectorized) quantize_rows_kernel<kIn, kFp8, false, true><<<grid, row_block_threads(a.hidden), 0, stream>>>(a);
    else quantize_rows_kernel<kIn, kFp8, false, false><<<grid, row_block_threads(a.hidden), 0, stream>>>(a);
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

template <DType kOut, bool kFp8>
void launch_dequantize(const QuantArgs& a, cudaStream_t stream) {
  // Vectorized when the float side takes 16-byte vectors (the condition of
  // the quantize kernels with in/out swapped) and each vector has one scale.
  constexpr int vec = FloatAccess<kOut>::kVec;
  const size_t out_bytes = sizeof(typename FloatAccess<kOut>::Storage);
  const bool vectorized = a.hidden % vec == 0 && a.group_size % vec == 0 && is_aligned(a.out, 16) &&
                          (a.out_stride * out_bytes) % 16 == 0 && is_aligned(a.in, vec) && a.in_stride % vec == 0;
  const auto grid = static_cast<unsigned>(a.tokens);
  const int threads = row_block_threads(a.hidden / (vectorized ? vec : 1) * 8);
  if (vectorized) dequantize_rows_kernel<kOut, kFp8, true><<<grid, threads, 0, stream>>>(a);
  else dequantize_rows_kernel<kOut, kFp8, false><<<grid, threads, 0, stream>>>(a);
}

template <bool kFp8>
void dispatch_dequantize(const QuantArgs& a, cudaStream_t stream) {
  switch (a.float_dtype) {
    case DType::kFloat32: return launch_dequantize<DType::kFloat32, kFp8>(a, stream);
    case DType::kFloat16: return launch_dequantize<DType::kFloat16, kFp8>(a, stream);
    default: return launch_dequantize<DType::kBFloat16, kFp8>(a, stream);
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
