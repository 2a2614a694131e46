// wonly_math.h — the one scalar definition of weight-only dequantization and
// its epilogue, shared by the CPU twin and the CUDA kernels (host + device):
//
//   ŵ   = round_T( fma(float(q), scale, offset) )     one fp32 rounding, then T
//   out = round_T( acc + bias )                       fp32 add, then T
//
// The CUDA kernels compute float(q) with the exact magic-number trick
// (float bits 0x4B000000 | u is 2^23 + u) and fma with __fmaf_rn, then round
// with cvt.rn.{bf16x2,f16x2}.f32; those give the same bits as the functions
// here for every finite input (NaN payloads may differ).
#pragma once

#include <cstdint>

#include "core/numeric.h"

namespace qgemm::detail::wonly {

// Element k of a plain packed-int4 byte row: low nibble for even k.
QGEMM_HD int int4_at(const uint8_t* row, int64_t k) {
  const uint8_t byte = row[k >> 1];
  return (k & 1) ? (byte >> 4) : (byte & 0x0f);
}

QGEMM_HD float dequant_fp32(int q, float scale, float offset) {
#if defined(__CUDA_ARCH__)
  return __fmaf_rn(static_cast<float>(q), scale, offset);
#else
  return __builtin_fmaf(static_cast<float>(q), scale, offset);
#endif
}

// Rounds to the activation dtype (bf16 when is_bf16, else fp16) and back.
QGEMM_HD float round_to_act(float value, bool is_bf16) {
  return is_bf16 ? numeric::bf16_bits_to_float(numeric::float_to_bf16_bits(value))
                 : numeric::fp16_bits_to_float(numeric::float_to_fp16_bits(value));
}

// ŵ as a float (exactly representable in the activation dtype).
QGEMM_HD float dequant_weight(int q, float scale, float offset, bool is_bf16) {
  return round_to_act(dequant_fp32(q, scale, offset), is_bf16);
}

QGEMM_HD float add_bias(float accumulator, float bias) {
#if defined(__CUDA_ARCH__)
  return __fadd_rn(accumulator, bias);
#else
  return accumulator + bias;
#endif
}

}  // namespace qgemm::detail::wonly
