// wonly_math.h — the one scalar definition of weight-only dequantization and
// its epilogue, shared by the CPU twin and the CUDA kernels (host + device).
// T is the activation dtype (bf16 or fp16):
//
//   s_T = round_T(scale), o_T = round_T(offset)      RNE, once per group
//   ŵ   = round_T( q·s_T + o_T )                     the exact value, rounded ONCE
//   out = round_T( acc + bias )                      fp32 add, then T
//
// ŵ is a 16-bit fused multiply-add, exactly what PTX fma.rn.{bf16x2,f16x2}
// (SASS HFMA2) computes, so the GPU dequantizes two weights per instruction
// (docs/weight_only.md, "Semantics"). q is exact in T (|q| ≤ 128).
//
// Host: q·s_T is exact in double (≤ 8 + 11 bits); the sum is not always
// (bf16 exponents span 2^-133 … 2^127), so it is formed with TwoSum and
// rounded to odd (53 bits, then 24 bits), which makes the final RNE rounding
// to T (≤ 11 bits) a single correct rounding of the exact value: no double
// rounding on ties, subnormal T results, overflow to ±inf and NaN included.
// Device: __hfma on T values (the kernels use the paired HFMA2 form).
#pragma once

#include <cstdint>
#include <cstring>

#include "core/numeric.h"

#if defined(__CUDACC__)
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#endif
#if !defined(__CUDA_ARCH__)
#include <cmath>
#endif

namespace qgemm::detail::wonly {

// Element k of a plain packed-int4 byte row: low nibble for even k.
QGEMM_HD int int4_at(const uint8_t* row, int64_t k) {
  const uint8_t byte = row[k >> 1];
  return (k & 1) ? (byte >> 4) : (byte & 0x0f);
}

// Rounds to the activation dtype (bf16 when is_bf16, else fp16) and back.
QGEMM_HD float round_to_act(float value, bool is_bf16) {
  return is_bf16 ? numeric::bf16_bits_to_float(numeric::float_to_bf16_bits(value))
                 : numeric::fp16_bits_to_float(numeric::float_to_fp16_bits(value));
}

#if !defined(__CUDA_ARCH__)
// round_T(p + o) for doubles p, o holding T-representable products / values,
// rounded once (see the header comment). Host only.
inline float round_sum_to_act(double p, double o, bool is_bf16) {
  double r = p + o;
  if (std::isfinite(r)) {
    const double pv = r - o;  // TwoSum: e = (p + o) − r exactly
    const double e = (p - pv) + (o - (r - pv));
    uint64_t bits;
    std::memcpy(&bits, &r, sizeof(bits));
    // Round to odd: an inexact r with an even last bit steps one ulp toward
    // the exact value (whose other neighbour is odd).
    if (e != 0.0 && (bits & 1u) == 0) r = std::nextafter(r, e > 0 ? INFINITY : -INFINITY);
  }
  float f = static_cast<float>(r);  // to 24 bits, again to odd
  if (std::isfinite(f) && static_cast<double>(f) != r) {
    uint32_t fb;
    std::memcpy(&fb, &f, sizeof(fb));
    if ((fb & 1u) == 0) f = std::nextafterf(f, r > static_cast<double>(f) ? INFINITY : -INFINITY);
  }
  return round_to_act(f, is_bf16);  // RNE to T: one correct rounding of p + o
}
#endif

// ŵ = round_T(q·s_t + o_t) for s_t, o_t already in T (floats holding T
// values), as a float (exactly representable in T).
QGEMM_HD float dequant_exact(int q, float s_t, float o_t, bool is_bf16) {
#if defined(__CUDA_ARCH__)
  if (is_bf16) {
    return __bfloat162float(__hfma(__float2bfloat16_rn(static_cast<float>(q)),
                                   __float2bfloat16_rn(s_t), __float2bfloat16_rn(o_t)));
  }
  return __half2float(__hfma(__float2half_rn(static_cast<float>(q)), __float2half_rn(s_t),
                             __float2half_rn(o_t)));
#else
  return round_sum_to_act(static_cast<double>(q) * static_cast<double>(s_t),
                          static_cast<double>(o_t), is_bf16);
#endif
}

// ŵ from the API's fp32 scale and offset: s_T, o_T rounded first.
QGEMM_HD float dequant_weight(int q, float scale, float offset, bool is_bf16) {
  return dequant_exact(q, round_to_act(scale, is_bf16), round_to_act(offset, is_bf16), is_bf16);
}

QGEMM_HD float add_bias(float accumulator, float bias) {
#if defined(__CUDA_ARCH__)
  return __fadd_rn(accumulator, bias);
#else
  return accumulator + bias;
#endif
}

}  // namespace qgemm::detail::wonly
