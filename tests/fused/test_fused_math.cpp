// The scalar math of the fused ops (fused/fused_math.h,
// fused/fused_quant_math.h) against libm in double: exp within 2 ulp, silu /
// GELU within a few fp32 ulps of their magnitude, and the quantization
// formulas on hand-picked values (ties to even, saturation, NaN, zero scale).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "common/test_util.h"
#include "fused/fused_math.h"
#include "fused/fused_quant_math.h"

namespace qgemm::test {
namespace {

using namespace detail::fused;

double ulp_of(double x) {
  const float f = static_cast<float>(std::fabs(x));
  return std::max(static_cast<double>(std::nextafter(f, INFINITY) - f), 0x1p-149);
}

TEST(FusedMath, ExpWithinTwoUlp) {
  auto rng = make_rng();
  std::uniform_real_distribution<float> dist(-103.0f, 88.7f);
  for (int i = 0; i < 200000; ++i) {
    const float x = i < 1000 ? -10.0f + i * 0.02f : dist(rng);
    const double expected = std::exp(static_cast<double>(x));
    EXPECT_LE(std::fabs(exp_f32(x) - expected), 2 * ulp_of(expected)) << "x = " << x;
  }
  EXPECT_EQ(exp_f32(0.0f), 1.0f);
  EXPECT_EQ(exp_f32(89.0f), INFINITY);
  EXPECT_EQ(exp_f32(-105.0f), 0.0f);
  EXPECT_TRUE(std::isnan(exp_f32(NAN)));
}

TEST(FusedMath, SiluAndGeluCloseToLibm) {
  auto rng = make_rng();
  std::uniform_real_distribution<float> dist(-12.0f, 12.0f);
  const double k = std::sqrt(2.0 / M_PI);
  for (int i = 0; i < 200000; ++i) {
    const double x = dist(rng);
    const double silu_ref = x / (1.0 + std::exp(-x));
    // 1 + tanh(u) = 2 / (1 + e^−2u) and 1 + erf(z) = erfc(−z): no cancellation.
    const double tanh_ref = x / (1.0 + std::exp(-2.0 * k * (x + 0.044715 * x * x * x)));
    const double erf_ref = 0.5 * x * std::erfc(-x / std::sqrt(2.0));
    const float xf = static_cast<float>(x);
    // A few ulps of the result, plus the conditioning of exp: an fp32
    // argument a carries a relative error up to |a|·2^-24, which e^a turns
    // into the same relative error of the result (it only matters for the
    // tiny results of negative x, far below any quantization step).
    const double tanh_arg = 2 * k * std::fabs(x + 0.044715 * x * x * x);
    EXPECT_NEAR(silu(xf), silu_ref, 4 * ulp_of(silu_ref) + 2e-7 * std::fabs(x * silu_ref) + 1e-30) << x;
    EXPECT_NEAR(gelu_tanh(xf), tanh_ref, 8 * ulp_of(tanh_ref) + 2e-7 * tanh_arg * std::fabs(tanh_ref) + 1e-30) << x;
    EXPECT_NEAR(gelu_erf(xf), erf_ref, 8 * ulp_of(erf_ref) + 2e-7 * (1 + x * x) * std::fabs(erf_ref) + 1e-30) << x;
  }
  EXPECT_EQ(gelu_erf(0.0f), 0.0f);
  EXPECT_EQ(gelu_tanh(0.0f), 0.0f);
  EXPECT_EQ(silu(0.0f), 0.0f);
  EXPECT_EQ(gelu_erf(100.0f), 100.0f);
  EXPECT_EQ(gelu_tanh(-100.0f), 0.0f);
}

TEST(FusedMath, NormalizationFormulas) {
  EXPECT_EQ(inv_rms(16.0f, 4, 0.0f), 0.5f);  // mean square 4 → 1/2
  EXPECT_EQ(rms_normalize(3.0f, 0.5f, 2.0f), 3.0f);
  EXPECT_EQ(row_mean(10.0f, 4), 2.5f);
  EXPECT_EQ(inv_std(16.0f, 4, 0.0f), 0.5f);
  EXPECT_EQ(layer_normalize(4.0f, 2.0f, 0.5f, 3.0f, 1.0f), 4.0f);  // (4−2)·0.5·3 + 1
  EXPECT_EQ(dequant_acc(1000, 0.5f, 0.25f, 1.0f, true), 126.0f);
  EXPECT_EQ(dequant_residual(-4, 0.5f), -2.0f);
}

TEST(FusedMath, QuantizationFormulas) {
  const QuantRange int8 = quant_range(false, false), narrow = quant_range(false, true);
  EXPECT_EQ(quantize_int8(2.5f, 1.0f, 0, int8), 2);   // ties to even
  EXPECT_EQ(quantize_int8(3.5f, 1.0f, 0, int8), 4);
  EXPECT_EQ(quantize_int8(-2.5f, 1.0f, 0, int8), -2);
  EXPECT_EQ(quantize_int8(-1000.0f, 1.0f, 0, int8), -128);
  EXPECT_EQ(quantize_int8(-1000.0f, 1.0f, 0, narrow), -127);
  EXPECT_EQ(quantize_int8(INFINITY, 1.0f, 0, int8), 127);
  EXPECT_EQ(quantize_int8(NAN, 1.0f, 0, int8), 0);
  EXPECT_EQ(quantize_int8(1.0f, 1.0f, 5, int8), 6);
  EXPECT_EQ(quantize_fp8(1000.0f, 1.0f), 0x7e);  // saturates to 448
  EXPECT_EQ(quantize_fp8(-1.0f, 0.5f), numeric::float_to_fp8e4m3_bits(-2.0f));

  RowRange r;
  r.add(-3.0f), r.add(1.0f), r.add(NAN), r.add(INFINITY);
  EXPECT_EQ(r.amax, 3.0f);
  EXPECT_EQ(r.lo, -3.0f);
  EXPECT_EQ(r.hi, 1.0f);
  EXPECT_EQ(dynamic_row_scale(r, int8, false).scale, 3.0f / 127.0f);
  const RowScale asym = dynamic_row_scale(r, int8, true);
  EXPECT_EQ(asym.scale, 4.0f / 255.0f);
  EXPECT_EQ(asym.zero_point, static_cast<int32_t>(std::nearbyint(-128.0f - (-3.0f) / asym.scale)));
  EXPECT_EQ(dynamic_row_scale(RowRange{}, int8, false).scale, 1.0f);  // all-zero row
}

}  // namespace
}  // namespace qgemm::test
