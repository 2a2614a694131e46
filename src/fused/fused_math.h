// fused_math.h — the one scalar definition (host + device) of every
// elementwise step of the fused ops: the input prologues, the activations and
// the normalization formulas. The CPU twin and the CUDA kernels call these
// same functions, so for the same inputs (and the same row sums) they give the
// same bits — except the activations (silu, GELU), which the kernels evaluate
// with the same formulas but the SFU's exp2 and reciprocal
// (fused/cuda/fused_fast_math.cuh, a few ulps apart). The other CPU/GPU
// difference is the order of the fp32 row sums (RMS and LayerNorm
// statistics). Every operation is spelled out — on the device with the _rn
// intrinsics, on the host compiled with -ffp-contract=off — and exp/erfc are
// evaluated here (not by libm) for the same reason. docs/fused.md lists the
// formulas and their accuracy.
#pragma once

#include <cmath>
#include <cstdint>

#include "core/numeric.h"
#include "gemm/epilogue_math.h"

namespace qgemm::detail::fused {

#if defined(__CUDA_ARCH__)
QGEMM_HD float f_add(float a, float b) { return __fadd_rn(a, b); }
QGEMM_HD float f_sub(float a, float b) { return __fsub_rn(a, b); }
QGEMM_HD float f_mul(float a, float b) { return __fmul_rn(a, b); }
QGEMM_HD float f_div(float a, float b) { return __fdiv_rn(a, b); }
QGEMM_HD float f_fma(float a, float b, float c) { return __fmaf_rn(a, b, c); }
QGEMM_HD float f_sqrt(float a) { return __fsqrt_rn(a); }
QGEMM_HD float f_round_even(float a) { return rintf(a); }
#else
QGEMM_HD float f_add(float a, float b) { return a + b; }
QGEMM_HD float f_sub(float a, float b) { return a - b; }
QGEMM_HD float f_mul(float a, float b) { return a * b; }
QGEMM_HD float f_div(float a, float b) { return a / b; }
QGEMM_HD float f_fma(float a, float b, float c) { return __builtin_fmaf(a, b, c); }
QGEMM_HD float f_sqrt(float a) { return std::sqrt(a); }
QGEMM_HD float f_round_even(float a) { return std::nearbyint(a); }
#endif

// e^x, faithful (≲ 2 ulp): n = rne(x·log2 e), r = x − n·ln2 in two parts
// (Cody–Waite, Cephes constants; n·C1 is exact), e^r by its Taylor series to
// degree 7 (|r| ≤ 0.35: truncation < 1e-8 relative), times 2^n applied in two
// halves so subnormal results round once.
QGEMM_HD float exp_f32(float x) {
  if (x != x) return x;
  if (x >= 88.8f) return INFINITY;  // e^88.73 > FLT_MAX
  if (x <= -104.0f) return 0.0f;    // below half the smallest subnormal
  const float n = f_round_even(f_mul(x, 1.44269504088896341f));
  float r = f_fma(n, -0.693359375f, x);
  r = f_fma(n, 2.12194440e-4f, r);
  float p = 1.98412698e-4f;          // 1/7!
  p = f_fma(p, r, 1.38888889e-3f);   // 1/6!
  p = f_fma(p, r, 8.33333333e-3f);   // 1/5!
  p = f_fma(p, r, 4.16666667e-2f);   // 1/4!
  p = f_fma(p, r, 1.66666667e-1f);   // 1/3!
  p = f_fma(p, r, 0.5f);
  p = f_fma(p, r, 1.0f);
  p = f_fma(p, r, 1.0f);
  const int ni = static_cast<int>(n);  // [−150, 128]
  const int half = ni / 2;
  return f_mul(f_mul(p, numeric::pow2i(half)), numeric::pow2i(ni - half));
}

// silu(g) = g / (1 + e^−g).
QGEMM_HD float silu(float g) { return f_div(g, f_add(1.0f, exp_f32(-g))); }

// GELU, tanh form: v/2·(1 + tanh(u)) with u = √(2/π)·(v + 0.044715·v³),
// evaluated as v / (1 + e^(−2u)) — the same function, without the
// cancellation of 1 + tanh(u) for negative u.
QGEMM_HD float gelu_tanh(float v) {
  const float inner = f_fma(0.044715f, f_mul(f_mul(v, v), v), v);
  return f_div(v, f_add(1.0f, exp_f32(f_mul(-1.59576912160573071f, inner))));  // −2·√(2/π)
}

// erfc(a) for a >= 0 as its two factors t = 1/(1 + 0.46·a) and
// E = exp(P(t) − a²), erfc(a) = t·E, with P the degree-5 minimax fit of
// scripts/fit_gelu_erfc.py: relative error ≤ kErfcFitError·(1 + a²/2) with
// fp32 coefficients (weighted as the rounding of a² already weighs the
// result). GELU is then within about 3e-7 absolute (its largest error, near
// v = −1) and 2e-6 relative for |v| ≤ 1: thousands of times below an int8
// step (amax / 127), and these ops emit only quantized values. The degree-7
// fit (1.6e-7) cost two more fused multiply-adds per element in a kernel
// bound by its instructions (docs/fused.md, "The erfc refit").
// Shared with the GPU's gelu_erf_fast (fused_fast_math.cuh), which rescales
// them for base 2: t's scale, and P(t) = Σ kErfcPi·t^i.
constexpr double kErfcTScale = 0.46;
constexpr float kErfcP0 = -1.35284352f, kErfcP1 = 1.05173361f, kErfcP2 = 0.130847409f, kErfcP3 = 0.781064153f,
                kErfcP4 = -0.850507677f, kErfcP5 = 0.239705592f;
constexpr double kErfcFitError = 1.75e-6;

struct ErfcFactors {
  float t, e;
};
QGEMM_HD ErfcFactors erfc_factors(float a) {
  const float t = f_div(1.0f, f_fma(static_cast<float>(kErfcTScale), a, 1.0f));
  float p = kErfcP5;
  p = f_fma(p, t, kErfcP4);
  p = f_fma(p, t, kErfcP3);
  p = f_fma(p, t, kErfcP2);
  p = f_fma(p, t, kErfcP1);
  p = f_fma(p, t, kErfcP0);
  return {t, exp_f32(f_sub(p, f_mul(a, a)))};
}

// A bound of |v|·t in gelu_erf: |v|/(1 + 0.46·|v|/√2) < √2/0.46 = 3.0744
// for every finite v, so clamping to it changes nothing there; it only turns
// the NaN of ∞·0 (v = ±∞, where t = 0) into a finite factor of E = 0.
constexpr float kGeluErfMaxVT = 3.15f;

// GELU, erf form: v/2·(1 + erf(v/√2)), with 1 + erf(z) = erfc(|z|) for z < 0
// and 2 − erfc(z) for z >= 0 (no cancellation for negative v). With
// erfc(|z|)/2 = t·(E/2):
//   v >= 0:  v·(1 − erfc/2) = v − |v|·t·(E/2)
//   v <  0:  v·erfc/2       = 0 − |v|·t·(E/2)
// so y = fma(−min(|v|·t, kGeluErfMaxVT), E/2, max(v, 0)) for every v — one
// fused multiply-add instead of a branch (gelu(+∞) = +∞, gelu(−∞) = 0).
QGEMM_HD float gelu_erf(float v) {
  const ErfcFactors f = erfc_factors(fabsf(f_mul(v, 0.707106781186547524f)));
  const float vt = fminf(f_mul(fabsf(v), f.t), kGeluErfMaxVT);
  return f_fma(-vt, f_mul(0.5f, f.e), fmaxf(v, 0.0f));
}

QGEMM_HD float gelu(float v, bool tanh_form) { return tanh_form ? gelu_tanh(v) : gelu_erf(v); }

// RMSNorm: 1 / sqrt(Σx² / n + eps), and y = (v · inv_rms) · w.
QGEMM_HD float inv_rms(float sum_squares, int64_t n, float eps) {
  return f_div(1.0f, f_sqrt(f_add(f_div(sum_squares, static_cast<float>(n)), eps)));
}
QGEMM_HD float rms_normalize(float v, float inv, float weight) { return f_mul(f_mul(v, inv), weight); }

// LayerNorm: mean = Σv / n; var = Σ(v − mean)² / n; 1 / sqrt(var + eps);
// y = fma((v − mean) · inv_std, gamma, beta).
QGEMM_HD float row_mean(float sum, int64_t n) { return f_div(sum, static_cast<float>(n)); }
QGEMM_HD float inv_std(float sum_centered_squares, int64_t n, float eps) {
  return f_div(1.0f, f_sqrt(f_add(f_div(sum_centered_squares, static_cast<float>(n)), eps)));
}
QGEMM_HD float layer_normalize(float v, float mean, float inv, float gamma, float beta) {
  return f_fma(f_mul(f_sub(v, mean), inv), gamma, beta);
}

// The int32 GEMM output dequantized as scaled_mm's epilogue does:
// fma(scale_a, scale_w·acc, bias) (scale_a·(scale_w·acc) without bias).
QGEMM_HD float dequant_acc(int32_t acc, float scale_a, float scale_w, float bias, bool has_bias) {
  return dequant_epilogue(static_cast<float>(acc), scale_a, scale_w, bias, has_bias);
}

// A quantized int8 residual: residual_scale · q.
QGEMM_HD float dequant_residual(int8_t q, float residual_scale) {
  return f_mul(residual_scale, static_cast<float>(q));
}

}  // namespace qgemm::detail::fused
