// fused_quant_math.h — the scalar quantization math of the fused ops (host +
// device), the same formulas as quant/quant_math.h so the two can be merged:
//
//   symmetric       s = amax / qmax                  q = sat(rne(y / s))
//   asymmetric int8 s = (hi − lo) / 255, z = rne(−128 − lo / s)
//                                                    q = sat(rne(y / s) + z)
//   fp8 e4m3        s = amax / 448                   q = fp8_rne_sat(y / s)
//
// amax, lo = min(0, min y), hi = max(0, max y) over the finite values of the
// row (max/min are exact and order-independent, so every reduction tree gives
// the same bits). A scale that would be 0 becomes 1. Every float operation is
// a single IEEE operation (division, subtraction, round-half-even); none may
// be contracted, so CPU and CUDA produce identical bits from identical y.
#pragma once

#include <cmath>
#include <cstdint>

#include "core/numeric.h"

namespace qgemm::detail::fused {

#if defined(__CUDA_ARCH__)
QGEMM_HD float q_div(float a, float b) { return __fdiv_rn(a, b); }
QGEMM_HD float q_sub(float a, float b) { return __fsub_rn(a, b); }
QGEMM_HD float q_round_even(float x) { return rintf(x); }
QGEMM_HD bool q_is_finite(float x) { return isfinite(x); }
#else
QGEMM_HD float q_div(float a, float b) { return a / b; }
QGEMM_HD float q_sub(float a, float b) { return a - b; }
QGEMM_HD float q_round_even(float x) { return std::nearbyint(x); }  // default mode: ties to even
QGEMM_HD bool q_is_finite(float x) { return std::isfinite(x); }
#endif

// The representable range of the quantized dtype.
struct QuantRange {
  float qmin, qmax;
};
QGEMM_HD QuantRange quant_range(bool fp8, bool narrow_range) {
  if (fp8) return {-numeric::kFp8E4M3Max, numeric::kFp8E4M3Max};
  return {narrow_range ? -127.0f : -128.0f, 127.0f};
}

// amax, min and max of a row with 0 included, over finite values.
struct RowRange {
  float amax = 0.0f, lo = 0.0f, hi = 0.0f;
  QGEMM_HD void add(float y) {
    if (!q_is_finite(y)) return;
    amax = fmaxf(amax, fabsf(y));
    lo = fminf(lo, y);
    hi = fmaxf(hi, y);
  }
  QGEMM_HD void merge(const RowRange& o) {
    amax = fmaxf(amax, o.amax);
    lo = fminf(lo, o.lo);
    hi = fmaxf(hi, o.hi);
  }
};

QGEMM_HD float nonzero_scale(float scale) { return scale > 0.0f ? scale : 1.0f; }

// The dynamic scale (and zero point) of a row.
struct RowScale {
  float scale = 1.0f;
  int32_t zero_point = 0;
};
QGEMM_HD RowScale dynamic_row_scale(const RowRange& r, QuantRange range, bool asymmetric) {
  RowScale s;
  if (!asymmetric) {
    s.scale = nonzero_scale(q_div(r.amax, range.qmax));
    return s;
  }
  s.scale = nonzero_scale(q_div(q_sub(r.hi, r.lo), 255.0f));
  s.zero_point = static_cast<int32_t>(q_round_even(q_sub(-128.0f, q_div(r.lo, s.scale))));
  return s;
}

// int8: q = clamp(rne(y / s) + z, qmin, qmax); NaN → 0; ±Inf saturate.
QGEMM_HD int8_t quantize_int8(float y, float scale, int32_t zero_point, QuantRange range) {
  float v = q_round_even(q_div(y, scale));
  if (v != v) return 0;
  v = v + static_cast<float>(zero_point);  // exact while |v| < 2^24; beyond, the clamp decides
  v = fminf(fmaxf(v, range.qmin), range.qmax);
  return static_cast<int8_t>(v);
}

// fp8 e4m3: q = fp8_rne_saturating(y / s) (NaN stays NaN).
QGEMM_HD uint8_t quantize_fp8(float y, float scale) {
  return numeric::float_to_fp8e4m3_bits(q_div(y, scale));
}

// One element of the output: the bits of q in the output dtype.
QGEMM_HD uint8_t quantize_bits(float y, float scale, int32_t zero_point, QuantRange range, bool fp8) {
  return fp8 ? quantize_fp8(y, scale)
             : static_cast<uint8_t>(quantize_int8(y, scale, zero_point, range));
}

}  // namespace qgemm::detail::fused
