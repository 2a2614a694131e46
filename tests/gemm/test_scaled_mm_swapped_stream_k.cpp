// GPU tests of the swapped stream-K tiles (kSm90SwappedStreamK,
// sm90_swapped_stream_k.cuh): M = 129–192 computed as Dᵀ = B·Aᵀ on 128×160
// (M ≤ 160) or 128×192 cooperative tiles, and M = 193–768 in three to
// eight token tiles (int8 128×80 / 128×96, precise fp8 128×72 / 80 / 88 /
// 96 with two whole partial sets; swapped_token_tiles), cut along K by CUTLASS's stream-K scheduler, the peers of a
// cut tile meeting in the call's workspace, Dᵀ stored column-major through
// TMA.
//
// What could go wrong, and what catches it:
//   - a broadcast on the wrong axis (token and channel vectors trade places
//     in the swapped epilogue): every epilogue variant against the CPU
//     backend, with per-token and per-channel vectors of distinct values;
//   - the tiles' edges (tokens past M zero-filled and never stored, N ragged
//     against 128 channels): every M from 129 to 384, M = 385–768 at every
//     change of tile count or width, three tiles at M = 257–288 where four
//     leave one wave, N of 136, 1000 and 4104, outputs poisoned first;
//   - the stream-K split (peers adding partial sums in the workspace): K long
//     enough that every tile is cut, tails of 16, a workspace filled with
//     garbage, and the same bits on every run;
//   - precise fp8's sliced promotion (2 slices of 80 or 96 tokens) across a
//     cut: fp8 at both tile widths with K of 33 and 129 k-tiles;
//   - precise fp8's whole partial sets in three to eight token tiles (72–96
//     columns): every epilogue at M = 200, 233, 250, 300, 384 and 500;
//   - sub-matrix views: leading dimensions past the row; an output pitch TMA
//     cannot store, M > 768, no workspace and too small a one are declined.
// int8 is exact up to the epilogue's rounding, so at M ≤ 192 its output is
// the same bits as the whole swapped tiles' (kSm90Swapped); fp8 uses the
// accumulation bound of gemm_compare.h.
#include <gtest/gtest.h>

#include <array>
#include <initializer_list>
#include <optional>
#include <vector>

#include "gemm/cuda/scaled_mm_cuda.h"
#include "gemm/forced_kernel_checks.h"
#include "gemm/gemm_compare.h"
#include "gemm/gemm_device_problem.h"
#include "gemm/gemm_problem.h"

