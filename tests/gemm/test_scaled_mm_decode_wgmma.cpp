// GPU tests of the fp8 wgmma decode kernel (kSm90DecodeWgmma,
// sm90_decode_wgmma.cu): M ≤ 16 as Dᵀ = B·Aᵀ on 64×16 e4m3 wgmma tiles, both
// operands through TMA with the 128-byte swizzle, K split over a cluster and
// reduced through distributed shared memory.
//
// What could go wrong, and what catches it:
//   - a descriptor, swizzle or fragment mapping off by a row or a k step:
//     every epilogue variant against the CPU backend on random data, N below
//     one tile and ragged against 64 rows, every M from 1 to 16;
//   - the split (ranks reading each other's sums, each storing its slice):
//     K from one stage to 129 (splits of 1, 2, 4 and 8), tails of 16 bytes
//     past the last 128-byte stage, outputs poisoned first;
//   - operands the TMA boxes read past: padded views, tokens past M;
//   - what it must refuse (int8, M = 17, a K TMA cannot read): declined, so
//     the dispatcher runs another kernel.
// fp8 results are compared with the accumulation bound of gemm_compare.h.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <vector>

#include "gemm/cuda/scaled_mm_cuda.h"
#include "gemm/forced_kernel_checks.h"
#include "gemm/gemm_compare.h"
#include "gemm/gemm_device_problem.h"
#include "gemm/gemm_problem.h"

namespace qgemm::test {
namespace {

using detail::GemmKernel;

class ScaledMmDecodeWgmma : public ::testing::Test {
 protected:
  void SetUp() override {
    QGEMM_SKIP_WITHOUT_GPU();
    if (!sm90a_kernels_expected()) GTEST_SKIP() << "kSm90DecodeWgmma is sm_90a";
  }
};

// Every fp8 epilogue variant (scales per tensor / token / channel, bias,
// bf16 / fp16) against the CPU backend; the int8 cases are declined.
TEST_F(ScaledMmDecodeWgmma, EveryEpilogueMatchesCpu) {
  // (M, N, K): one tile and less; ragged N; a K tail; K split 2, 4 and 8
  // ways (decode_wgmma_splits on 132 SMs: 4 tiles × 8 at K = 65536).
  expect_every_epilogue_matches_cpu(
      {GemmKernel::kSm90DecodeWgmma, "sm90 fp8 decode wgmma"},
      {{1, 48, 80}, {16, 272, 208}, {7, 1000, 2064}, {9, 4104, 1040}, {13, 264, 16400}, {16, 200, 65536}},
      /*int8_declined=*/true);
}

// Every M from 1 to 16 (tokens past M arrive as zeros from TMA), fast
// accumulation requested or not (both run precise: the same bits).
TEST_F(ScaledMmDecodeWgmma, EveryMUpTo16) {
  std::vector<int64_t> ms;
  for (int64_t m = 1; m <= 16; ++m) ms.push_back(m);
  expect_every_m_matches_cpu({GemmKernel::kSm90DecodeWgmma, "sm90 fp8 decode wgmma"}, ms, 520, 4112,
                             {DType::kFloat8E4M3}, std::nullopt);
}

// Sub-matrix views: A and B with leading dimensions past the row (multiples
// of 16 bytes, as TMA needs), the output with any pitch (stored element by
// element); and what it declines.
TEST_F(ScaledMmDecodeWgmma, PaddedViewsAndWhatItDeclines) {
  GemmCase c;
  c.m = 11, c.n = 392, c.k = 2064, c.input = DType::kFloat8E4M3;
  c.lda_pad = 16, c.ldb_pad = 32, c.ldo_pad = 3;
  auto rng = make_rng(5);
  GemmProblem p(c, rng);
  const std::vector<uint8_t> out = run_forced(p, GemmKernel::kSm90DecodeWgmma);
  ASSERT_FALSE(out.empty()) << c.name();
  EXPECT_EQ(compare_all(p, out, "sm90 fp8 decode wgmma, padded"), 0);

  GemmCase tall = c;
  tall.m = 17;
  GemmProblem q(tall, rng);
  EXPECT_TRUE(run_forced(q, GemmKernel::kSm90DecodeWgmma).empty()) << "took M = 17";
  GemmCase ragged_k = c;
  ragged_k.k = 2056, ragged_k.lda_pad = 0, ragged_k.ldb_pad = 0;  // rows 8 bytes off 16
  GemmProblem r(ragged_k, rng);
  EXPECT_TRUE(run_forced(r, GemmKernel::kSm90DecodeWgmma).empty()) << "took K = 2056";
  GemmCase int8 = c;
  int8.input = DType::kInt8;
  GemmProblem s(int8, rng);
  EXPECT_TRUE(run_forced(s, GemmKernel::kSm90DecodeWgmma).empty()) << "took int8";
}

// The same bits on every run (the split's ranks add in rank order), and the
// same bits whether fast accumulation was requested or not.
TEST_F(ScaledMmDecodeWgmma, DeterministicAndPreciseInBothModes) {
  GemmCase c;
  c.m = 16, c.n = 1024, c.k = 8192, c.input = DType::kFloat8E4M3;  // 16 tiles: an 8-way split
  auto rng = make_rng(12);
  GemmProblem p(c, rng);
  const std::vector<uint8_t> first = run_forced(p, GemmKernel::kSm90DecodeWgmma);
  ASSERT_FALSE(first.empty());
  for (int r = 0; r < 3; ++r) EXPECT_EQ(run_forced(p, GemmKernel::kSm90DecodeWgmma), first) << "run " << r;
  EXPECT_EQ(compare_all(p, first, "sm90 fp8 decode wgmma"), 0);
  DeviceProblem d(p);
  detail::ScaledMmArgs args = d.args(p);
  args.fp8_fast_accum = true;
  ASSERT_TRUE(detail::scaled_mm_cuda_with(args, GemmKernel::kSm90DecodeWgmma));
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  std::vector<uint8_t> fast;
  d.out.download(fast);
  EXPECT_EQ(fast, first);
}

// The public API on a weight the rule sends here (M = 12 on 8192×8192 on a
// 132-SM GPU), with and without a workspace, against the CPU.
TEST_F(ScaledMmDecodeWgmma, PublicApiTakesItAtNineToSixteenTokens) {
  GemmCase c;
  c.m = 12, c.n = 8192, c.k = 8192, c.input = DType::kFloat8E4M3, c.bias = true;
  auto rng = make_rng(21);
  GemmProblem p(c, rng);
  const WithAndWithoutWorkspace out = run_with_and_without_workspace(p);
  if (StreamKWorkspace::sm_count() == 132) EXPECT_EQ(out.chosen_with, GemmKernel::kSm90DecodeWgmma);
  EXPECT_EQ(compare_all(p, out.with, "scaled_mm with a workspace"), 0);
  EXPECT_EQ(out.with, out.without);
}

}  // namespace
}  // namespace qgemm::test
