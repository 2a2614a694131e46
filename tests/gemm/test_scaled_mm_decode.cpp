// GPU tests of the swapped decode kernel (kSm90Decode, sm90_decode.cuh):
// M ≤ 16 computed as Dᵀ = B·Aᵀ on 128×16 wgmma tiles, stream-K over the
// SMs, Dᵀ stored column-major through TMA.
//
// What could go wrong, and what catches it:
//   - a broadcast on the wrong axis (the token and channel vectors trade
//     places in the swapped epilogue): every epilogue variant against the
//     CPU backend, with per-token and per-channel vectors of distinct values;
//   - the transposed store (ldo, rows past M, channels past a 128-row tile):
//     ragged N and M = 1 … 16, padded output rows, outputs poisoned first;
//   - the stream-K split (peers of a cut tile meeting in the workspace):
//     K long enough that every tile is cut, a K tail of 16, a workspace
//     filled with garbage;
//   - int8 exactness: the int32 sums are exact and the epilogue is the CPU's
//     expression, so the output is the same bits as the other decode
//     kernel's (kSm90SkinnyStream) and matches the CPU within one ulp.
// fp8 uses the accumulation bound of gemm_compare.h.
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

class ScaledMmDecode : public ::testing::Test {
 protected:
  void SetUp() override {
    QGEMM_SKIP_WITHOUT_GPU();
    if (!sm90a_kernels_expected()) GTEST_SKIP() << "kSm90Decode is sm_90a";
  }
};

// Every epilogue variant (scales per tensor / token / channel, bias, zero
// points, bf16 / fp16, int8 and fp8) against the CPU backend: N below one
// tile, ragged against 128 rows, and K from one k-tile to 129 (stream-K cuts
// every tile of 13×264×16400 over the SMs), with tails of 16.
TEST_F(ScaledMmDecode, EveryEpilogueMatchesCpu) {
  StreamKWorkspace workspace;
  expect_every_epilogue_matches_cpu({GemmKernel::kSm90Decode, "sm90 decode", &workspace},
                                    {{1, 48, 80}, {16, 272, 208}, {7, 1000, 2064}, {9, 4104, 1040}, {13, 264, 16400}});
}

// Every M from 1 to 16 (the tokens fill 1 … 16 of the tile's 16 columns),
// int8 with per-token zero points and fp8, each against the CPU; int8 also
// bit for bit against kSm90SkinnyStream (both exact up to the same epilogue).
TEST_F(ScaledMmDecode, EveryMUpTo16) {
  StreamKWorkspace workspace;
  std::vector<int64_t> ms;
  for (int64_t m = 1; m <= 16; ++m) ms.push_back(m);
  expect_every_m_matches_cpu({GemmKernel::kSm90Decode, "sm90 decode", &workspace}, ms, 520, 4112,
                             {DType::kInt8, DType::kFloat8E4M3}, GemmKernel::kSm90SkinnyStream);
}

// Sub-matrix views: A, B and the output with leading dimensions past the
// row (the output's a multiple of 8, as TMA needs); an output pitch TMA
// cannot store, or no workspace, or too small a one, is declined — the
// dispatcher then runs the other decode kernel.
TEST_F(ScaledMmDecode, PaddedViewsAndWhatItDeclines) {
  StreamKWorkspace workspace;
  GemmCase c;
  c.m = 11, c.n = 392, c.k = 2064;
  c.lda_pad = 16, c.ldb_pad = 32, c.ldo_pad = 8;
  expect_padded_views_and_declines({GemmKernel::kSm90Decode, "sm90 decode", &workspace}, c, 17);
}

// The same bits on every run (fp8's peers add in k order; int8's int32 sums
// are exact in any order), with the workspace left as the last run left it.
TEST_F(ScaledMmDecode, Deterministic) {
  StreamKWorkspace workspace;
  GemmCase c;
  c.m = 16, c.n = 1024, c.k = 8192;
  expect_deterministic({GemmKernel::kSm90Decode, "sm90 decode", &workspace}, c);
}

// The public API with a workspace on a weight the rule sends here
// (decode_takes: 4×28672×8192 on 132 SMs), against the CPU; int8 also the
// same bits as the call without a workspace (kSm90SkinnyStream).
TEST_F(ScaledMmDecode, PublicApiTakesItOnLargeWeights) {
  for (DType input : {DType::kInt8, DType::kFloat8E4M3}) {
    GemmCase c;
    c.m = 4, c.n = 28672, c.k = 8192, c.input = input, c.bias = true;
    auto rng = make_rng(21);
    GemmProblem p(c, rng);
    const WithAndWithoutWorkspace out = run_with_and_without_workspace(p);
    if (StreamKWorkspace::sm_count() == 132) EXPECT_EQ(out.chosen_with, GemmKernel::kSm90Decode);
    EXPECT_EQ(compare_all(p, out.with, "scaled_mm with a workspace"), 0);
    if (input == DType::kInt8) EXPECT_EQ(out.with, out.without) << c.name();
  }
}

}  // namespace
}  // namespace qgemm::test
