// quant_math.h — the scalar quantization formulas of qgemm/quant.h, one
// definition for the CPU backend and the CUDA kernels (host + device), so
// both produce identical bits. Every float operation is a single IEEE fp32
// operation spelled out (division, subtraction, multiplication), none may be
// contracted; the integer steps are exact.
//
//   symmetric:   s = amax / qmax                  (amax over finite elements)
//   asymmetric:  s = (hi − lo) / 255              (lo ≤ 0 ≤ hi: finite min / max with 0)
//                z = rne_i32(−128 − lo · (1/s))
//   (a scale of 0 becomes 1, a subnormal one 2^-126, so 1/s is finite)
//   int8:        q = clamp(rne_i32(x · (1/s)) + z, qmin, qmax)   (exact integer sum)
//   fp8 e4m3:    q = fp8_rne_saturating(x · (1/s))
//   dequantize:  x̂ = float(q − z) · s
// rne_i32 rounds half to even, saturates to the int32 range and maps NaN to 0
// (PTX cvt.rni.s32.f32 semantics), so NaN inputs quantize to the zero point.
// fp8 NaN codes are 0x7f and NaN dequantized values the canonical quiet NaN.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>

#include "core/numeric.h"
#include "qgemm/tensor.h"

namespace qgemm::detail::quant {

#if defined(__CUDA_ARCH__)
QGEMM_HD float div(float a, float b) { return __fdiv_rn(a, b); }
QGEMM_HD float sub(float a, float b) { return __fsub_rn(a, b); }
QGEMM_HD float mul(float a, float b) { return __fmul_rn(a, b); }
QGEMM_HD int32_t round_to_int32(float x) { return __float2int_rn(x); }
#else
QGEMM_HD float div(float a, float b) { return a / b; }
QGEMM_HD float sub(float a, float b) { return a - b; }
QGEMM_HD float mul(float a, float b) { return a * b; }
QGEMM_HD int32_t round_to_int32(float x) {
  if (x != x) return 0;
  if (x >= 2147483648.0f) return std::numeric_limits<int32_t>::max();
  if (x <= -2147483648.0f) return std::numeric_limits<int32_t>::min();
  return static_cast<int32_t>(std::nearbyint(x));  // default rounding mode: ties to even
}
#endif

// Largest finite magnitude: the statistic of symmetric scales. NaN and ±Inf
// are left out (`|x| < Inf` is false for both), so one bad element does not
// destroy its row's scale. fmaxf is order-independent: any reduction tree
// gives the same bits.
struct AbsMax {
  float amax = 0.0f;
  QGEMM_HD void add(float x) {
    const float m = fabsf(x);
    if (m < std::numeric_limits<float>::infinity()) amax = fmaxf(amax, m);
  }
  QGEMM_HD void merge(const AbsMax& o) { amax = fmaxf(amax, o.amax); }
};

// Finite minimum and maximum with 0 included (lo ≤ 0 ≤ hi, so 0 is exactly
// representable): the statistics of asymmetric scales.
struct MinMax {
  float lo = 0.0f, hi = 0.0f;
  QGEMM_HD void add(float x) {
    if (fabsf(x) < std::numeric_limits<float>::infinity()) {
      lo = fminf(lo, x);
      hi = fmaxf(hi, x);
    }
  }
  QGEMM_HD void merge(const MinMax& o) {
    lo = fminf(lo, o.lo);
    hi = fmaxf(hi, o.hi);
  }
};

constexpr float kInt8Max = 127.0f;
constexpr float kMinNormal = 1.17549435e-38f;  // 2^-126: 1/s stays finite above it

// A scale of 0 (an all-zero row or group) becomes 1, so the codes are 0 (or
// the zero point) and nothing divides by zero; a subnormal one becomes 2^-126
// so that its reciprocal is finite.
QGEMM_HD float usable_scale(float scale) {
  return scale == 0.0f ? 1.0f : fmaxf(scale, kMinNormal);
}

// qmax: 127 for int8, 448 for fp8 e4m3.
QGEMM_HD float symmetric_scale(const AbsMax& s, float qmax) { return usable_scale(div(s.amax, qmax)); }
QGEMM_HD float asymmetric_scale(const MinMax& s) { return usable_scale(div(sub(s.hi, s.lo), 255.0f)); }

QGEMM_HD float reciprocal(float scale) { return div(1.0f, scale); }

// z = rne(−128 − lo/s) with lo/s taken as lo · (1/s), the product the codes
// use, so lo maps to −128; lo ∈ [−255·s, 0] keeps z in [−128, 127].
QGEMM_HD int32_t asymmetric_zero_point(const MinMax& s, float inv_scale) {
  return round_to_int32(sub(-128.0f, mul(s.lo, inv_scale)));
}

// A row's or group's scale, the reciprocal its codes multiply by, and its
// zero point (0 when symmetric), from its statistics.
struct GroupCode {
  float scale, inv_scale;
  int32_t zero_point;
};
QGEMM_HD GroupCode code_of(const AbsMax& s, float qmax) {
  const float scale = symmetric_scale(s, qmax);
  return {scale, reciprocal(scale), 0};
}
QGEMM_HD GroupCode code_of(const MinMax& s) {
  const float scale = asymmetric_scale(s);
  const float inv_scale = reciprocal(scale);
  return {scale, inv_scale, asymmetric_zero_point(s, inv_scale)};
}

// What the int8 codes of one row or group need: 1/s, and the clamp bounds
// shifted by the zero point, lo = qmin − z and hi = qmax − z (clamped into
// int32), so that clamp(r + z, qmin, qmax) = clamp(r, lo, hi) + z without
// overflow for every int32 r and z. With |z| ≤ 2^30 this is also exact when
// r saturated at ±2^31 (the true sum is then out of range on the same side).
struct Int8Code {
  float inv_scale;
  int32_t zero_point, lo, hi;
};
QGEMM_HD int32_t clamp_to_int32(int64_t v) {
  return static_cast<int32_t>(v < INT32_MIN ? INT32_MIN : v > INT32_MAX ? INT32_MAX : v);
}
QGEMM_HD Int8Code int8_code(float inv_scale, int32_t zero_point, bool narrow_range) {
  const int64_t qmin = narrow_range ? -127 : -128, qmax = 127;
  return {inv_scale, zero_point, clamp_to_int32(qmin - zero_point), clamp_to_int32(qmax - zero_point)};
}

// q = clamp(rne_i32(x · (1/s)) + z, qmin, qmax).
QGEMM_HD int8_t quantize_int8(float x, const Int8Code& c) {
  const int32_t r = round_to_int32(mul(x, c.inv_scale));
  const int32_t clamped = r < c.lo ? c.lo : r;  // lo < hi: two min/max, no branch
  return static_cast<int8_t>((clamped > c.hi ? c.hi : clamped) + c.zero_point);
}

// quantize_int8 for z = 0 over the full range [−128, 127] (symmetric codes
// without narrow_range): q = sat8(rne_i32(x · (1/s))), NaN → 0, returned as
// an int32 in [−128, 127]. The GPU takes one saturating conversion
// (cvt.rni.sat.s8.f32, SASS F2I.S8) for what is otherwise a conversion to
// int32 and two integer clamps; the same bits.
QGEMM_HD int32_t quantize_int8_full_range(float x, float inv_scale) {
#if defined(__CUDA_ARCH__)
  int32_t q;
  asm("cvt.rni.sat.s8.f32 %0, %1;" : "=r"(q) : "f"(mul(x, inv_scale)));
  return q;
#else
  return quantize_int8(x, Int8Code{inv_scale, 0, -128, 127});
#endif
}

// q = fp8_rne_saturating(x · (1/s)), ±Inf → ±448; NaN → 0x7f (a NaN's sign
// and payload do not survive GPU arithmetic, so none is promised).
QGEMM_HD uint8_t quantize_fp8(float x, float inv_scale) {
  const float v = mul(x, inv_scale);
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
  // The hardware conversion without a branch: finite inputs never give
  // 0x7f / 0xff, NaN gives one of them, made 0x7f.
  const uint32_t bits = numeric::fp8e4m3_bits_hw(v);
  return static_cast<uint8_t>((bits & 0x7fu) == 0x7fu ? 0x7fu : bits);
#else
  return v != v ? uint8_t{0x7f} : numeric::float_to_fp8e4m3_bits(v);
#endif
}

// NaN results are returned as the canonical quiet NaN 0x7fc00000 on both
// backends, for the same reason.
QGEMM_HD float canonical_nan(float v) { return v != v ? numeric::bits_float(0x7fc00000u) : v; }

// x̂ = float(q − z) · s. The int32 difference is exact for |z| ≤ 2^30 (and
// wraps, identically on both backends, only for |z| near 2^31).
QGEMM_HD float dequantize_int8(int8_t q, float scale, int32_t zero_point) {
  const auto difference = static_cast<int32_t>(static_cast<uint32_t>(static_cast<int32_t>(q)) -
                                               static_cast<uint32_t>(zero_point));
  return canonical_nan(mul(static_cast<float>(difference), scale));
}
QGEMM_HD float dequantize_fp8(uint8_t q, float scale) {
  return canonical_nan(mul(numeric::fp8e4m3_bits_to_float(q), scale));
}

}  // namespace qgemm::detail::quant
