// numeric.h — bit-exact scalar conversions shared by the CPU and CUDA
// backends, so both round the same way (docs/numerics.md):
//   float → bf16 / fp16: round to nearest, ties to even; overflow → ±inf; NaN stays NaN
//   float → fp8 e4m3fn:   round to nearest even, saturating to ±448; NaN → 0x7f|sign
//   bf16 / fp16 / fp8 → float: exact
// Header-only and usable from host and device code.
#pragma once

#include <cstdint>
#include <cstring>

#if defined(__CUDACC__)
#define QGEMM_HD __host__ __device__ __forceinline__
#else
#define QGEMM_HD inline
#endif

namespace qgemm::numeric {

QGEMM_HD uint32_t float_bits(float f) {
  uint32_t u;
  memcpy(&u, &f, sizeof(u));
  return u;
}

QGEMM_HD float bits_float(uint32_t u) {
  float f;
  memcpy(&f, &u, sizeof(f));
  return f;
}

// 2^k for k in [−126, 127], built from its bits.
QGEMM_HD float pow2i(int k) { return bits_float(static_cast<uint32_t>(k + 127) << 23); }

// Round the integer `value` right by `shift` bits (1..31), ties to even.
QGEMM_HD uint32_t shift_right_round_even(uint32_t value, uint32_t shift) {
  const uint32_t kept = value >> shift;
  const uint32_t remainder = value & ((1u << shift) - 1u);
  const uint32_t half = 1u << (shift - 1u);
  return kept + ((remainder > half || (remainder == half && (kept & 1u))) ? 1u : 0u);
}

QGEMM_HD uint16_t float_to_bf16_bits(float f) {
  const uint32_t u = float_bits(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((u >> 16) | 0x0040u);  // quiet NaN
  const uint32_t rounding_bias = 0x7fffu + ((u >> 16) & 1u);
  return static_cast<uint16_t>((u + rounding_bias) >> 16);
}

QGEMM_HD float bf16_bits_to_float(uint16_t h) { return bits_float(static_cast<uint32_t>(h) << 16); }

QGEMM_HD uint16_t float_to_fp16_bits(float f) {
  const uint32_t u = float_bits(f);
  const uint32_t sign = (u >> 16) & 0x8000u;
  const uint32_t magnitude = u & 0x7fffffffu;
  if (magnitude > 0x7f800000u) return static_cast<uint16_t>(sign | 0x7e00u);  // NaN
  if (magnitude >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // >= 65520 → inf
  if (magnitude < 0x38800000u) {  // below 2^-14: fp16 subnormal, unit 2^-24
    const uint32_t exponent = magnitude >> 23;
    if (exponent < 102u) return static_cast<uint16_t>(sign);  // < 2^-25 rounds to zero
    const uint32_t mantissa = (magnitude & 0x7fffffu) | 0x800000u;
    return static_cast<uint16_t>(sign | shift_right_round_even(mantissa, 126u - exponent));
  }
  // Normal: re-bias the exponent (127 → 15) and round 23 mantissa bits to 10;
  // a carry out of the mantissa correctly bumps the exponent.
  return static_cast<uint16_t>(sign | shift_right_round_even(magnitude - (112u << 23), 13u));
}

QGEMM_HD float fp16_bits_to_float(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exponent = (h >> 10) & 0x1fu;
  const uint32_t mantissa = h & 0x3ffu;
  if (exponent == 0) {
    const float value = static_cast<float>(mantissa) * 5.9604644775390625e-8f;  // m · 2^-24
    return sign ? -value : value;
  }
  if (exponent == 31) return bits_float(sign | 0x7f800000u | (mantissa << 13));
  return bits_float(sign | ((exponent + 112u) << 23) | (mantissa << 13));
}

// fp8 e4m3fn: 1 sign, 4 exponent (bias 7), 3 mantissa bits; 0x7f/0xff are NaN,
// there is no infinity; the largest finite value is 0x7e = 448.
constexpr float kFp8E4M3Max = 448.0f;

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
// sm_89+: the hardware conversion (round to nearest even, saturating to
// ±448). It gives the same bits as float_to_fp8e4m3_bits's code below for
// every non-NaN input; a NaN gives 0x7f or 0xff.
__device__ __forceinline__ uint8_t fp8e4m3_bits_hw(float f) {
  uint16_t pair;
  asm("cvt.rn.satfinite.e4m3x2.f32 %0, %1, %2;" : "=h"(pair) : "f"(0.0f), "f"(f));
  return static_cast<uint8_t>(pair & 0xffu);
}
#endif

QGEMM_HD uint8_t float_to_fp8e4m3_bits(float f) {
  const uint32_t u = float_bits(f);
  const uint32_t sign = (u >> 24) & 0x80u;
  const uint32_t magnitude = u & 0x7fffffffu;
  if (magnitude > 0x7f800000u) return static_cast<uint8_t>(sign | 0x7fu);  // NaN
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
  return fp8e4m3_bits_hw(f);
#endif
  if (magnitude >= 0x43e00000u) return static_cast<uint8_t>(sign | 0x7eu);  // >= 448 saturates
  if (magnitude < 0x3c800000u) {  // below 2^-6: subnormal, unit 2^-9
    const uint32_t exponent = magnitude >> 23;
    if (exponent < 117u) return static_cast<uint8_t>(sign);  // <= 2^-10 rounds to zero
    const uint32_t mantissa = (magnitude & 0x7fffffu) | 0x800000u;
    return static_cast<uint8_t>(sign | shift_right_round_even(mantissa, 141u - exponent));
  }
  // Normal: re-bias (127 → 7), round 23 mantissa bits to 3. Values in
  // [448, 464) were caught above; nothing here rounds past 0x7e.
  return static_cast<uint8_t>(sign | shift_right_round_even(magnitude - (120u << 23), 20u));
}

QGEMM_HD float fp8e4m3_bits_to_float(uint8_t b) {
  const uint32_t sign = static_cast<uint32_t>(b & 0x80u) << 24;
  const uint32_t exponent = (b >> 3) & 0xfu;
  const uint32_t mantissa = b & 0x7u;
  if (exponent == 0xfu && mantissa == 0x7u) return bits_float(sign | 0x7fc00000u);  // NaN
  if (exponent == 0) {
    const float value = static_cast<float>(mantissa) * 0.001953125f;  // m · 2^-9
    return sign ? -value : value;
  }
  return bits_float(sign | ((exponent + 120u) << 23) | (mantissa << 20));
}

}  // namespace qgemm::numeric
