// CPU quantize / dequantize: hand-checked values, defined edge cases (zero
// rows, NaN, ±Inf), the scale formulas, quantize→dequantize round trips
// within half a step, asymmetric activations through scaled_mm_azp, and the
// int4 weight helpers.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "qgemm/gemm.h"
#include "quant/quant_problem.h"

namespace qgemm::test {
namespace {

QuantOptions per_token(bool symmetric = true) {
  QuantOptions o;
  o.mode = QuantMode::kDynamicPerToken;
  o.symmetric = symmetric;
  return o;
}

TEST(QuantCpu, SymmetricPerTokenByHand) {
  // amax = 15.875 → s = 15.875 / 127 = 0.125 exactly; x/s = 127, −1.5, 0.5, 24.
  std::vector<float> x{15.875f, -0.1875f, 0.0625f, 3.0f};
  std::vector<int8_t> q(4, 99);
  float scale = -1;
  quantize(TensorView(q.data(), DType::kInt8, {1, 4}), TensorView(&scale, DType::kFloat32, {1}), std::nullopt,
           TensorView(x.data(), DType::kFloat32, {1, 4}), per_token());
  EXPECT_EQ(scale, 0.125f);
  EXPECT_EQ(q, (std::vector<int8_t>{127, -2, 0, 24}));  // ties go to even
}

TEST(QuantCpu, AsymmetricPerTokenByHand) {
  // min = −1, max = 1.55 → s = 2.55 / 255 = 0.01, z = rne(−128 + 100) = −28.
  std::vector<float> x{-1.0f, 1.55f, 0.0f};
  std::vector<int8_t> q(3);
  float scale;
  int32_t azp;
  quantize(TensorView(q.data(), DType::kInt8, {1, 3}), TensorView(&scale, DType::kFloat32, {1}),
           TensorView(&azp, DType::kInt32, {1}), TensorView(x.data(), DType::kFloat32, {1, 3}), per_token(false));
  EXPECT_FLOAT_EQ(scale, 0.01f);
  EXPECT_EQ(azp, -28);
  EXPECT_EQ(q[0], -128);  // min maps to −128
  EXPECT_EQ(q[1], 127);   // max maps to 127
  EXPECT_EQ(q[2], -28);   // 0 maps exactly to the zero point
}

TEST(QuantCpu, ZeroRowsGetScaleOneAndZeroOutputs) {
  std::vector<float> x(6, 0.0f);
  for (bool symmetric : {true, false}) {
    std::vector<int8_t> q(6, 5);
    std::vector<float> scale(2, -1);
    std::vector<int32_t> azp(2, 99);
    quantize(TensorView(q.data(), DType::kInt8, {2, 3}), TensorView(scale.data(), DType::kFloat32, {2}),
             symmetric ? std::nullopt : std::optional<TensorView>(TensorView(azp.data(), DType::kInt32, {2})),
             TensorView(x.data(), DType::kFloat32, {2, 3}), per_token(symmetric));
    EXPECT_EQ(scale, (std::vector<float>{1.0f, 1.0f}));
    std::vector<float> back(6, 7.0f);
    dequantize(TensorView(back.data(), DType::kFloat32, {2, 3}), TensorView(q.data(), DType::kInt8, {2, 3}),
               TensorView(scale.data(), DType::kFloat32, {2}),
               symmetric ? std::nullopt : std::optional<TensorView>(TensorView(azp.data(), DType::kInt32, {2})),
               per_token(symmetric));
    EXPECT_EQ(back, std::vector<float>(6, 0.0f)) << "symmetric=" << symmetric;
  }
}

TEST(QuantCpu, NonFiniteInputs) {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::nanf("");
  std::vector<float> x{2.0f, inf, -inf, nan, -1.0f};
  std::vector<int8_t> q(5);
  float scale;
  QuantOptions narrow = per_token();
  narrow.narrow_range = true;
  quantize(TensorView(q.data(), DType::kInt8, {1, 5}), TensorView(&scale, DType::kFloat32, {1}), std::nullopt,
           TensorView(x.data(), DType::kFloat32, {1, 5}), narrow);
  EXPECT_EQ(scale, 2.0f / 127.0f);  // non-finite elements are left out of amax
  EXPECT_EQ(q, (std::vector<int8_t>{127, 127, -127, 0, -64}));  // −63.5 → −64 (even)
  std::vector<uint8_t> f8(5);
  quantize(TensorView(f8.data(), DType::kFloat8E4M3, {1, 5}), TensorView(&scale, DType::kFloat32, {1}),
           std::nullopt, TensorView(x.data(), DType::kFloat32, {1, 5}), per_token());
  EXPECT_EQ(scale, 2.0f / 448.0f);
  EXPECT_EQ(f8[0], 0x7e);          // 448
  EXPECT_EQ(f8[1], 0x7e);          // +Inf saturates
  EXPECT_EQ(f8[2], 0xfe);          // −Inf saturates
  EXPECT_EQ(f8[3], 0x7f);          // NaN → the fp8 NaN code 0x7f
  EXPECT_EQ(numeric::fp8e4m3_bits_to_float(f8[4]), -224.0f);
}

TEST(QuantCpu, NaNQuantizesToTheZeroPointAndDequantizesToCanonicalNaN) {
  const float nan = std::nanf(""), neg_nan = -std::nanf("");
  std::vector<float> x{-1.0f, nan, 1.55f, neg_nan};
  std::vector<int8_t> q(4);
  float scale;
  int32_t azp;
  quantize(TensorView(q.data(), DType::kInt8, {1, 4}), TensorView(&scale, DType::kFloat32, {1}),
           TensorView(&azp, DType::kInt32, {1}), TensorView(x.data(), DType::kFloat32, {1, 4}), per_token(false));
  EXPECT_EQ(q[1], azp);  // NaN → the code of 0
  EXPECT_EQ(q[3], azp);
  // fp8: both NaNs → 0x7f; dequantized, NaN codes give the canonical quiet NaN.
  std::vector<uint8_t> f8(4);
  quantize(TensorView(f8.data(), DType::kFloat8E4M3, {1, 4}), TensorView(&scale, DType::kFloat32, {1}),
           std::nullopt, TensorView(x.data(), DType::kFloat32, {1, 4}), per_token());
  EXPECT_EQ(f8[1], 0x7f);
  EXPECT_EQ(f8[3], 0x7f);
  f8[0] = 0xff;  // the negative NaN code, as another producer may write it
  std::vector<uint16_t> bf16(4);
  std::vector<float> f32(4);
  dequantize(TensorView(bf16.data(), DType::kBFloat16, {1, 4}), TensorView(f8.data(), DType::kFloat8E4M3, {1, 4}),
             TensorView(&scale, DType::kFloat32, {1}), std::nullopt, per_token());
  dequantize(TensorView(f32.data(), DType::kFloat32, {1, 4}), TensorView(f8.data(), DType::kFloat8E4M3, {1, 4}),
             TensorView(&scale, DType::kFloat32, {1}), std::nullopt, per_token());
  for (int i : {0, 1, 3}) {
    EXPECT_EQ(bf16[i], 0x7fc0) << i;
    EXPECT_EQ(numeric::float_bits(f32[i]), 0x7fc00000u) << i;
  }
}

TEST(QuantCpu, CodesUseTheReciprocalOfTheScale) {
  // q = rne(x · fl(1/s)), not rne(x / s): with s = 7, 45.5 / 7 = 6.5 rounds to
  // 6 but 45.5 · fl(1/7) = 6.5000005 rounds to 7 (still half a step from x).
  std::vector<float> x{45.5f, -45.5f, 10.5f};
  std::vector<int8_t> q(3);
  float scale = 7.0f;
  QuantOptions o;
  o.mode = QuantMode::kStaticPerTensor;
  quantize(TensorView(q.data(), DType::kInt8, {1, 3}), TensorView(&scale, DType::kFloat32, {1}), std::nullopt,
           TensorView(x.data(), DType::kFloat32, {1, 3}), o);
  const float inv = 1.0f / 7.0f;
  EXPECT_EQ(q, (std::vector<int8_t>{7, -7, static_cast<int8_t>(std::nearbyint(10.5f * inv))}));
}

TEST(QuantCpu, TinyScalesStayInvertible) {
  // amax = 1e-39 (subnormal): amax/127 is subnormal and 1/s would overflow;
  // the scale is raised to 2^-126, the codes stay finite and ordered.
  std::vector<float> x{1e-39f, -5e-40f, 0.0f};
  std::vector<int8_t> q(3);
  float scale;
  quantize(TensorView(q.data(), DType::kInt8, {1, 3}), TensorView(&scale, DType::kFloat32, {1}), std::nullopt,
           TensorView(x.data(), DType::kFloat32, {1, 3}), per_token());
  EXPECT_EQ(scale, std::ldexp(1.0f, -126));
  EXPECT_EQ(q[0], static_cast<int8_t>(std::nearbyint(1e-39 / std::ldexp(1.0, -126))));
  EXPECT_EQ(q[2], 0);
}

TEST(QuantCpu, LargeStaticZeroPointsClampWithoutOverflow) {
  // clamp(rne(x/s) + z, −128, 127) exactly, saturated products included, for |z| ≤ 2^30.
  std::vector<float> x{1e30f, -1e30f, 0.0f, 5.0f};
  float scale = 1.0f;
  QuantOptions o;
  o.mode = QuantMode::kStaticPerTensor;
  for (int32_t z : {-(1 << 30), -1000, 1000, 1 << 30}) {
    std::vector<int8_t> q(4);
    quantize(TensorView(q.data(), DType::kInt8, {1, 4}), TensorView(&scale, DType::kFloat32, {1}),
             TensorView(&z, DType::kInt32, {1}), TensorView(x.data(), DType::kFloat32, {1, 4}), o);
    const int8_t shifted = z < 0 ? -128 : 127;  // 0 + z and 5 + z
    EXPECT_EQ(q, (std::vector<int8_t>{127, -128, shifted, shifted})) << "z=" << z;
  }
}

TEST(QuantCpu, StaticPerTensorSaturatesAndAddsZeroPoint) {
  std::vector<float> x{0.5f, -100.0f, 100.0f, 0.25f};
  std::vector<int8_t> q(4);
  float scale = 0.5f;
  int32_t azp = 3;
  QuantOptions o;
  o.mode = QuantMode::kStaticPerTensor;
  quantize(TensorView(q.data(), DType::kInt8, {2, 2}), TensorView(&scale, DType::kFloat32, {1}),
           TensorView(&azp, DType::kInt32, {1}), TensorView(x.data(), DType::kFloat32, {2, 2}), o);
  EXPECT_EQ(q, (std::vector<int8_t>{4, -128, 127, 3}));  // rne(0.5) = 0 (even) + 3
}

// Round trip and scale formulas over many shapes, dtypes and modes.
class QuantCpuRoundTrip : public ::testing::TestWithParam<QuantCase> {};

TEST_P(QuantCpuRoundTrip, WithinHalfAStep) {
  const QuantCase& c = GetParam();
  auto rng = make_rng(static_cast<uint64_t>(c.tokens * 131 + c.hidden));
  QuantBuffers b(c, rng);
  b.quantize_cpu();
  b.dequantize_cpu();
  const auto range = c.quant == DType::kFloat8E4M3 ? 448.0f : 127.0f;
  int64_t bad = 0;
  for (int64_t r = 0; r < c.tokens; ++r) {
    for (int64_t i = 0; i < c.hidden; ++i) {
      const int64_t s = b.scale_index(r, i);
      const double scale = b.scale[s];
      ASSERT_TRUE(std::isfinite(scale) && scale > 0) << c.name() << " row " << r;
      const double x = b.input(r, i);
      if (!std::isfinite(x)) continue;  // NonFiniteInputs checks these
      const double back = b.output(r, i);
      const double shifted = x / scale + (b.azp.empty() ? 0 : b.azp[s]);
      if (c.options.mode == QuantMode::kStaticPerTensor && std::fabs(shifted) > range - 2) continue;  // saturated
      // Half a step of the int8 grid, or half an fp8 ulp at x/s (plus its
      // subnormal floor); x·(1/s) is within 2^-15 (|x/s| ≤ 256: two fp32
      // roundings) of x/s; then the rounding of the dequantized value into
      // the input dtype.
      double step = c.quant == DType::kInt8 ? 0.5 * scale
                                            : scale * (std::ldexp(std::fabs(x / scale), -4) + std::ldexp(1.0, -10));
      step += scale * std::ldexp(1.0, -15) + unit_roundoff(c.in) * std::fabs(back) + subnormal_spacing(c.in);
      if (!(std::fabs(back - x) <= step)) {
        if (bad++ < 5) ADD_FAILURE() << c.name() << " [" << r << "," << i << "] x=" << x << " back=" << back << " scale=" << scale;
      }
    }
  }
  EXPECT_EQ(bad, 0);
}

std::vector<QuantCase> round_trip_cases() {
  std::vector<QuantCase> cases;
  const int64_t shapes[][2] = {{1, 1}, {3, 7}, {13, 64}, {64, 384}, {5, 4096}, {2, 5120}};
  for (DType in : {DType::kFloat32, DType::kFloat16, DType::kBFloat16}) {
    for (DType quant : {DType::kInt8, DType::kFloat8E4M3}) {
      for (const auto& s : shapes) {
        for (int variant = 0; variant < 6; ++variant) {
          QuantCase c;
          c.tokens = s[0], c.hidden = s[1], c.in = in, c.quant = quant;
          c.options.mode = variant < 2 ? QuantMode::kDynamicPerToken
                           : variant < 5 ? QuantMode::kDynamicPerGroup
                                         : QuantMode::kStaticPerTensor;
          c.options.symmetric = variant % 2 == 0 || quant != DType::kInt8;
          c.options.narrow_range = variant == 4;
          c.options.group_size = variant == 2 ? 32 : variant == 3 ? 64 : 128;
          c.scale_col_major = variant == 3;
          c.specials = variant == 1 || variant == 2;
          c.row_pad = variant == 3 ? 5 : 0;
          c.offset = variant == 4 ? 3 : 0;
          if (c.options.mode == QuantMode::kDynamicPerGroup && c.hidden % c.options.group_size != 0) {
            c.options.group_size = c.hidden;  // the whole row as one group
          }
          cases.push_back(c);
        }
      }
    }
  }
  return cases;
}

INSTANTIATE_TEST_SUITE_P(Modes, QuantCpuRoundTrip, ::testing::ValuesIn(round_trip_cases()),
                         [](const auto& info) { return info.param.name() + "_" + std::to_string(info.index); });

TEST(QuantCpu, DynamicScalesFollowTheFormulas) {
  QuantCase c;
  c.tokens = 40, c.hidden = 256, c.in = DType::kFloat32;
  c.options.mode = QuantMode::kDynamicPerGroup;
  c.options.group_size = 64;
  c.options.symmetric = false;
  auto rng = make_rng();
  QuantBuffers b(c, rng);
  b.quantize_cpu();
  for (int64_t r = 0; r < c.tokens; ++r) {
    for (int64_t g = 0; g < c.groups(); ++g) {
      float lo = 0, hi = 0;
      for (int64_t i = g * 64; i < (g + 1) * 64; ++i) lo = std::fmin(lo, b.input(r, i)), hi = std::fmax(hi, b.input(r, i));
      const float expected = hi - lo > 0 ? (hi - lo) / 255.0f : 1.0f;
      const int64_t s = b.scale_index(r, g * 64);
      EXPECT_EQ(b.scale[s], expected);
      EXPECT_EQ(b.azp[s], static_cast<int32_t>(std::nearbyint(-128.0f - lo / expected)));
      EXPECT_GE(b.azp[s], -128);
      EXPECT_LE(b.azp[s], 127);
    }
  }
}

TEST(QuantCpu, AsymmetricActivationsThroughScaledMmAzp) {
  // x ≈ s_x·(q − z) per token, w ≈ s_w·q_w per channel: scaled_mm_azp must
  // reproduce x·wᵀ up to the quantization error.
  const int64_t m = 16, n = 24, k = 96;
  auto rng = make_rng();
  auto x = random_float(rng, m * k, -0.5f, 2.0f);  // skewed: asymmetric pays off
  auto w = random_float(rng, n * k, -1.0f, 1.0f);
  std::vector<int8_t> xq(m * k), wq(n * k);
  std::vector<float> sx(m), sw(n);
  std::vector<int32_t> zx(m), adj(n);
  quantize(TensorView(xq.data(), DType::kInt8, {m, k}), TensorView(sx.data(), DType::kFloat32, {m}),
           TensorView(zx.data(), DType::kInt32, {m}), TensorView(x.data(), DType::kFloat32, {m, k}), per_token(false));
  quantize(TensorView(wq.data(), DType::kInt8, {n, k}), TensorView(sw.data(), DType::kFloat32, {n}), std::nullopt,
           TensorView(w.data(), DType::kFloat32, {n, k}), per_token());
  const auto wq_t = TensorView::strided(wq.data(), DType::kInt8, {k, n}, {1, k});
  azp_adj(TensorView(adj.data(), DType::kInt32, {n}), wq_t);
  std::vector<float> out(m * n);
  scaled_mm_azp(TensorView(out.data(), DType::kFloat32, {m, n}), TensorView(xq.data(), DType::kInt8, {m, k}), wq_t,
                TensorView(sx.data(), DType::kFloat32, {m}), TensorView(sw.data(), DType::kFloat32, {n}),
                TensorView(adj.data(), DType::kInt32, {n}), TensorView(zx.data(), DType::kInt32, {m}));
  double err2 = 0, ref2 = 0;
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      double ref = 0;
      for (int64_t kk = 0; kk < k; ++kk) ref += static_cast<double>(x[i * k + kk]) * w[j * k + kk];
      err2 += (out[i * n + j] - ref) * (out[i * n + j] - ref);
      ref2 += ref * ref;
    }
  }
  EXPECT_LT(std::sqrt(err2 / ref2), 0.02);
}

