// CPU backend of the fused ops. One row (token) at a time, rows spread over
// OpenMP threads (the steps compiled per instruction set, QGEMM_CPU_CLONES:
// fma is exact either way, so every clone gives the same bits); each row goes
// through the same four steps as a CUDA block:
//
//   1. prologue   v[h] from the inputs (residual add, bias, dequantization of
//                 an int32 GEMM output, activation) — fused/fused_math.h;
//                 kRmsNorm with a residual stores round(residual + x) and
//                 continues from the rounded value
//   2. statistics RMS: Σv²; LayerNorm: Σv, then Σ(v − mean)² — fp32 pairwise
//                 sums (blocks of 32 summed in order, then halves added), so
//                 the rounding error stays within (32 + log2 N)·2⁻²⁴
//   3. normalize  y[h] (RMS / LayerNorm formulas of fused_math.h)
//   4. quantize   static scale, or the row's amax (min/max) → scale, then
//                 q[h] — fused/fused_quant.h (qgemm::quantize()'s formulas)
#include "fused/cpu/fused_cpu.h"

#include <vector>

#include "core/cpu_simd.h"
#include "fused/fused_math.h"
#include "fused/fused_quant.h"
#include "gemm/cpu/output_store.h"

namespace qgemm::detail {
namespace {

using namespace fused;

// Σ term(v[i]) over n values: blocks of up to 32 in order, then pairwise.
template <typename Term>
float pairwise_sum(const float* v, int64_t n, const Term& term) {
  if (n <= 32) {
    float sum = 0.0f;
    for (int64_t i = 0; i < n; ++i) sum = f_add(sum, term(v[i]));
    return sum;
  }
  const int64_t half = (n / 2 + 31) / 32 * 32;
  return f_add(pairwise_sum(v, half, term), pairwise_sum(v + half, n - half, term));
}

float param(const FusedArgs& a, const void* p, int64_t h) { return load_float(p, h, a.param_dtype); }

float x_at(const FusedArgs& a, int64_t t, int64_t h) { return load_float(a.x, t * a.ldx + h, a.x_dtype); }

// fma(scale_a, scale_w·acc, bias) of the int32 input at [t, h].
float dequantized_x(const FusedArgs& a, int64_t t, int64_t h) {
  const int32_t acc = static_cast<const int32_t*>(a.x)[t * a.ldx + h];
  const float sa = a.scale_a[a.scale_a_per_token ? t : 0];
  const float sw = a.scale_w[a.scale_w_per_channel ? h : 0];
  const bool has_bias = a.bias != nullptr;
  return dequant_acc(acc, sa, sw, has_bias ? param(a, a.bias, h) : 0.0f, has_bias);
}

// Step 1: v[h] of row t.
QGEMM_CPU_CLONES void prologue(const FusedArgs& a, int64_t t, float* v) {
  const int64_t n = a.hidden;
  switch (a.op) {
    case FusedOp::kRmsNorm:
      for (int64_t h = 0; h < n; ++h) {
        v[h] = x_at(a, t, h);
        if (a.residual != nullptr) {
          const int64_t i = t * a.ld_residual + h;
          store_float(a.residual, i, a.x_dtype, f_add(load_float(a.residual, i, a.x_dtype), v[h]));
          v[h] = load_float(a.residual, i, a.x_dtype);
        }
      }
      break;
    case FusedOp::kLayerNorm:
      for (int64_t h = 0; h < n; ++h) {
        if (a.x_dtype == DType::kInt32) {
          const int8_t rq = static_cast<const int8_t*>(a.residual)[t * a.ld_residual + h];
          const float rs = a.residual_scale[a.residual_scale_per_token ? t : 0];
          v[h] = f_add(dequantized_x(a, t, h), dequant_residual(rq, rs));
          continue;
        }
        v[h] = x_at(a, t, h);
        if (a.bias != nullptr) v[h] = f_add(v[h], param(a, a.bias, h));
        if (a.residual != nullptr) {
          v[h] = f_add(v[h], load_float(a.residual, t * a.ld_residual + h, a.x_dtype));
        }
      }
      break;
    case FusedOp::kSiluMul:
      for (int64_t h = 0; h < n; ++h) v[h] = f_mul(silu(x_at(a, t, h)), x_at(a, t, n + h));
      break;
    case FusedOp::kGelu:
      for (int64_t h = 0; h < n; ++h) {
        float x;
        if (a.x_dtype == DType::kInt32) {
          x = dequantized_x(a, t, h);
        } else {
          x = x_at(a, t, h);
          if (a.bias != nullptr) x = f_add(x, param(a, a.bias, h));
        }
        v[h] = gelu(x, a.gelu_tanh);
      }
      break;
  }
}

// Steps 2 and 3: v → y in place.
QGEMM_CPU_CLONES void normalize(const FusedArgs& a, float* v) {
  const int64_t n = a.hidden;
  if (a.op == FusedOp::kRmsNorm) {
    const float inv = inv_rms(pairwise_sum(v, n, [](float x) { return f_mul(x, x); }), n, a.eps);
    for (int64_t h = 0; h < n; ++h) v[h] = rms_normalize(v[h], inv, param(a, a.weight, h));
  } else if (a.op == FusedOp::kLayerNorm) {
    const float mean = row_mean(pairwise_sum(v, n, [](float x) { return x; }), n);
    const float inv = inv_std(pairwise_sum(v, n,
                                           [mean](float x) {
                                             const float d = f_sub(x, mean);
                                             return f_mul(d, d);
                                           }),
                              n, a.eps);
    for (int64_t h = 0; h < n; ++h) {
      v[h] = layer_normalize(v[h], mean, inv, param(a, a.weight, h), param(a, a.beta, h));
    }
  }
}

// Step 4: the row's scale (static or dynamic) and its quantized values.
QGEMM_CPU_CLONES void quantize_row(const FusedArgs& a, int64_t t, const float* y) {
  RowCode c;
  if (!a.dynamic) {
    c = static_code(a.scale[0], a.azp != nullptr ? a.azp[0] : 0, a.narrow_range);
  } else if (a.azp != nullptr) {
    quant::MinMax stats;
    for (int64_t h = 0; h < a.hidden; ++h) stats.add(y[h]);
    c = asymmetric_code(stats, a.narrow_range);
    a.azp[t] = c.int8.zero_point;
  } else {
    quant::AbsMax stats;
    for (int64_t h = 0; h < a.hidden; ++h) stats.add(y[h]);
    c = symmetric_code(stats, a.q_fp8, a.narrow_range);
  }
  if (a.dynamic) a.scale[t] = c.scale;
  auto* q = static_cast<uint8_t*>(a.q) + t * a.ldq;
  for (int64_t h = 0; h < a.hidden; ++h) q[h] = quantize_bits(y[h], c, a.q_fp8);
}

}  // namespace

void fused_cpu(const FusedArgs& args) {
#pragma omp parallel
  {
    std::vector<float> row(static_cast<size_t>(args.hidden));
#pragma omp for schedule(static)
    for (int64_t t = 0; t < args.tokens; ++t) {
      prologue(args, t, row.data());
      normalize(args, row.data());
      quantize_row(args, t, row.data());
    }
  }
}

}  // namespace qgemm::detail
