// quant_math.h — the scalar quantization formulas of qgemm/quant.h, one
// definition for the CPU backend and the CUDA kernels (host + device), so
// both produce identical bits. Every float operation is spelled out
// (division, subtraction, round-half-even), none may be contracted.
#pragma once

#include <cmath>
#include <cstdint>

#include "core/numeric.h"
#include "qgemm/tensor.h"

namespace qgemm::detail::quant {

#if defined(__CUDA_ARCH__)
QGEMM_HD float div(float a, float b) { return __fdiv_rn(a, b); }
QGEMM_HD float sub(float a, float b) { return __fsub_rn(a, b); }
QGEMM_HD float mul(float a, float b) { return __fmul_rn(a, b); }
QGEMM_HD float round_even(float x) { return rintf(x); }
QGEMM_HD bool is_finite(float x) { return isfinite(x); }
#else
QGEMM_HD float div(float a, float b) { return a / b; }
QGEMM_HD float sub(float a, float b) { return a - b; }
QGEMM_HD float mul(float a, float b) { return a * b; }
QGEMM_HD float round_even(float x) { return std::nearbyint(x); }  // default mode: ties to even
QGEMM_HD bool is_finite(float x) { return std::isfinite(x); }
#endif

// The representable range of a quantized dtype.
struct Range {
  float qmin, qmax;
};
QGEMM_HD Range range_of(DType dtype, bool narrow_range) {
  if (dtype == DType::kFloat8E4M3) return {-numeric::kFp8E4M3Max, numeric::kFp8E4M3Max};
  return {narrow_range ? -127.0f : -128.0f, 127.0f};
}

// Running statistics of a row or group: the largest magnitude, minimum and
// maximum over finite elements, with 0 included (order-independent, so any
// reduction tree gives the same result).
struct Stats {
  float amax = 0.0f, min = 0.0f, max = 0.0f;
  QGEMM_HD void add(float x) {
    if (!is_finite(x)) return;
    amax = fmaxf(amax, fabsf(x));
    min = fminf(min, x);
    max = fmaxf(max, x);
  }
  QGEMM_HD void merge(const Stats& o) {
    amax = fmaxf(amax, o.amax);
    min = fminf(min, o.min);
    max = fmaxf(max, o.max);
  }
};

// A scale that would be 0 (all-zero or underflowing data) becomes 1, so the
// quantized values are 0 and nothing divides by zero.
QGEMM_HD float nonzero_scale(float scale) { return scale > 0.0f ? scale : 1.0f; }

// Symmetric: s = amax / qmax.
QGEMM_HD float symmetric_scale(const Stats& s, Range r) { return nonzero_scale(div(s.amax, r.qmax)); }

// Asymmetric int8: s = (max − min) / 255, z = rne(−128 − min / s); with 0 in
// [min, max], z lies in [−128, 127].
QGEMM_HD float asymmetric_scale(const Stats& s) { return nonzero_scale(div(sub(s.max, s.min), 255.0f)); }
QGEMM_HD int32_t asymmetric_zero_point(const Stats& s, float scale) {
  return static_cast<int32_t>(round_even(sub(-128.0f, div(s.min, scale))));
}

// int8: q = clamp(rne(x / s) + z, qmin, qmax); NaN → 0.
QGEMM_HD int8_t quantize_int8(float x, float scale, int32_t zero_point, Range r) {
  float v = round_even(div(x, scale));
  if (v != v) return 0;
  v = v + static_cast<float>(zero_point);  // exact while |v| < 2^24; beyond, the clamp decides
  v = fminf(fmaxf(v, r.qmin), r.qmax);
  return static_cast<int8_t>(v);
}

// fp8 e4m3: q = fp8_rne_saturating(x / s).
QGEMM_HD uint8_t quantize_fp8(float x, float scale) {
  return numeric::float_to_fp8e4m3_bits(div(x, scale));
}

// x̂ = s·(q − z).
QGEMM_HD float dequantize_int8(int8_t q, float scale, int32_t zero_point) {
  return mul(static_cast<float>(static_cast<int32_t>(q) - zero_point), scale);
}
QGEMM_HD float dequantize_fp8(uint8_t q, float scale) {
  return mul(numeric::fp8e4m3_bits_to_float(q), scale);
}

}  // namespace qgemm::detail::quant