TEST(QuantCpu, QuantizeWeightPerChannelAndPerGroup) {
  // quantize_weight is quantize in its dynamic symmetric modes, narrow range by default.
  const int64_t n = 6, k = 256;
  auto rng = make_rng();
  auto w = random_float(rng, n * k, -0.3f, 0.2f);
  for (int group : {0, 32, 128}) {
    const int64_t groups = group == 0 ? 1 : k / group;
    std::vector<int8_t> q(n * k), expected_q(n * k);
    std::vector<float> scale(n * groups), expected_scale(n * groups);
    const TensorView scale_v = group == 0 ? TensorView(scale.data(), DType::kFloat32, {n})
                                          : TensorView(scale.data(), DType::kFloat32, {n, groups});
    quantize_weight(TensorView(q.data(), DType::kInt8, {n, k}), scale_v, TensorView(w.data(), DType::kFloat32, {n, k}), group);
    QuantOptions o;
    o.mode = group == 0 ? QuantMode::kDynamicPerToken : QuantMode::kDynamicPerGroup;
    o.group_size = group;
    o.narrow_range = true;
    const TensorView expected_scale_v = group == 0 ? TensorView(expected_scale.data(), DType::kFloat32, {n})
                                                   : TensorView(expected_scale.data(), DType::kFloat32, {n, groups});
    quantize(TensorView(expected_q.data(), DType::kInt8, {n, k}), expected_scale_v, std::nullopt,
             TensorView(w.data(), DType::kFloat32, {n, k}), o);
    EXPECT_EQ(q, expected_q) << group;
    EXPECT_EQ(scale, expected_scale) << group;
    for (auto v : q) ASSERT_GE(v, -127);
  }
}

