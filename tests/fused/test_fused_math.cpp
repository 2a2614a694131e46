// The scalar math of the fused ops (fused/fused_math.h,
// fused/fused_quant.h) against libm in double: exp within 2 ulp, silu /
// GELU within a few fp32 ulps of their magnitude, and the quantization
// formulas on hand-picked values (ties to even, saturation, NaN, zero scale).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "common/test_util.h"
#include "fused/activation_reference.h"
#include "fused/fused_math.h"
#include "fused/fused_quant.h"

namespace qgemm::test {
namespace {

using namespace detail::fused;
namespace quant = detail::quant;

TEST(FusedMath, ExpWithinTwoUlp) {
  auto rng = make_rng();
  std::uniform_real_distribution<float> dist(-103.0f, 88.7f);
  for (int i = 0; i < 200000; ++i) {
    const float x = i < 1000 ? -10.0f + i * 0.02f : dist(rng);
    const double expected = std::exp(static_cast<double>(x));
    EXPECT_LE(std::fabs(exp_f32(x) - expected), 2 * fp32_ulp(expected)) << "x = " << x;
  }
  EXPECT_EQ(exp_f32(0.0f), 1.0f);
  EXPECT_EQ(exp_f32(89.0f), INFINITY);
  EXPECT_EQ(exp_f32(-105.0f), 0.0f);
  EXPECT_TRUE(std::isnan(exp_f32(NAN)));
}

// erfc(a) = t·E, the fit of scripts/fit_gelu_erfc.py, against libm: the
// fit's kErfcFitError·(1 + a²/2), exp_f32's 2 ulp (2.4e-7), and the fp32
// rounding of t and of the exponent P(t) − a² (≈ 1e-7 + 1.2e-7·a²).
TEST(FusedMath, ErfcFactorsWithinTheFitsBound) {
  double worst = 0.0;
  for (int i = 0; i <= 90000; ++i) {
    const float a = i * 1e-4f;  // 0 … 9: erfc(9) ≈ 4e-37, still a normal fp32
    const ErfcFactors f = erfc_factors(a);
    const double expected = std::erfc(static_cast<double>(a));
    const double relative = std::fabs(static_cast<double>(f.t) * f.e / expected - 1.0);
    const double bound = kErfcFitError * (1 + 0.5 * a * a) + 3.5e-7 + 1.3e-7 * static_cast<double>(a) * a;
    worst = std::max(worst, relative / bound);
    EXPECT_LE(relative, bound) << "a = " << a;
  }
  RecordProperty("worst_fraction_of_bound", std::to_string(worst));
  EXPECT_GT(worst, 0.1);  // the bound is not vacuous
}

TEST(FusedMath, SiluAndGeluCloseToLibm) {
  auto rng = make_rng();
  std::uniform_real_distribution<float> dist(-12.0f, 12.0f);
  for (int i = 0; i < 200000; ++i) {
    const double x = dist(rng);
    const float xf = static_cast<float>(x);
    EXPECT_NEAR(silu(xf), silu_reference(x), silu_tolerance(x, 4)) << x;
    EXPECT_NEAR(gelu_tanh(xf), gelu_tanh_reference(x), gelu_tanh_tolerance(x, 8)) << x;
    EXPECT_NEAR(gelu_erf(xf), gelu_erf_reference(x), gelu_erf_tolerance(x, 8, kErfcFitError)) << x;
  }
  EXPECT_EQ(gelu_erf(0.0f), 0.0f);
  EXPECT_EQ(gelu_tanh(0.0f), 0.0f);
  EXPECT_EQ(silu(0.0f), 0.0f);
  EXPECT_EQ(gelu_erf(100.0f), 100.0f);
  EXPECT_EQ(gelu_tanh(-100.0f), 0.0f);
  // The erf form's clamp of |v|·t (fused_math.h, kGeluErfMaxVT): the limits
  // at ±∞, NaN through.
  EXPECT_EQ(gelu_erf(INFINITY), INFINITY);
  EXPECT_EQ(gelu_erf(-INFINITY), 0.0f);
  EXPECT_EQ(gelu_erf(-100.0f), 0.0f);
  EXPECT_TRUE(std::isnan(gelu_erf(NAN)));
  for (float v : {1e-30f, 1.0f, 1e10f, 3.4e38f}) {
    EXPECT_LT(v * erfc_factors(v * 0.707106781f).t, kGeluErfMaxVT) << v;  // the clamp is inactive
  }
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

// The fused ops quantize with quantize()'s formulas (quant_math.h): codes
// from y · (1/s), dynamic scales from the row's finite statistics.
TEST(FusedMath, QuantizationFormulas) {
  const RowCode unit = static_code(1.0f, 0, false), narrow = static_code(1.0f, 0, true);
  EXPECT_EQ(static_cast<int8_t>(quantize_bits(2.5f, unit, false)), 2);  // ties to even
  EXPECT_EQ(static_cast<int8_t>(quantize_bits(3.5f, unit, false)), 4);
  EXPECT_EQ(static_cast<int8_t>(quantize_bits(-2.5f, unit, false)), -2);
  EXPECT_EQ(static_cast<int8_t>(quantize_bits(-1000.0f, unit, false)), -128);
  EXPECT_EQ(static_cast<int8_t>(quantize_bits(-1000.0f, narrow, false)), -127);
  EXPECT_EQ(static_cast<int8_t>(quantize_bits(INFINITY, unit, false)), 127);
  EXPECT_EQ(static_cast<int8_t>(quantize_bits(NAN, unit, false)), 0);
  EXPECT_EQ(static_cast<int8_t>(quantize_bits(1.0f, static_code(1.0f, 5, false), false)), 6);
  EXPECT_EQ(quantize_bits(1000.0f, unit, true), 0x7e);  // saturates to 448
  EXPECT_EQ(quantize_bits(-1.0f, static_code(0.5f, 0, false), true), numeric::float_to_fp8e4m3_bits(-2.0f));

  // Full-range symmetric codes (z = 0, [−128, 127]) take the saturating
  // conversion on the GPU (test_fused_fast_math.cu); here the flag.
  EXPECT_TRUE(unit.int8_full_range());
  EXPECT_FALSE(narrow.int8_full_range());
  EXPECT_FALSE(static_code(1.0f, 5, false).int8_full_range());
  for (float y : {2.5f, -2.5f, 127.49f, 127.5f, -128.5f, -129.0f, 1e30f, -INFINITY, NAN}) {
    EXPECT_EQ(quantize_as<QuantOut::kInt8FullRange>(y, unit), quantize_as<QuantOut::kInt8>(y, unit)) << y;
  }

  quant::AbsMax amax;
  quant::MinMax range;
  for (float y : {-3.0f, 1.0f, NAN, INFINITY}) amax.add(y), range.add(y);
  EXPECT_EQ(symmetric_code(amax, false, false).scale, 3.0f / 127.0f);
  EXPECT_EQ(symmetric_code(amax, true, false).scale, 3.0f / 448.0f);
  const RowCode asym = asymmetric_code(range, false);
  EXPECT_EQ(asym.scale, 4.0f / 255.0f);
  EXPECT_EQ(asym.int8.zero_point,
            static_cast<int32_t>(std::nearbyint(-128.0f - (-3.0f) * (1.0f / asym.scale))));
  EXPECT_EQ(static_cast<int8_t>(quantize_bits(-3.0f, asym, false)), -128);  // lo maps to −128
  EXPECT_EQ(symmetric_code(quant::AbsMax{}, false, false).scale, 1.0f);   // all-zero row
}

}  // namespace
}  // namespace qgemm::test
