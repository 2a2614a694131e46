// CPU backend of the fused ops against the independent double-precision
// reference (fused_reference.h), for every op × input dtype × output dtype ×
// scale mode, the issue's hidden sizes, odd and padded shapes.
//
// Tolerances: the CPU evaluates in fp32 (and its own exp/erfc, ≲ 2 ulp), the
// reference in double, so y differs by a few fp32 ulps: dynamic scales agree
// within 1e-5 relative, zero points within 1, and each quantized value q − z
// (fp8: code ordinal) within 1 of rne(y_ref / s) — a difference that occurs
// only when y/s is within a few ulps of a rounding boundary. Such near-ties
// are not rare for RMSNorm of bf16 data: y/s = 127·x·w / (x·w)_max (inv_rms
// cancels), a ratio of short bf16 products that often is an exact tie, which
// fp32 rounding then moves to either side; at most 1 % of the elements may
// differ by 1. The residual update is exact.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "fused/fused_reference.h"

namespace qgemm::test {
namespace {

// The ordinal of the reference value y / s (+ z for int8), clamped like q.
int reference_ordinal(const FusedCase& c, double y, float scale, int32_t zero_point) {
  if (c.q == DType::kFloat8E4M3) {
    const uint8_t bits = numeric::float_to_fp8e4m3_bits(static_cast<float>(y / scale));
    return (bits & 0x80) ? -(bits & 0x7f) : (bits & 0x7f);
  }
  const double qmin = c.narrow_range ? -127 : -128;
  const double q = std::clamp(std::nearbyint(y / scale) + zero_point, qmin, 127.0);
  return static_cast<int>(q) - zero_point;
}

// Checks the CPU results in `b` against the reference from `before`.
void expect_matches_reference(const FusedCase& c, const FusedBuffers& before, const FusedBuffers& b) {
  std::vector<uint8_t> residual_after;
  if (c.kind == FusedKind::kAddRmsNorm) {
    residual_after = expected_residual(c, before);
    ASSERT_EQ(b.residual, residual_after) << "residual update";
  }
  const double qmax = c.q == DType::kInt8 ? 127.0 : 448.0;
  int64_t off_by_one = 0, bad = 0;
  for (int64_t t = 0; t < c.tokens; ++t) {
    const std::vector<double> y = reference_row(c, before, residual_after, t);
    const bool dynamic = c.mode == FusedScale::kDynamicPerToken;
    const float scale = scale_at(b, dynamic ? t : 0);
    const int32_t zero_point = azp_at(b, dynamic ? t : 0);
    if (dynamic) {
      double amax = 0, lo = 0, hi = 0;
      for (double v : y) amax = std::max(amax, std::fabs(v)), lo = std::min(lo, v), hi = std::max(hi, v);
      double expected = c.asymmetric ? (hi - lo) / 255.0 : amax / qmax;
      if (expected == 0) expected = 1;
      EXPECT_NEAR(scale, expected, 1e-5 * expected) << c.name(0) << " row " << t;
      if (c.asymmetric) {
        EXPECT_LE(std::abs(zero_point - std::nearbyint(-128.0 - lo / scale)), 1) << "row " << t;
      }
    }
    for (int64_t h = 0; h < c.hidden; ++h) {
      const int diff = std::abs(q_ordinal(c, b, t, h, zero_point) - reference_ordinal(c, y[h], scale, zero_point));
      off_by_one += diff == 1;
      if (diff > 1 && bad++ < 5) {
        ADD_FAILURE() << c.name(0) << ": q[" << t << "," << h << "] ordinal "
                      << q_ordinal(c, b, t, h, zero_point) << ", reference y=" << y[h] << " s=" << scale;
      }
    }
  }
  EXPECT_EQ(bad, 0);
  EXPECT_LE(off_by_one, std::max<int64_t>(2, c.tokens * c.hidden / 100)) << c.name(0);
}

void run_and_check(const FusedCase& c) {
  FusedBuffers b = make_buffers(c, static_cast<uint64_t>(c.tokens * 1000003 + c.hidden * 7 + static_cast<int>(c.kind)));
  const FusedBuffers before = b;
  run_fused(c, host_pointers(b));
  expect_matches_reference(c, before, b);
}

class FusedCpu : public ::testing::TestWithParam<FusedCase> {};

TEST_P(FusedCpu, MatchesDoubleReference) { run_and_check(GetParam()); }

constexpr FusedKind kAllKinds[] = {FusedKind::kRmsNorm,        FusedKind::kAddRmsNorm, FusedKind::kLayerNorm,
                                   FusedKind::kLayerNormInt32, FusedKind::kSiluMul,    FusedKind::kGelu,
                                   FusedKind::kGeluInt32};

// Every op × dtype × output × scale mode on two small odd shapes.
std::vector<FusedCase> mode_cases() {
  std::vector<FusedCase> cases;
  for (FusedKind kind : kAllKinds) {
    for (DType dtype : {DType::kFloat32, DType::kFloat16, DType::kBFloat16}) {
      for (DType q : {DType::kInt8, DType::kFloat8E4M3}) {
        for (FusedScale mode : {FusedScale::kDynamicPerToken, FusedScale::kStatic}) {
          for (bool asymmetric : {false, true}) {
            if (asymmetric && q != DType::kInt8) continue;
            for (const auto& shape : {std::pair<int64_t, int64_t>{5, 100}, {3, 768}}) {
              FusedCase c;
              c.kind = kind, c.dtype = dtype, c.q = q, c.mode = mode, c.asymmetric = asymmetric;
              c.tokens = shape.first, c.hidden = shape.second;
              cases.push_back(c);
            }
          }
        }
      }
    }
  }
  return cases;
}

// The options: optional LayerNorm inputs, GELU tanh, narrow range,
// per-tensor / per-token scale variants, padded rows, eps = 0.
std::vector<FusedCase> option_cases() {
  std::vector<FusedCase> cases;
  FusedCase c;
  c.tokens = 7, c.hidden = 333;
  for (FusedKind kind : kAllKinds) {
    c.kind = kind;
    c.bias = false, c.residual = false;
    cases.push_back(c);
    c.bias = true, c.residual = false;
    cases.push_back(c);
    c.bias = false, c.residual = true, c.gelu_tanh = true;
    cases.push_back(c);
    c.bias = true, c.narrow_range = true, c.gelu_tanh = false;
    cases.push_back(c);
    c.narrow_range = false, c.per_token_a = false, c.per_channel_w = false, c.residual_per_token = true;
    c.mode = FusedScale::kStatic, c.narrow_range = true;
    cases.push_back(c);
    c.per_token_a = true, c.per_channel_w = true, c.mode = FusedScale::kDynamicPerToken, c.narrow_range = false;
    c.pad = 5, c.eps = 0.0f;
    cases.push_back(c);
    c.pad = 0, c.eps = 1e-5f, c.residual_per_token = false;
  }
  return cases;
}

// The issue's hidden sizes × tokens (bf16 → int8, dynamic per token); the
// 2048-token rows of the largest sizes run in the GPU suite.
std::vector<FusedCase> issue_shape_cases() {
  std::vector<FusedCase> cases;
  for (FusedKind kind : kAllKinds) {
    for (int64_t n : {1, 8, 100, 384, 768, 4096, 5120, 8192, 14336}) {
      for (int64_t t : {1, 5, 128, 2048}) {
        if (t == 2048 && n > 768) continue;
        FusedCase c;
        c.kind = kind, c.tokens = t, c.hidden = n;
        cases.push_back(c);
      }
    }
  }
  return cases;
}

auto case_name = [](const auto& info) { return info.param.name(info.index); };

INSTANTIATE_TEST_SUITE_P(Modes, FusedCpu, ::testing::ValuesIn(mode_cases()), case_name);
INSTANTIATE_TEST_SUITE_P(Options, FusedCpu, ::testing::ValuesIn(option_cases()), case_name);
INSTANTIATE_TEST_SUITE_P(IssueShapes, FusedCpu, ::testing::ValuesIn(issue_shape_cases()), case_name);

// An all-zero row: the scale would be 0 and is written as 1; every q is 0.
TEST(FusedCpuEdges, ZeroRowsGiveScaleOne) {
  for (FusedKind kind : {FusedKind::kRmsNorm, FusedKind::kSiluMul, FusedKind::kGelu}) {
    FusedCase c;
    c.kind = kind, c.tokens = 3, c.hidden = 64, c.bias = false;
    FusedBuffers b = make_buffers(c, 1);
    std::fill(b.x.begin(), b.x.end(), 0);
    run_fused(c, host_pointers(b));
    for (int64_t t = 0; t < c.tokens; ++t) EXPECT_EQ(scale_at(b, t), 1.0f);
    for (int64_t i = 0; i < c.tokens * c.hidden; ++i) EXPECT_EQ(b.q[i], 0) << kind_name(kind);
  }
}

// Zero tokens: a valid call that does nothing.
TEST(FusedCpuEdges, ZeroTokensIsANoOp) {
  FusedCase c;
  c.tokens = 0;
  FusedBuffers b = make_buffers(c, 2);
  b.x.resize(1), b.q.resize(1), b.scale.resize(4);
  run_fused(c, host_pointers(b));
}

}  // namespace
}  // namespace qgemm::test
