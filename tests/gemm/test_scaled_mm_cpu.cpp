// CPU backend of scaled_mm / scaled_mm_azp / azp_adj: hand-checked cases of
// each epilogue and random problems against a double-precision reference.
#include <gtest/gtest.h>

#include <vector>

#include "gemm/gemm_problem.h"

namespace qgemm::test {
namespace {

// A = [[1, 2], [3, 4]] (row-major), B = [[5, 6], [7, 8]] stored column-major,
// so A·B = [[19, 22], [43, 50]].
struct TinyInt8 {
  std::vector<int8_t> a{1, 2, 3, 4};
  std::vector<int8_t> b{5, 7, 6, 8};  // column 0 = (5, 7), column 1 = (6, 8)
  TensorView a_view() { return TensorView(a.data(), DType::kInt8, {2, 2}); }
  TensorView b_view() { return TensorView::strided(b.data(), DType::kInt8, {2, 2}, {1, 2}); }
};

TEST(ScaledMmCpu, ScaledEpilogueByHand) {
  TinyInt8 t;
  std::vector<float> out(4, -1.0f);
  float scale_a = 0.5f;
  std::vector<float> scale_b{2.0f, 0.25f};
  scaled_mm(TensorView(out.data(), DType::kFloat32, {2, 2}), t.a_view(), t.b_view(),
            TensorView(&scale_a, DType::kFloat32, {1}),
            TensorView(scale_b.data(), DType::kFloat32, {2}));
  // s_a·s_b·(A·B): column 0 × 1.0, column 1 × 0.125.
  EXPECT_EQ(out, (std::vector<float>{19.0f, 2.75f, 43.0f, 6.25f}));
}

TEST(ScaledMmCpu, ScaledBiasEpilogueByHand) {
  TinyInt8 t;
  std::vector<float> out(4, -1.0f);
  std::vector<float> scale_a{1.0f, 2.0f};  // per token
  float scale_b = 0.5f;
  std::vector<float> bias{100.0f, -100.0f};
  scaled_mm(TensorView(out.data(), DType::kFloat32, {2, 2}), t.a_view(), t.b_view(),
            TensorView(scale_a.data(), DType::kFloat32, {2, 1}),
            TensorView(&scale_b, DType::kFloat32, {1, 1}),
            TensorView(bias.data(), DType::kFloat32, {2}));
  EXPECT_EQ(out, (std::vector<float>{109.5f, -89.0f, 143.0f, -50.0f}));
}

// The background doc's algebra: with A = s_a(Â − z_a·J), A·B = s_a·s_b·(Â·B̂ − z_a·J·B̂).
// Â = [[1,2],[3,4]], z_a = 2 (per tensor): Â − 2 = [[-1,0],[1,2]], times B̂ = [[-5,-6],[19,22]].
TEST(ScaledMmCpu, PerTensorZeroPointByHand) {
  TinyInt8 t;
  std::vector<int32_t> adj(2);
  azp_adj(TensorView(adj.data(), DType::kInt32, {2}), t.b_view(), 2);
  EXPECT_EQ(adj, (std::vector<int32_t>{24, 28}));  // 2·(5+7), 2·(6+8)
  std::vector<float> out(4, -1.0f);
  float one = 1.0f;
  std::vector<float> bias{0.5f, 0.25f};
  scaled_mm_azp(TensorView(out.data(), DType::kFloat32, {2, 2}), t.a_view(), t.b_view(),
                TensorView(&one, DType::kFloat32, {1}), TensorView(&one, DType::kFloat32, {1}),
                TensorView(adj.data(), DType::kInt32, {2}), std::nullopt,
                TensorView(bias.data(), DType::kFloat32, {2}));
  EXPECT_EQ(out, (std::vector<float>{-4.5f, -5.75f, 19.5f, 22.25f}));
}

// Per-token zero points z = (1, 3): row 0 is (Â₀ − 1)·B̂ = (0,1)·B̂ = (7, 8),
// row 1 is (Â₁ − 3)·B̂ = (0,1)·B̂ = (7, 8).
TEST(ScaledMmCpu, PerTokenZeroPointByHand) {
  TinyInt8 t;
  std::vector<int32_t> adj(2);
  azp_adj(TensorView(adj.data(), DType::kInt32, {2}), t.b_view());
  EXPECT_EQ(adj, (std::vector<int32_t>{12, 14}));
  std::vector<int32_t> zero_points{1, 3};
  std::vector<float> out(4, -1.0f);
  std::vector<float> scale_a{1.0f, 0.5f};
  float scale_b = 2.0f;
  scaled_mm_azp(TensorView(out.data(), DType::kFloat32, {2, 2}), t.a_view(), t.b_view(),
                TensorView(scale_a.data(), DType::kFloat32, {2}),
                TensorView(&scale_b, DType::kFloat32, {1}),
                TensorView(adj.data(), DType::kInt32, {2}),
                TensorView(zero_points.data(), DType::kInt32, {2}));
  EXPECT_EQ(out, (std::vector<float>{14.0f, 16.0f, 7.0f, 8.0f}));
}

TEST(ScaledMmCpu, Fp8ByHand) {
  // 1.5·2 + (−0.5)·4 = 1;  1.5·0.25 + (−0.5)·(−8) = 4.375
  std::vector<uint8_t> a{numeric::float_to_fp8e4m3_bits(1.5f), numeric::float_to_fp8e4m3_bits(-0.5f)};
  std::vector<uint8_t> b{numeric::float_to_fp8e4m3_bits(2.0f), numeric::float_to_fp8e4m3_bits(4.0f),
                         numeric::float_to_fp8e4m3_bits(0.25f), numeric::float_to_fp8e4m3_bits(-8.0f)};
  std::vector<uint16_t> out(2, 0xffff);
  float scale = 2.0f;
  scaled_mm(TensorView(out.data(), DType::kBFloat16, {1, 2}),
            TensorView(a.data(), DType::kFloat8E4M3, {1, 2}),
            TensorView::strided(b.data(), DType::kFloat8E4M3, {2, 2}, {1, 2}),
            TensorView(&scale, DType::kFloat32, {1}), TensorView(&scale, DType::kFloat32, {1}));
  EXPECT_EQ(numeric::bf16_bits_to_float(out[0]), 4.0f);
  EXPECT_EQ(numeric::bf16_bits_to_float(out[1]), 17.5f);
}

TEST(ScaledMmCpu, OutputRoundsToNearestEven) {
  // 257 is a bf16 tie between 256 and 258: nearest-even gives 256; 259 → 260.
  std::vector<int8_t> a{1};
  std::vector<int8_t> b{1, 1};
  std::vector<uint16_t> out(2, 0xffff);
  float scale_a = 1.0f;
  std::vector<float> scale_b{257.0f, 259.0f};
  scaled_mm(TensorView(out.data(), DType::kBFloat16, {1, 2}), TensorView(a.data(), DType::kInt8, {1, 1}),
            TensorView(b.data(), DType::kInt8, {1, 2}), TensorView(&scale_a, DType::kFloat32, {1}),
            TensorView(scale_b.data(), DType::kFloat32, {2}));
  EXPECT_EQ(numeric::bf16_bits_to_float(out[0]), 256.0f);
  EXPECT_EQ(numeric::bf16_bits_to_float(out[1]), 260.0f);
}

TEST(ScaledMmCpu, AzpAdjOnStridedWeights) {
  auto rng = make_rng();
  const int64_t k = 37, n = 11, ldb = 40;
  const auto b = random_int8(rng, n * ldb);
  std::vector<int32_t> adj(n, -7);
  azp_adj(TensorView(adj.data(), DType::kInt32, {n}),
          TensorView::strided(b.data(), DType::kInt8, {k, n}, {1, ldb}), -3);
  for (int64_t j = 0; j < n; ++j) {
    int32_t sum = 0;
    for (int64_t i = 0; i < k; ++i) sum += b[j * ldb + i];
    EXPECT_EQ(adj[j], -3 * sum) << "column " << j;
  }
}

TEST(ScaledMmCpu, EmptyOutputIsANoOp) {
  std::vector<int8_t> a(4, 1), b(4, 1);
  float s = 1.0f;
  uint16_t sentinel = 0x1234;
  scaled_mm(TensorView(&sentinel, DType::kBFloat16, {0, 2}), TensorView(a.data(), DType::kInt8, {0, 2}),
            TensorView::strided(b.data(), DType::kInt8, {2, 2}, {1, 2}), TensorView(&s, DType::kFloat32, {1}),
            TensorView(&s, DType::kFloat32, {1}));
  EXPECT_EQ(sentinel, 0x1234);
}

// Every epilogue × scale granularity × input dtype × output dtype at odd shapes.
class ScaledMmCpuRandom : public ::testing::TestWithParam<GemmCase> {};

TEST_P(ScaledMmCpuRandom, MatchesDoubleReference) {
  auto rng = make_rng(static_cast<uint64_t>(GetParam().m * 1000003 + GetParam().n * 1009 + GetParam().k));
  GemmProblem problem(GetParam(), rng);
  problem.run_cpu();
  EXPECT_EQ(count_mismatches(problem), 0) << GetParam().name();
}

std::vector<GemmCase> all_cases() {
  std::vector<GemmCase> cases;
  const int64_t shapes[][3] = {{1, 1, 1}, {3, 17, 100}, {17, 3, 1}, {100, 33, 17}, {64, 48, 128}, {5, 100, 1000}};
  for (DType input : {DType::kInt8, DType::kFloat8E4M3}) {
    for (DType out : {DType::kBFloat16, DType::kFloat16, DType::kFloat32}) {
      for (ZeroPoint zp : {ZeroPoint::kNone, ZeroPoint::kPerTensor, ZeroPoint::kPerToken}) {
        if (input != DType::kInt8 && zp != ZeroPoint::kNone) continue;
        for (int granularity = 0; granularity < 4; ++granularity) {
          for (bool bias : {false, true}) {
            for (const auto& s : shapes) {
              GemmCase c;
              c.m = s[0], c.n = s[1], c.k = s[2];
              c.input = input;
              c.out = out;
              c.zero_point = zp;
              c.per_token = granularity & 1;
              c.per_channel = granularity & 2;
              c.bias = bias;
              cases.push_back(c);
            }
          }
        }
      }
    }
  }
  GemmCase padded;
  padded.m = 19, padded.n = 23, padded.k = 29;
  padded.lda_pad = 3, padded.ldb_pad = 5, padded.ldo_pad = 7;
  for (ZeroPoint zp : {ZeroPoint::kNone, ZeroPoint::kPerToken}) {
    padded.zero_point = zp;
    cases.push_back(padded);
  }
  padded.zero_point = ZeroPoint::kNone;
  padded.input = DType::kFloat8E4M3;
  cases.push_back(padded);
  return cases;
}

INSTANTIATE_TEST_SUITE_P(AllEpilogues, ScaledMmCpuRandom, ::testing::ValuesIn(all_cases()),
                         [](const auto& info) { return gtest_name(info.param, info.index); });

}  // namespace
}  // namespace qgemm::test
