// fused_reference.h — an independent, naive double-precision evaluation of
// every fused op (libm exp / erf / tanh, textbook formulas), used to check
// the CPU backend itself. Only the residual update is fp32, as specified:
// round(residual + x) with the sum in fp32.
#pragma once

#include <cmath>
#include <vector>

#include "fused/activation_reference.h"
#include "fused/fused_problem.h"

namespace qgemm::test {

inline double input_value(const FusedCase& c, const FusedBuffers& b, int64_t t, int64_t col) {
  const int64_t i = t * (c.x_width() + c.pad) + col;
  if (c.int32_input()) {
    int32_t acc;
    std::memcpy(&acc, &b.x[i * 4], 4);
    const double sa = detail::load_float(b.scale_a.data(), c.per_token_a ? t : 0, DType::kFloat32);
    const double sw = detail::load_float(b.scale_w.data(), c.per_channel_w ? col : 0, DType::kFloat32);
    const double bias = b.bias.empty() ? 0.0 : detail::load_float(b.bias.data(), col, c.dtype);
    return sa * sw * acc + bias;
  }
  return detail::load_float(b.x.data(), i, c.dtype);
}

inline double param_value(const FusedCase& c, const std::vector<uint8_t>& p, int64_t h) {
  return p.empty() ? 0.0 : detail::load_float(p.data(), h, c.dtype);
}

// The residual after add_rms_norm_quant: round(float(residual) + float(x)).
inline std::vector<uint8_t> expected_residual(const FusedCase& c, const FusedBuffers& before) {
  std::vector<uint8_t> r = before.residual;
  const int64_t ld = c.hidden + c.pad, ldx = c.x_width() + c.pad;
  for (int64_t t = 0; t < c.tokens; ++t) {
    for (int64_t h = 0; h < c.hidden; ++h) {
      const float sum = detail::load_float(r.data(), t * ld + h, c.dtype) +
                        detail::load_float(before.x.data(), t * ldx + h, c.dtype);
      detail::store_float(r.data(), t * ld + h, c.dtype, sum);
    }
  }
  return r;
}

// y[t, :] of the op in double. `b` holds the inputs before the call, except
// that for kAddRmsNorm `residual_after` is the updated residual.
inline std::vector<double> reference_row(const FusedCase& c, const FusedBuffers& b,
                                         const std::vector<uint8_t>& residual_after, int64_t t) {
  const int64_t n = c.hidden, ld = n + c.pad;
  std::vector<double> v(n);
  for (int64_t h = 0; h < n; ++h) {
    switch (c.kind) {
      case FusedKind::kRmsNorm: v[h] = input_value(c, b, t, h); break;
      case FusedKind::kAddRmsNorm: v[h] = detail::load_float(residual_after.data(), t * ld + h, c.dtype); break;
      case FusedKind::kLayerNorm:
        v[h] = input_value(c, b, t, h) + param_value(c, b.bias, h) +
               (b.residual.empty() ? 0.0 : detail::load_float(b.residual.data(), t * ld + h, c.dtype));
        break;
      case FusedKind::kLayerNormInt32: {
        const double rs = detail::load_float(b.residual_scale.data(), c.residual_per_token ? t : 0, DType::kFloat32);
        v[h] = input_value(c, b, t, h) + rs * static_cast<int8_t>(b.residual[t * ld + h]);
        break;
      }
      case FusedKind::kSiluMul: {
        const double g = input_value(c, b, t, h), u = input_value(c, b, t, n + h);
        v[h] = silu_reference(g) * u;
        break;
      }
      case FusedKind::kGelu:
      case FusedKind::kGeluInt32: {
        double x = input_value(c, b, t, h);
        if (c.kind == FusedKind::kGelu) x += param_value(c, b.bias, h);
        v[h] = c.gelu_tanh ? gelu_tanh_reference(x) : gelu_erf_reference(x);
        break;
      }
    }
  }
  if (c.kind == FusedKind::kRmsNorm || c.kind == FusedKind::kAddRmsNorm) {
    double squares = 0;
    for (double x : v) squares += x * x;
    const double inv = 1.0 / std::sqrt(squares / n + c.eps);
    for (int64_t h = 0; h < n; ++h) v[h] = v[h] * inv * param_value(c, b.weight, h);
  } else if (c.kind == FusedKind::kLayerNorm || c.kind == FusedKind::kLayerNormInt32) {
    double mean = 0, var = 0;
    for (double x : v) mean += x;
    mean /= n;
    for (double x : v) var += (x - mean) * (x - mean);
    var /= n;
    const double inv = 1.0 / std::sqrt(var + c.eps);
    for (int64_t h = 0; h < n; ++h) {
      v[h] = (v[h] - mean) * inv * param_value(c, b.weight, h) + param_value(c, b.beta, h);
    }
  }
  return v;
}

}  // namespace qgemm::test
