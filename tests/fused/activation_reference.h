// activation_reference.h — silu and both GELUs in double (libm), written
// without cancellation (1 + tanh u = 2 / (1 + e^−2u), 1 + erf z = erfc(−z)),
// and the error an fp32 evaluation of them may have. The oracle of the CPU
// twin's functions (test_fused_math.cpp), of the GPU's SFU forms
// (test_fused_fast_math.cu) and of the ops' reference rows (fused_reference.h).
#pragma once

#include <algorithm>
#include <cmath>

namespace qgemm::test {

inline double silu_reference(double x) { return x / (1.0 + std::exp(-x)); }

inline double gelu_tanh_reference(double x) {
  const double k = std::sqrt(2.0 / M_PI);
  return x / (1.0 + std::exp(-2.0 * k * (x + 0.044715 * x * x * x)));
}

inline double gelu_erf_reference(double x) { return 0.5 * x * std::erfc(-x / std::sqrt(2.0)); }

// One fp32 ulp at |x| (the subnormal spacing near 0).
inline double fp32_ulp(double x) {
  const float f = static_cast<float>(std::fabs(x));
  return std::max(static_cast<double>(std::nextafter(f, INFINITY) - f), 0x1p-149);
}

// The error allowed to an fp32 evaluation at x: `ulps` ulps of the result,
// plus the conditioning of exp — an fp32 argument a carries a relative error
// up to |a|·2^-24, which e^a turns into the same relative error of the
// result (it only matters for the tiny results of negative x, far below any
// quantization step).
inline double silu_tolerance(double x, int ulps) {
  const double ref = silu_reference(x);
  return ulps * fp32_ulp(ref) + 2e-7 * std::fabs(x * ref) + 1e-30;
}

inline double gelu_tanh_tolerance(double x, int ulps) {
  const double ref = gelu_tanh_reference(x);
  const double arg = 2 * std::sqrt(2.0 / M_PI) * std::fabs(x + 0.044715 * x * x * x);  // |2u|
  return ulps * fp32_ulp(ref) + 2e-7 * arg * std::fabs(ref) + 1e-30;
}

// The rounding of an fp32 evaluation of the erf form, as for tanh; the GPU
// and the CPU twin evaluate the same polynomial, so they differ by this much.
inline double gelu_erf_rounding_tolerance(double x, int ulps) {
  const double ref = gelu_erf_reference(x);
  return ulps * fp32_ulp(ref) + 2e-7 * (1 + x * x) * std::fabs(ref) + 1e-30;
}

// Against libm, also the error of the erfc fit (fused_math.h, relative
// kErfcFitError·(1 + a²/2) with a = |x|/√2), carried by the erfc term
// |x|·erfc(|x|/√2)/2 of either sign's form.
inline double gelu_erf_tolerance(double x, int ulps, double fit_error) {
  const double erfc_term = 0.5 * std::fabs(x) * std::erfc(std::fabs(x) / std::sqrt(2.0));
  return gelu_erf_rounding_tolerance(x, ulps) + fit_error * (1 + x * x / 4) * erfc_term;
}

}  // namespace qgemm::test
