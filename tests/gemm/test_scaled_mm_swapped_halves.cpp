// GPU tests of the swapped tiles in token halves (kSm90SwappedHalves,
// sm90_swapped.cuh): M = 129–192 computed as Dᵀ = B·Aᵀ on 64×80 (M ≤ 160)
// or 64×96 ping-pong tiles, two token tiles per 64 channels in one cluster
// sharing the weight tile, Dᵀ stored column-major through TMA; and M =
// 257–384 on the same tiles in four token tiles (two clusters per channel
// tile).
//
// What could go wrong, and what catches it:
//   - the second token tile's offset (its columns start at 80 or 96, past
//     M for its last ones, which TMA must zero-fill on load and clip on
//     store): every M from 129 to 192 with outputs poisoned first, int8 bit
//     for bit against the whole swapped tiles (kSm90Swapped: the same
//     epilogue on one token tile) and fp8 against the CPU;
//   - the cluster's multicast of the weight tile to both token tiles (a
//     half computing with the other's rows or with a stale stage): every M
//     and every epilogue variant, each K up to 33 k-tiles, against the CPU;
//   - a broadcast on the wrong axis (per-token vectors indexed from the
//     second tile's first column): every epilogue variant against the CPU
//     backend at both tile widths, N ragged against 64 and 128;
//   - precise fp8's sliced promotion (2 slices of 40 or 48 tokens): fp8 at
//     both widths with K of 33 k-tiles and a tail of 16;
//   - four token tiles (M = 257–384: the last reaches past M by up to 63
//     rows for int8, 31 for fp8; the second cluster of a channel tile):
//     M at every change of width and a few between, every epilogue at two
//     M, against the CPU;
//   - sub-matrix views; M ≤ 128, M = 193–256, M > 384 and an output pitch
//     TMA cannot store are declined (the dispatcher then runs another tile).
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

class ScaledMmSwappedHalves : public ::testing::Test {
 protected:
  void SetUp() override {
    QGEMM_SKIP_WITHOUT_GPU();
    if (!sm90a_kernels_expected()) GTEST_SKIP() << "kSm90SwappedHalves is sm_90a";
  }
};

const ForcedKernel kHalves = {GemmKernel::kSm90SwappedHalves, "sm90 swapped halves"};

// Every epilogue variant (scales per tensor / token / channel, bias, zero
// points, bf16 / fp16, int8 and fp8) against the CPU backend, at both token
// tiles, with ragged N and K from one k-tile to 33 (a tail of 16).
TEST_F(ScaledMmSwappedHalves, EveryEpilogueMatchesCpu) {
  expect_every_epilogue_matches_cpu(kHalves, {{129, 1000, 144},
                                              {160, 3080, 2064},
                                              {161, 520, 4112},
                                              {192, 64, 128},
                                              {300, 1000, 2064},
                                              {384, 520, 144}});
}

// Every M from 129 to 192 (the second token tile holds 49 … 80 or 65 … 96
// of its columns), int8 with per-token zero points and fp8, against the CPU;
// int8 also bit for bit against the whole swapped tiles.
TEST_F(ScaledMmSwappedHalves, EveryMAtItsTiles) {
  std::vector<int64_t> ms;
  for (int64_t m = 129; m <= 192; ++m) ms.push_back(m);
  expect_every_m_matches_cpu(kHalves, ms, 392, 1040, {DType::kInt8, DType::kFloat8E4M3}, GemmKernel::kSm90Swapped);
}

// M = 257–384 in four token tiles at both sides of every change of width
// (int8 80 | 96 at 320 | 321; fp8 8·⌈M/32⌉: 72 | 80 | 88 | 96 at 288 | 289,
// 320 | 321, 352 | 353) and at the ends, int8 with per-token zero points
// and fp8, against the CPU.
TEST_F(ScaledMmSwappedHalves, EveryWidthInFourTokenTiles) {
  const std::vector<int64_t> ms = {257, 258, 271, 287, 288, 289, 290, 300, 319,
                                   320, 321, 322, 351, 352, 353, 354, 383, 384};
  expect_every_m_matches_cpu(kHalves, ms, 392, 1040, {DType::kInt8, DType::kFloat8E4M3}, std::nullopt);
}

// Sub-matrix views (leading dimensions past the row; the output's a
// multiple of 8, as TMA needs) in two and four token tiles, an output pitch
// TMA cannot store, M = 193–256 and M > 384 declined; and M ≤ 128, which
// the whole 64-row tiles serve.
TEST_F(ScaledMmSwappedHalves, PaddedViewsAndWhatItDeclines) {
  for (const int64_t m : {150, 300}) {
    GemmCase c;
    c.m = m, c.n = 776, c.k = 2064;
    c.lda_pad = 16, c.ldb_pad = 32, c.ldo_pad = 8;
    expect_padded_views_and_declines(kHalves, c, 193, {1, 128, 256, 385});
  }
}

// The public API on shapes the rules send here on 132 SMs (N = 2048–4224 at
// M = 129–192 short of the K where their stream-K twin takes over; at
// 160×4096×14336 the swapped stream-K tiles before them, at 160×2048×14336
// the twin and before it the 64×128 tiles; in four token tiles M =
// 257–384 at N = 1921–2112 up to K = 8192), with and without a workspace,
// against the CPU; the same bits both ways.
TEST_F(ScaledMmSwappedHalves, PublicApiTakesIt) {
  expect_public_api_picks(GemmKernel::kSm90SwappedHalves,
                          {{136, 3072, 1024},
                           {176, 4096, 1024},
                           {192, 2560, 512},
                           {160, 4096, 14336},
                           {160, 2048, 14336},
                           {129, 2048, 1040},
                           {320, 2048, 4096},
                           {257, 1984, 2048},
                           {384, 2112, 1040}},
                          31);
}

}  // namespace
}  // namespace qgemm::test