TEST(QuantCpu, PackInt4NibbleOrder) {
  std::vector<uint8_t> values{1, 2, 15, 0, 7, 8};
  std::vector<uint8_t> packed(3);
  pack_int4(TensorView(packed.data(), DType::kUInt8, {1, 3}), TensorView(values.data(), DType::kUInt8, {1, 6}));
  EXPECT_EQ(packed, (std::vector<uint8_t>{0x21, 0x0f, 0x87}));  // element 2j low, 2j+1 high
  std::vector<uint8_t> back(6);
  unpack_int4(TensorView(back.data(), DType::kUInt8, {1, 6}), TensorView(packed.data(), DType::kUInt8, {1, 3}));
  EXPECT_EQ(back, values);
}

TEST(QuantCpu, Int4WeightsRoundTripWithinHalfAStep) {
  const int64_t n = 9, k = 256;
  auto rng = make_rng();
  auto w = random_float(rng, n * k, -0.3f, 0.2f);
  for (int group : {32, 64, 128, 256}) {
    const int64_t groups = k / group;
    std::vector<uint8_t> packed(n * k / 2), values(n * k);
    std::vector<float> scale(n * groups), offset(n * groups);
    quantize_weight_int4(TensorView(packed.data(), DType::kUInt8, {n, k / 2}),
                         TensorView(scale.data(), DType::kFloat32, {n, groups}),
                         TensorView(offset.data(), DType::kFloat32, {n, groups}),
                         TensorView(w.data(), DType::kFloat32, {n, k}), group);
    unpack_int4(TensorView(values.data(), DType::kUInt8, {n, k}), TensorView(packed.data(), DType::kUInt8, {n, k / 2}));
    for (int64_t r = 0; r < n; ++r) {
      for (int64_t i = 0; i < k; ++i) {
        const float s = scale[r * groups + i / group], off = offset[r * groups + i / group];
        const float back = values[r * k + i] * s + off;
        ASSERT_LE(std::fabs(back - w[r * k + i]), 0.5f * s * (1 + 1e-5f) + 1e-7f) << "group " << group;
      }
    }
  }
}

