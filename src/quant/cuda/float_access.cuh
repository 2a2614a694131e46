// float_access.cuh — the fp32 / fp16 / bf16 side of the quantization kernels:
// 16-byte raw vectors (kept packed in registers, 4 registers whatever the
// dtype) unpacked to float, and float → dtype stores that give the bits of
// core/numeric.h (the CPU backend's conversions), NaN included.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

#include "core/numeric.h"
#include "qgemm/tensor.h"

namespace qgemm::detail {

// 16 bytes of any element type: one LDG.128 / STG.128.
using RawVector = uint4;

template <DType kDtype>
struct FloatAccess;

template <>
struct FloatAccess<DType::kFloat32> {
  using Storage = float;
  static constexpr int kVec = 4;  // elements per 16 bytes
  __device__ static float load(const Storage* p) { return *p; }
  __device__ static Storage from_float(float v) { return v; }
};

template <>
struct FloatAccess<DType::kFloat16> {
  using Storage = __half;
  static constexpr int kVec = 8;
  __device__ static float load(const Storage* p) { return __half2float(*p); }
  // Hardware RNE conversion (overflow → ±inf, as numeric::float_to_fp16_bits);
  // NaN, which the hardware canonicalizes differently, through numeric.h.
  __device__ static Storage from_float(float v) {
    return v != v ? __ushort_as_half(numeric::float_to_fp16_bits(v)) : __float2half_rn(v);
  }
};

template <>
struct FloatAccess<DType::kBFloat16> {
  using Storage = __nv_bfloat16;
  static constexpr int kVec = 8;
  __device__ static float load(const Storage* p) { return __bfloat162float(*p); }
  __device__ static Storage from_float(float v) {
    return v != v ? __ushort_as_bfloat16(numeric::float_to_bf16_bits(v)) : __float2bfloat16_rn(v);
  }
};

// Loads the 16-byte aligned vector at p (read-only path).
__device__ __forceinline__ RawVector load_raw(const void* p) {
  return __ldg(static_cast<const RawVector*>(p));
}

// Element e (0 ≤ e < kVec) of a raw vector as float (exact). For bf16 a
// shift of the 16 bits into the top half of a float, no conversion unit.
template <DType kDtype>
__device__ __forceinline__ float element(const RawVector& raw, int e) {
  const uint32_t word = (&raw.x)[e * static_cast<int>(sizeof(typename FloatAccess<kDtype>::Storage)) / 4];
  if constexpr (kDtype == DType::kFloat32) {
    return __uint_as_float(word);
  } else if constexpr (kDtype == DType::kBFloat16) {
    return __uint_as_float(e % 2 == 0 ? word << 16 : word & 0xffff0000u);
  } else {
    return __half2float(__ushort_as_half(static_cast<unsigned short>(e % 2 == 0 ? word & 0xffffu : word >> 16)));
  }
}

// N bytes stored as one access (N = 4, 8 or 16, address aligned to N).
template <int N>
struct alignas(N) ByteVector {
  uint8_t bytes[N];
};

// Launch helper: true when `address` is a multiple of `alignment` bytes.
inline bool is_aligned(const void* address, size_t alignment) {
  return reinterpret_cast<uintptr_t>(address) % alignment == 0;
}

}  // namespace qgemm::detail
