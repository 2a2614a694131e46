// GPU tests of the Hopper decode kernel's split last round
// (kSm90SkinnyStream, skinny_stream_sm90.cu; the rule:
// skinny_stream_splits_last_round in skinny_stream_launch.h). Where the last
// round of 16-column tiles would leave most CTAs idle, each of its tiles'
// K goes to the two CTAs of a cluster, and rank 0 adds rank 1's sums
// (through distributed shared memory) to its own before the epilogue.
//
// What could go wrong, and what catches it:
//   - a half added twice or not at all, or rank 1's sums read before they
//     land: the outputs against the CPU backend (int8 exact up to the
//     epilogue: one output ulp), every epilogue variant at one shape;
//   - the halves' stage ranges: K of 2 stages whose second is 16 bytes
//     (1040), 4 with a partial last one (3088), 9 (8208: halves of 5 and 4);
//   - the whole tiles before the split round and a ragged last tile
//     (N = 16·tiles − 5), outputs poisoned first (DeviceProblem);
//   - every token tile: M = 1, 5, 8 (transposed, and fp8's plain tile with
//     padding tokens where two CTAs share an SM), 9 and 16 (plain);
//   - run-to-run order: the same bits from two runs.
// The weight is sized from the GPU's SMs so that the launch splits at one
// and at two CTAs per SM alike: 2.5·SMs − 6 tiles leave a last round of
// SMs/2 − 6 tiles at either count.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <vector>

#include "gemm/cuda/scaled_mm_cuda.h"
#include "gemm/cuda/skinny_stream_launch.h"
#include "gemm/gemm_compare.h"
#include "gemm/gemm_device_problem.h"
#include "gemm/gemm_problem.h"

namespace qgemm::test {
namespace {

using detail::GemmKernel;

class SkinnyStreamSplit : public ::testing::Test {
 protected:
  void SetUp() override {
    QGEMM_SKIP_WITHOUT_GPU();
    if (!sm90a_kernels_expected()) GTEST_SKIP() << "kSm90SkinnyStream is sm_90a";
    const int64_t sms = StreamKWorkspace::sm_count();
    tiles_ = 5 * sms / 2 - 6;
    // The rule splits this weight's last round at one and at two CTAs per SM.
    ASSERT_TRUE(detail::skinny_stream_splits_last_round(tiles_, sms, 2, sms));
    ASSERT_TRUE(detail::skinny_stream_splits_last_round(tiles_, 2 * sms, 2, sms));
  }
  int64_t n() const { return 16 * tiles_ - 5; }
  int64_t tiles_ = 0;
};

TEST_F(SkinnyStreamSplit, EveryEpilogueMatchesCpu) {
  for (const GemmCase& c : epilogue_cases(9, n(), 1040)) {
    auto rng = make_rng(static_cast<uint64_t>(c.per_token + 2 * c.per_channel + 4 * c.bias));
    GemmProblem p(c, rng);
    const std::vector<uint8_t> out = run_forced(p, GemmKernel::kSm90SkinnyStream);
    ASSERT_FALSE(out.empty()) << "kSm90SkinnyStream refused " << c.name();
    EXPECT_EQ(compare_all(p, out, "split last round"), 0);
  }
}

TEST_F(SkinnyStreamSplit, EveryTokenTileAndStageRange) {
  for (int64_t k : {1040, 3088, 8208}) {
    for (int64_t m : {1, 5, 8, 9, 16}) {
      for (DType input : {DType::kInt8, DType::kFloat8E4M3}) {
        GemmCase c;
        c.m = m, c.n = n(), c.k = k, c.input = input, c.bias = true, c.per_token = true, c.per_channel = true;
        c.zero_point = input == DType::kInt8 ? ZeroPoint::kPerToken : ZeroPoint::kNone;
        auto rng = make_rng(static_cast<uint64_t>(k * 31 + m * 3 + (input == DType::kInt8)));
        GemmProblem p(c, rng);
        const std::vector<uint8_t> out = run_forced(p, GemmKernel::kSm90SkinnyStream);
        ASSERT_FALSE(out.empty()) << c.name();
        EXPECT_EQ(compare_all(p, out, "split last round"), 0);
        EXPECT_EQ(run_forced(p, GemmKernel::kSm90SkinnyStream), out) << c.name() << ": not the same bits twice";
      }
    }
  }
}

}  // namespace
}  // namespace qgemm::test