// Group-major scale / offset outputs ([G, N] row-major viewed as [N, G],
// padded leading dimension) hold the same bits as row-major ones; the two
// outputs may differ in layout.
TEST(QuantCpu, Int4WeightsGroupMajorParamsSameBits) {
  const int64_t n = 7, k = 512, ld = n + 3;
  auto rng = make_rng();
  auto w = random_float(rng, n * k, -0.4f, 0.3f);
  const TensorView w_v(w.data(), DType::kFloat32, {n, k});
  for (int group : {32, 128, 256}) {
    const int64_t groups = k / group;
    std::vector<uint8_t> packed(n * k / 2), packed_gm(n * k / 2, 0xee);
    std::vector<float> scale(n * groups), offset(n * groups);
    quantize_weight_int4(TensorView(packed.data(), DType::kUInt8, {n, k / 2}),
                         TensorView(scale.data(), DType::kFloat32, {n, groups}),
                         TensorView(offset.data(), DType::kFloat32, {n, groups}), w_v, group);
    for (bool offset_group_major : {true, false}) {
      std::vector<float> scale_gm(groups * ld, -7.0f), offset_gm(groups * ld, -7.0f);
      const TensorView scale_v = TensorView::strided(scale_gm.data(), DType::kFloat32, {n, groups}, {1, ld});
      const TensorView offset_v = offset_group_major
                                      ? TensorView::strided(offset_gm.data(), DType::kFloat32, {n, groups}, {1, ld})
                                      : TensorView(offset_gm.data(), DType::kFloat32, {n, groups});
      quantize_weight_int4(TensorView(packed_gm.data(), DType::kUInt8, {n, k / 2}), scale_v, offset_v, w_v, group);
      EXPECT_EQ(packed_gm, packed) << "group " << group;
      for (int64_t r = 0; r < n; ++r) {
        for (int64_t g = 0; g < groups; ++g) {
          ASSERT_EQ(numeric::float_bits(scale_gm[g * ld + r]), numeric::float_bits(scale[r * groups + g])) << r << ", " << g;
          const float off = offset_group_major ? offset_gm[g * ld + r] : offset_gm[r * groups + g];
          ASSERT_EQ(numeric::float_bits(off), numeric::float_bits(offset[r * groups + g])) << r << ", " << g;
        }
        for (int64_t pad = n; pad < ld; ++pad) {
          for (int64_t g = 0; g < groups; ++g) ASSERT_EQ(scale_gm[g * ld + pad], -7.0f) << "padding written";
        }
      }
    }
  }
}

}  // namespace
}  // namespace qgemm::test
