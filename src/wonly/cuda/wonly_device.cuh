// wonly_device.cuh — device building blocks of the weight-only kernels:
// register dequantization of int4 / int8 words into packed bf16x2 / f16x2
// pairs (bit-identical to wonly_math.h), the m16n8k16 tensor-core MMA, and
// the output store.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

#include "core/numeric.h"
#include "wonly/wonly_args.h"

namespace qgemm::detail::wonly {

// Two floats → one 32-bit register of two T values (lo in bits 0–15),
// round to nearest even (cvt.rn.bf16x2.f32 / cvt.rn.f16x2.f32).
template <bool kBf16>
__device__ __forceinline__ uint32_t pack2(float lo, float hi) {
  if constexpr (kBf16) {
    const __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
    return *reinterpret_cast<const uint32_t*>(&v);
  } else {
    const __half2 v = __floats2half2_rn(lo, hi);
    return *reinterpret_cast<const uint32_t*>(&v);
  }
}

// float(b) for byte i of `bytes` (0…255), exactly: the float whose bits are
// 0x4B0000bb is 2^23 + bb, so subtracting `bias` = 2^23 (+128 for int8's
// sign flip) is exact. One PRMT + one FADD, no slow I2F.
__device__ __forceinline__ float byte_to_float(uint32_t bytes, int i, float bias) {
  return __fsub_rn(__uint_as_float(__byte_perm(bytes, 0x4B00u, 0x5440u | static_cast<uint32_t>(i))),
                   bias);
}

constexpr float kMagic = 8388608.0f;         // 2^23
constexpr float kMagicInt8 = 8388736.0f;     // 2^23 + 128

// Eight int4 elements (one 32-bit word; element e in bits 4e…4e+3) →
// four pairs (e0,e1), (e2,e3), (e4,e5), (e6,e7) of ŵ = round_T(fma(q, s, o)).
template <bool kBf16>
__device__ __forceinline__ void dequant_int4_word(uint32_t word, float scale, float offset,
                                                  uint32_t pairs[4]) {
  const uint32_t even = word & 0x0f0f0f0fu;         // elements 0, 2, 4, 6 in bytes 0…3
  const uint32_t odd = (word >> 4) & 0x0f0f0f0fu;   // elements 1, 3, 5, 7
#pragma unroll
  for (int b = 0; b < 4; ++b) {
    const float q0 = byte_to_float(even, b, kMagic);
    const float q1 = byte_to_float(odd, b, kMagic);
    pairs[b] = pack2<kBf16>(__fmaf_rn(q0, scale, offset), __fmaf_rn(q1, scale, offset));
  }
}

// Four int8 elements (byte e = element e, signed) → pairs (e0,e1), (e2,e3).
template <bool kBf16>
__device__ __forceinline__ void dequant_int8_word(uint32_t word, float scale, float offset,
                                                  uint32_t pairs[2]) {
  const uint32_t biased = word ^ 0x80808080u;  // q + 128 in every byte
#pragma unroll
  for (int b = 0; b < 2; ++b) {
    const float q0 = byte_to_float(biased, 2 * b, kMagicInt8);
    const float q1 = byte_to_float(biased, 2 * b + 1, kMagicInt8);
    pairs[b] = pack2<kBf16>(__fmaf_rn(q0, scale, offset), __fmaf_rn(q1, scale, offset));
  }
}

// D += A·B on one m16n8k16 tile, fp32 accumulators (PTX fragment layouts:
// a = rows g / g+8, k 2t…2t+1 / 2t+8…2t+9; b = k 2t…2t+1 / 2t+8…2t+9, col g;
// c = rows g / g+8, cols 2t, 2t+1; g = lane/4, t = lane%4).
template <bool kBf16>
__device__ __forceinline__ void mma_16816(float c[4], const uint32_t a[4], const uint32_t b[2]) {
  if constexpr (kBf16) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
        "{%8,%9}, {%0,%1,%2,%3};\n"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  } else {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
        "{%8,%9}, {%0,%1,%2,%3};\n"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  }
}

template <bool kBf16>
__device__ __forceinline__ float load_act(const void* base, int64_t index) {
  const uint16_t bits = static_cast<const uint16_t*>(base)[index];
  return kBf16 ? numeric::bf16_bits_to_float(bits) : numeric::fp16_bits_to_float(bits);
}

// out[index] = round_T(acc + bias[col]) (wonly_math.h's epilogue).
template <bool kBf16>
__device__ __forceinline__ void store_output(const WeightOnlyArgs& args, int64_t token,
                                             int64_t col, float acc) {
  if (args.bias != nullptr) acc = __fadd_rn(acc, load_act<kBf16>(args.bias, col));
  static_cast<uint16_t*>(args.out)[token * args.ldo + col] =
      kBf16 ? numeric::float_to_bf16_bits(acc) : numeric::float_to_fp16_bits(acc);
}

}  // namespace qgemm::detail::wonly