namespace qgemm::test {
namespace {

using detail::GemmKernel;

class ScaledMmSwappedStreamK : public ::testing::Test {
 protected:
  void SetUp() override {
    QGEMM_SKIP_WITHOUT_GPU();
    if (!sm90a_kernels_expected()) GTEST_SKIP() << "kSm90SwappedStreamK is sm_90a";
  }
};

// Every epilogue variant (scales per tensor / token / channel, bias, zero
// points, bf16 / fp16, int8 and fp8) against the CPU backend at both token
// tiles: one tile of one k-tile, N ragged against 128 channels, and K up to
// 129 k-tiles (every tile of 192×264×16400 cut over the SMs), tails of 16.
TEST_F(ScaledMmSwappedStreamK, EveryEpilogueMatchesCpu) {
  StreamKWorkspace workspace;
  expect_every_epilogue_matches_cpu({GemmKernel::kSm90SwappedStreamK, "sm90 swapped stream-K", &workspace},
                                    {{150, 128, 128}, {129, 1000, 208}, {160, 4104, 2064}, {161, 520, 4112},
                                     {192, 264, 16400}, {200, 1000, 2064}, {233, 264, 8208}, {250, 520, 4112},
                                     {300, 520, 2064}, {384, 264, 4112}, {500, 264, 2064}});
}

// Every M from 129 to 192 (the tokens fill 129 … 160 of the 160-column tile
// and 161 … 192 of the 192-column one) and a few below, int8 with per-token
// zero points and fp8, each against the CPU; int8 also bit for bit against
// the whole swapped tiles (both exact up to the same epilogue).
TEST_F(ScaledMmSwappedStreamK, EveryMAtItsTiles) {
  StreamKWorkspace workspace;
  std::vector<int64_t> ms = {1, 17, 100, 128};
  for (int64_t m = 129; m <= 192; ++m) ms.push_back(m);
  expect_every_m_matches_cpu({GemmKernel::kSm90SwappedStreamK, "sm90 swapped stream-K", &workspace}, ms, 392, 4112,
                             {DType::kInt8, DType::kFloat8E4M3}, GemmKernel::kSm90Swapped);
}

// Every M from 193 to 384 in three or four token tiles (in thirds int8's
// 80 columns fill 193 … 240 of 240, 96 the rest, fp8's 72, 80 and 88 fill
// 193 … 216, 217 … 240 and 241 … 256; in quarters int8's 80 fill 257 … 320,
// fp8's 72 … 96 each 32 values of M), int8 with per-token zero points and
// fp8, against the CPU; the quarters on N = 136, ragged against 128.
TEST_F(ScaledMmSwappedStreamK, EveryMInThreeOrFourTokenTiles) {
  StreamKWorkspace workspace;
  std::vector<int64_t> thirds, quarters;
  for (int64_t m = 193; m <= 256; ++m) thirds.push_back(m);
  for (int64_t m = 257; m <= 384; ++m) quarters.push_back(m);
  const ForcedKernel forced{GemmKernel::kSm90SwappedStreamK, "sm90 swapped stream-K in token tiles", &workspace};
  expect_every_m_matches_cpu(forced, thirds, 392, 4112, {DType::kInt8, DType::kFloat8E4M3}, std::nullopt);
  expect_every_m_matches_cpu(forced, quarters, 136, 2064, {DType::kInt8, DType::kFloat8E4M3}, std::nullopt);
}

// M = 385–768 in five to eight token tiles (⌈M/96⌉), at both sides of every
// change of tile count (480 | 481, 576 | 577, 672 | 673) and width (int8
// 80 | 96 at 400 | 401; fp8 8·⌈M / (8·tiles)⌉: 80 | 88 at 400 | 401, 88 |
// 96 at 440 | 441, 528 | 529, 616 | 617, 704 | 705), on N = 136; and M =
// 257–288 on N = 4352, where four tiles (136) would leave one wave of 132
// SMs and three of 88–96 columns run (on another SM count: what fits it).
TEST_F(ScaledMmSwappedStreamK, FiveToEightTokenTilesAndThreeWhereFourLeaveAWave) {
  StreamKWorkspace workspace;
  const std::vector<int64_t> many = {385, 386, 399, 400, 401, 440, 441, 479, 480, 481, 528, 529,
                                     576, 577, 616, 617, 671, 672, 673, 704, 705, 767, 768};
  const ForcedKernel forced{GemmKernel::kSm90SwappedStreamK, "sm90 swapped stream-K in token tiles", &workspace};
  expect_every_m_matches_cpu(forced, many, 136, 2064, {DType::kInt8, DType::kFloat8E4M3}, std::nullopt);
  expect_every_m_matches_cpu(forced, {257, 264, 265, 287, 288}, 4352, 2064, {DType::kInt8, DType::kFloat8E4M3},
                             std::nullopt);
}

// Sub-matrix views: A, B and the output with leading dimensions past the
// row (the output's a multiple of 8, as TMA needs), in whole token tiles
// and in three, four and seven token tiles. Declined: no workspace, 256
// bytes of one, an output pitch TMA cannot store, M > 768 (the dispatcher
// then runs the whole swapped tiles, the table's 128-row tiles or the
// direct-store kernel).
TEST_F(ScaledMmSwappedStreamK, PaddedViewsAndWhatItDeclines) {
  StreamKWorkspace workspace;
  for (const int64_t m : {150, 221, 300, 650}) {
    GemmCase c;
    c.m = m, c.n = 776, c.k = 4112;
    c.lda_pad = 16, c.ldb_pad = 32, c.ldo_pad = 8;
    expect_padded_views_and_declines({GemmKernel::kSm90SwappedStreamK, "sm90 swapped stream-K", &workspace}, c, 769);
  }
}

// The same bits on every run (fp8's peers add in k order; int8's int32 sums
// are exact in any order), with the workspace left as the last run left it.
TEST_F(ScaledMmSwappedStreamK, Deterministic) {
  StreamKWorkspace workspace;
  GemmCase c;
  c.m = 176, c.n = 1024, c.k = 8192;
  expect_deterministic({GemmKernel::kSm90SwappedStreamK, "sm90 swapped stream-K", &workspace}, c);
}

// The public API on `shapes` (M, N, K) with a workspace, where the rule
// sends them to the swapped stream-K tiles on 132 SMs, and without one, int8
// and fp8 with a bias against the CPU; with `int8_same_bits`, int8's output
// the same bits both ways (where the twin without a workspace is swapped too).
void expect_public_api_takes_it(std::initializer_list<std::array<int64_t, 3>> shapes, bool int8_same_bits) {
  for (const auto& mnk : shapes) {
    for (DType input : {DType::kInt8, DType::kFloat8E4M3}) {
      GemmCase c;
      c.m = mnk[0], c.n = mnk[1], c.k = mnk[2], c.input = input, c.bias = true;
      auto rng = make_rng(static_cast<uint64_t>(31 + mnk[0] + mnk[1]));
      GemmProblem p(c, rng);
      const WithAndWithoutWorkspace out = run_with_and_without_workspace(p);
      if (StreamKWorkspace::sm_count() == 132) {
        EXPECT_EQ(out.chosen_with, GemmKernel::kSm90SwappedStreamK) << c.name();
      }
      EXPECT_EQ(compare_all(p, out.with, "scaled_mm with a workspace"), 0);
      EXPECT_EQ(compare_all(p, out.without, "scaled_mm without a workspace"), 0);
      if (input == DType::kInt8 && int8_same_bits) EXPECT_EQ(out.with, out.without) << c.name();
    }
  }
}

// The public API on shapes the rule sends here with a workspace on 132 SMs
// (136×10240×1024: N where the 64-channel tiles do not fill; 136×14336×4096:
// 224 tiles filling 85 % of two waves, 27.2 k-tiles per SM; 136×12288×2048
// and 136×12288×1024: 192 tiles, 73 % of two waves, 11.6 and 5.8 k-tiles per
// SM) and elsewhere without one, against the CPU; int8 the same bits both
// ways. (Where the token halves take two waves, N = 4225–6143, their
// stream-K twin takes long K since it beat these tiles there.)
TEST_F(ScaledMmSwappedStreamK, PublicApiTakesItWithAWorkspace) {
  expect_public_api_takes_it({{136, 10240, 1024}, {136, 12288, 1024}, {136, 14336, 4096}, {136, 12288, 2048}}, true);
}

// The public API where the rule sends M = 193–256 to three token tiles (N =
// 4225–5632 from K = 2048), M = 257–384 to four (N = 2945–4224 from K =
// 2048; N = 2560 from K = 4096, 15 k-tiles per SM), M = 257–288 to three
// where four would leave one wave, M = 385–768 to five to eight, and M =
// 257–320 past one wave from K = 4096, with a workspace on 132 SMs, and
// without one to the 128-row tiles, against the CPU.
TEST_F(ScaledMmSwappedStreamK, PublicApiTakesTokenTilesWithAWorkspace) {
  expect_public_api_takes_it({{200, 5120, 2048},
                              {241, 4352, 4096},
                              {256, 5632, 2064},
                              {300, 4096, 2048},
                              {384, 3072, 4096},
                              {320, 2560, 4096},
                              {272, 4352, 2048},
                              {768, 1536, 2048},
                              {300, 4352, 4096}},
                             false);
}

}  // namespace
}  // namespace qgemm::test
