// fused_fast_math.cuh — the activations of the fused ops on the GPU: the
// formulas of fused/fused_math.h (silu, GELU tanh, GELU erf), with e^x and
// 1/x taken from the SFU's approximations instead of the software exp and
// the IEEE division the CPU twin spells out:
//
//   e^x  = ex2.approx.ftz(x · log2 e)    relative error ≤ 2⁻²² (2 ulp), plus
//                                         |x|·2⁻²⁴ from rounding x · log2 e
//   1/x  = rcp.approx.ftz(x)             ≤ 1 ulp
//
// Why: the exactly rounded forms cost ~65 instructions per GELU element
// (branching exp, FCHK division with its slow path) and left the GELU kernels
// issue-bound at 34–61 % of copy bandwidth on the H100 (ncu at 16384×4096:
// 87 instructions per element, issue slots 91 % busy); these take ~20.
//
// What it changes: GPU and CPU activations differ by a few fp32 ulps
// (tests/fused/test_fused_fast_math.cu bounds both against libm in double),
// so a quantized output may differ from the CPU twin by one step where y
// sits on a rounding boundary, and a dynamic scale by a few ulps — the
// tolerance the norms already had for their row sums. ftz: a result below
// 2⁻¹²⁶ (silu or GELU of inputs below about −87) is 0 here and a subnormal
// on the CPU; only rows made entirely of such values quantize differently.
#pragma once

#include "fused/fused_math.h"

namespace qgemm::detail::fused {

__device__ __forceinline__ float exp2_approx(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}

__device__ __forceinline__ float rcp_approx(float x) {
  float y;
  asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}

constexpr float kLog2e = 1.44269504088896341f;

// silu(g) = g / (1 + e^−g).
__device__ __forceinline__ float silu_fast(float g) {
  return g * rcp_approx(1.0f + exp2_approx(-kLog2e * g));
}

// GELU tanh form, v / (1 + e^(−2u)) with u = √(2/π)·(v + 0.044715·v³), as
// fused_math.h's gelu_tanh.
__device__ __forceinline__ float gelu_tanh_fast(float v) {
  const float inner = fmaf(0.044715f, v * v * v, v);
  return v * rcp_approx(1.0f + exp2_approx(-2.30220819814432500f * inner));  // −2·√(2/π)·log2 e
}

// GELU erf form as fused_math.h's gelu_erf: y = fma(−min(|v|·t, 3.15), E/2,
// max(v, 0)) with erfc(a) = t·E, t = 1/(1 + 0.46·a), E = e^(P(t) − a²) — the
// degree-5 fit of fused_math.h's erfc_factors. Rewritten for the SFU with
// b = a·√(log2 e), so that the exponent is base 2 without a multiply, and
// the /2 folded into it: E/2 = 2^(log2 e·P(t) − 1 − b²).
// 14 instructions per element (2 of them MUFU); the degree-7 fit took 16,
// Numerical Recipes' degree-9 erfcc 18.
__device__ __forceinline__ float gelu_erf_fast(float v) {
  constexpr double kSqrtLog2e = 1.20112240878644981;
  constexpr float kTScale = static_cast<float>(kErfcTScale / kSqrtLog2e);  // 0.46·a = b · 0.46/√(log2 e)
  const float b = fabsf(v) * static_cast<float>(kSqrtLog2e * 0.707106781186547524);  // |v|/√2 · √(log2 e)
  const float t = rcp_approx(fmaf(kTScale, b, 1.0f));
  float p = kLog2e * kErfcP5;  // log2 e · P(t)
  p = fmaf(p, t, kLog2e * kErfcP4);
  p = fmaf(p, t, kLog2e * kErfcP3);
  p = fmaf(p, t, kLog2e * kErfcP2);
  p = fmaf(p, t, kLog2e * kErfcP1);
  p = fmaf(p, t, kLog2e * kErfcP0 - 1.0f);
  const float half_e = exp2_approx(-fmaf(b, b, -p));  // E/2 = 2^(p − b²)
  const float vt = fminf(fabsf(v) * t, kGeluErfMaxVT);
  return fmaf(-vt, half_e, fmaxf(v, 0.0f));
}

}  // namespace qgemm::detail::fused
