// quant_reduce.cuh — warp and block reductions of the quantization
// statistics (quant::AbsMax, quant::MinMax) and the per-row / per-group code
// computation shared by the quantize kernels. fmaxf / fminf are
// order-independent, so every reduction tree gives the CPU backend's bits.
#pragma once

#include <cstdint>
#include <type_traits>

#include "quant/quant_args.h"
#include "quant/quant_math.h"

namespace qgemm::detail {

__device__ __forceinline__ quant::AbsMax shuffle_xor(const quant::AbsMax& s, int offset) {
  return quant::AbsMax{__shfl_xor_sync(0xffffffffu, s.amax, offset)};
}
__device__ __forceinline__ quant::MinMax shuffle_xor(const quant::MinMax& s, int offset) {
  return quant::MinMax{__shfl_xor_sync(0xffffffffu, s.lo, offset),
                       __shfl_xor_sync(0xffffffffu, s.hi, offset)};
}

// Reduces over aligned sets of `width` consecutive lanes (a power of two ≤
// 32); every lane of a set gets the result. All 32 lanes must call it.
template <typename Stats>
__device__ __forceinline__ Stats reduce_lanes(Stats s, int width) {
  for (int offset = width / 2; offset > 0; offset /= 2) s.merge(shuffle_xor(s, offset));
  return s;
}

// Reduces over the whole block (blockDim.x a multiple of 32); every thread
// gets the result. One barrier: each warp reduces the per-warp partials
// itself. A second call in the same kernel must follow a __syncthreads()
// (threads read the first call's partials until they return).
template <typename Stats>
__device__ __forceinline__ Stats reduce_block(Stats s) {
  __shared__ Stats partial[32];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  s = reduce_lanes(s, 32);
  if (lane == 0) partial[warp] = s;
  __syncthreads();
  Stats total = lane < static_cast<int>(blockDim.x / 32) ? partial[lane] : Stats{};
  return reduce_lanes(total, 32);
}

// The statistic a dynamic quantization reduces: the largest magnitude
// (symmetric) or the range with 0 (asymmetric int8).
template <bool kAsymmetric>
using StatsOf = std::conditional_t<kAsymmetric, quant::MinMax, quant::AbsMax>;

// Scale, reciprocal and zero point of one row or group from its statistics
// (quant_math.h), as the CPU backend computes them.
using GroupCode = quant::GroupCode;
template <bool kFp8>
__device__ __forceinline__ GroupCode code_of(const quant::AbsMax& s) {
  return quant::code_of(s, kFp8 ? numeric::kFp8E4M3Max : quant::kInt8Max);
}
template <bool kFp8>
__device__ __forceinline__ GroupCode code_of(const quant::MinMax& s) {
  return quant::code_of(s);
}

// Writes a dynamic group's scale (and zero point) at index s.
__device__ __forceinline__ void store_code(const QuantArgs& a, int64_t s, const GroupCode& c) {
  a.scale[s] = c.scale;
  if (a.azp != nullptr) a.azp[s] = c.zero_point;
}

}  // namespace qgemm::detail
