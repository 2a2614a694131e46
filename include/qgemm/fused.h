// qgemm/fused.h — transformer ops that emit the quantized activation (and
// its scales) the next W8A8 GEMM reads, so no 16-bit intermediate is written
// and read back just to be quantized (docs/fused.md has every formula).
//
// Layouts: every [T, ·] matrix is row-major (stride(1) == 1, stride(0) >= its
// width); per-hidden vectors (weight, gamma, beta, bias, scale_w) hold N
// contiguous elements. T = tokens, N = hidden size of the output row.
// All tensors live on one device; CUDA work is enqueued on `stream` and the
// call returns without synchronizing. All intermediate math is fp32.
//
// Quantization of the op's result y [T, N] into QuantOutput: exactly the
// formulas of qgemm/quant.h, so the codes and scales are the bits quantize()
// would give for the fp32 row y (rne = round half to even, sat = clamp to
// [qmin, qmax], r = 1/s, one division per row):
//   static            s, z are inputs ([1])          q = sat(rne(y · r) + z)
//   dynamic per token s[t] = amax_h |y[t,h]| / qmax  q = sat(rne(y · r))
//     asymmetric      s[t] = (hi − lo) / 255, z[t] = rne(−128 − lo · r),
//                     lo = min(0, min y[t,:]), hi = max(0, max y[t,:])
// int8: qmax = 127, qmin = −128 (−127 with narrow_range); fp8 e4m3: ±448,
// symmetric only. A scale that would be 0 is written as 1. Non-finite values
// are left out of amax / min / max.
//
// CPU and CUDA evaluate the same formulas. They differ in the order of the
// norms' fp32 row sums and, for silu and GELU, in e^x and 1/x (the GPU's
// special-function unit, a few fp32 ulps from the CPU's): a code may differ
// by one step where y sits on a rounding boundary, a dynamic scale by a few
// ulps (docs/fused.md, "CPU/GPU differences").
#pragma once

#include <cstdint>
#include <optional>

#include "qgemm/tensor.h"

namespace qgemm {

enum class FusedScale : uint8_t {
  kStatic,           // scale (and azp) [1] are inputs
  kDynamicPerToken,  // scale (and azp) [T] or [T,1] are outputs, one per row
};

// The quantized activation an op writes, with its scales. Asymmetric (int8
// only) exactly when azp is given: an input for kStatic, an output otherwise.
struct QuantOutput {
  TensorView q;                   // [T, N] int8 or fp8 e4m3
  TensorView scale;               // fp32
  std::optional<TensorView> azp;  // int32 zero points, shaped like scale
  FusedScale mode = FusedScale::kDynamicPerToken;
  bool narrow_range = false;      // int8 range [−127, 127] (FasterTransformer)
};

// RMSNorm: y[t,h] = x[t,h] / sqrt(mean_h x[t,:]² + eps) · weight[h], quantized.
// x [T,N] fp32 / fp16 / bf16; weight [N] in x's dtype; eps >= 0.
void rms_norm_quant(const QuantOutput& out, const TensorView& x, const TensorView& weight,
                    float eps, Stream stream = nullptr);

// Residual add + RMSNorm: residual[t,h] ← round(residual[t,h] + x[t,h]) in place
// (rounded to the residual dtype = x's dtype), then y = RMSNorm(residual)·weight
// computed from the rounded, stored residual, quantized.
void add_rms_norm_quant(const QuantOutput& out, const TensorView& x, const TensorView& residual,
                        const TensorView& weight, float eps, Stream stream = nullptr);

// LayerNorm (BERT): v = x + bias + residual (bias, residual optional; fp32 sum,
// left to right), y = (v − mean(v)) / sqrt(var(v) + eps) · gamma + beta, with
// the biased variance var = mean((v − mean)²). x [T,N]; residual [T,N];
// gamma, beta, bias [N]; all in x's dtype (fp32 / fp16 / bf16).
void layer_norm_quant(const QuantOutput& out, const TensorView& x, const TensorView& gamma,
                      const TensorView& beta, float eps,
                      const std::optional<TensorView>& residual = std::nullopt,
                      const std::optional<TensorView>& bias = std::nullopt,
                      Stream stream = nullptr);

// The int32 output of an int8 GEMM, dequantized in the kernel exactly as
// scaled_mm's epilogue does (qgemm/gemm.h): x[t,h] = fma(scale_a[t], scale_w[h]·acc[t,h], bias[h]).
struct Int32GemmOutput {
  TensorView acc;      // [T, N] int32
  TensorView scale_a;  // fp32, 1 or T elements ([1], [T], [T,1]): the activation scale
  TensorView scale_w;  // fp32, 1 or N elements ([1], [N], [1,N]): the weight scales
};

// FasterTransformer's fully quantized encoder LayerNorm:
//   v = fma(scale_a, scale_w·acc, bias) + residual_scale[t]·residual[t,h]
//   y = LayerNorm(v)·gamma + beta, quantized.
// residual [T,N] int8 with residual_scale fp32 (1 or T elements); bias, gamma,
// beta [N], one dtype among fp32 / fp16 / bf16.
void layer_norm_quant_int32(const QuantOutput& out, const Int32GemmOutput& x,
                            const TensorView& residual, const TensorView& residual_scale,
                            const TensorView& gamma, const TensorView& beta, float eps,
                            const std::optional<TensorView>& bias = std::nullopt,
                            Stream stream = nullptr);

// SiLU-and-mul: x [T, 2N] holds gate | up; y[t,h] = silu(gate[t,h]) · up[t,h]
// with silu(g) = g / (1 + exp(−g)), quantized into [T, N].
void silu_and_mul_quant(const QuantOutput& out, const TensorView& x, Stream stream = nullptr);

// GELU of x + bias:   kErf:  y = v/2 · (1 + erf(v / √2))
//                     kTanh: y = v/2 · (1 + tanh(√(2/π)·(v + 0.044715·v³)))
// (torch's approximate="none" / "tanh"). erf comes from a polynomial fit of
// erfc: y within about 3e-7 absolute and 2e-6 relative for |v| ≤ 1, far
// below a quantization step (docs/fused.md, "The ops' arithmetic").
enum class GeluApproximation : uint8_t { kErf, kTanh };

// bias + GELU from fp32 / fp16 / bf16 x [T,N] (bias [N] in x's dtype, optional).
void bias_gelu_quant(const QuantOutput& out, const TensorView& x,
                     const std::optional<TensorView>& bias, GeluApproximation approximation,
                     Stream stream = nullptr);

// bias + GELU from an int8 GEMM's int32 output: v = fma(scale_a, scale_w·acc, bias);
// bias [N] fp32 / fp16 / bf16, optional.
void bias_gelu_quant_int32(const QuantOutput& out, const Int32GemmOutput& x,
                           const std::optional<TensorView>& bias, GeluApproximation approximation,
                           Stream stream = nullptr);

}  // namespace qgemm
