// GPU tests of the swapped tiles (kSm90Swapped, sm90_swapped.cuh): M ≤ 192
// computed as Dᵀ = B·Aᵀ on 64×32 (M ≤ 32), 64×160 (M ≤ 160) or 64×192
// ping-pong tiles,
// clusters of two channel tiles sharing the token tile, Dᵀ stored
// column-major through TMA.
//
// What could go wrong, and what catches it:
//   - a broadcast on the wrong axis (token and channel vectors trade places
//     in the swapped epilogue): every epilogue variant against the CPU
//     backend, with per-token and per-channel vectors of distinct values;
//   - the token tile's edge (M just below, at and above 32 and 160, tokens
//     past M zero-filled and never stored) and the channel tiles' (N ragged
//     against 64 and against the cluster's 128): every M from 1 to 32 and
//     from 129 to 192, and N of 4104 (65 tiles, the last cluster half empty)
//     and 1000, outputs poisoned first;
//   - precise fp8's sliced promotion (2 slices of 16, 80 or 96 tokens): fp8
//     at every tile width with K of 33 k-tiles and a tail of 16;
//   - sub-matrix views: A, B and the output with leading dimensions past the
//     row; an output pitch TMA cannot store and M > 192 are declined.
// int8 is exact up to the epilogue's rounding; fp8 uses the accumulation
// bound of gemm_compare.h.
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

class ScaledMmSwapped : public ::testing::Test {
 protected:
  void SetUp() override {
    QGEMM_SKIP_WITHOUT_GPU();
    if (!sm90a_kernels_expected()) GTEST_SKIP() << "kSm90Swapped is sm_90a";
  }
};

// Every epilogue variant (scales per tensor / token / channel, bias, zero
// points, bf16 / fp16, int8 and fp8) against the CPU backend, at every token
// tile, with ragged N and K from one k-tile to 33 (a tail of 16).
TEST_F(ScaledMmSwapped, EveryEpilogueMatchesCpu) {
  expect_every_epilogue_matches_cpu({GemmKernel::kSm90Swapped, "sm90 swapped"},
                                    {{17, 1000, 208}, {32, 4104, 4112}, {129, 1000, 144}, {160, 4104, 2064},
                                     {161, 520, 4112}, {192, 64, 128}});
}

// Every M from 1 to 32 and from 129 to 192 (the tokens fill 1 … 32 and
// 129 … 192 of the tiles' columns), and a few between, int8 with per-token
// zero points and fp8, each against the CPU; int8 also bit for bit against
// the 128×128 ping-pong tile (both exact up to the same epilogue).
TEST_F(ScaledMmSwapped, EveryMAtItsTiles) {
  std::vector<int64_t> ms = {33, 64, 100, 128};
  for (int64_t m = 1; m <= 32; ++m) ms.push_back(m);
  for (int64_t m = 129; m <= 192; ++m) ms.push_back(m);
  expect_every_m_matches_cpu({GemmKernel::kSm90Swapped, "sm90 swapped"}, ms, 392, 1040,
                             {DType::kInt8, DType::kFloat8E4M3}, GemmKernel::kSm90Square);
}

// Sub-matrix views: A, B and the output with leading dimensions past the row
// (the output's a multiple of 8, as TMA needs). An output pitch TMA cannot
// store and M > 192 are declined (the dispatcher then runs the direct-store
// kernel or another tile).
TEST_F(ScaledMmSwapped, PaddedViewsAndWhatItDeclines) {
  GemmCase c;
  c.m = 150, c.n = 776, c.k = 2064;
  c.lda_pad = 16, c.ldb_pad = 32, c.ldo_pad = 8;
  expect_padded_views_and_declines({GemmKernel::kSm90Swapped, "sm90 swapped"}, c, 193);
}

// The public API on shapes the rules send here (24×… and 160×8192×1024 on
// 132 SMs: 128 tiles of 64 channels; 150×5120×1024: 80 tiles, M = 129–160 at
// N = 4096–6143 where the token halves would take two waves), with and
// without a workspace (the rules need none; at 150×5120 the k-tiles are too
// few for the stream-K tiles), against the CPU; int8 the same bits both ways.
TEST_F(ScaledMmSwapped, PublicApiTakesIt) {
  expect_public_api_picks(GemmKernel::kSm90Swapped, {{24, 8192, 1024}, {160, 8192, 1024}, {150, 5120, 1024}}, 21);
}

}  // namespace
}  // namespace qgemm::test
