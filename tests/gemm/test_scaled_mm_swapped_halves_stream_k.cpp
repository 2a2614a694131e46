// GPU tests of the token halves' stream-K twin (kSm90SwappedHalvesStreamK,
// sm90_swapped_stream_k.cuh): M = 129–192 computed as Dᵀ = B·Aᵀ on 128×80
// (M ≤ 160) or 128×96 cooperative tiles, the two token tiles of 128
// channels in one cluster sharing the weight tile, the tiles cut along K by
// CUTLASS's stream-K scheduler, the peers of a cut tile meeting in the
// call's workspace, Dᵀ stored column-major through TMA.
//
// What could go wrong, and what catches it:
//   - the second token tile's offset (its columns start at 80 or 96, the
//     last ones past M): every M from 129 to 192 with outputs poisoned
//     first, int8 bit for bit against the whole swapped tiles
//     (kSm90Swapped: the same epilogue on one token tile), fp8 against the
//     CPU;
//   - the multicast of the weight tile to both token tiles of a cluster
//     while the scheduler cuts along K (a half adding another k range's
//     rows): every epilogue variant and every M with K long enough that
//     every tile is cut, against the CPU;
//   - the split's fix-up (peers adding partial sums in the workspace): a
//     workspace filled with garbage by the helpers, tails of 16, and the
//     same bits on every run;
//   - precise fp8's sliced promotion (2 slices of 40 or 48 tokens) across a
//     cut: fp8 at both tile widths with K of 33 to 129 k-tiles;
//   - sub-matrix views; M ≤ 128, M > 192, an output pitch TMA cannot store,
//     no workspace and too small a one are declined.
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

class ScaledMmSwappedHalvesStreamK : public ::testing::Test {
 protected:
  void SetUp() override {
    QGEMM_SKIP_WITHOUT_GPU();
    if (!sm90a_kernels_expected()) GTEST_SKIP() << "kSm90SwappedHalvesStreamK is sm_90a";
  }
};

constexpr const char* kLabel = "sm90 swapped halves stream-K";

// Every epilogue variant (scales per tensor / token / channel, bias, zero
// points, bf16 / fp16, int8 and fp8) against the CPU backend at both token
// tiles: one k-tile, N ragged against 128 channels, and K up to 129
// k-tiles, tails of 16.
TEST_F(ScaledMmSwappedHalvesStreamK, EveryEpilogueMatchesCpu) {
  StreamKWorkspace workspace;
  expect_every_epilogue_matches_cpu({GemmKernel::kSm90SwappedHalvesStreamK, kLabel, &workspace},
                                    {{150, 128, 128}, {129, 1000, 208}, {160, 2056, 4112}, {161, 520, 4112},
                                     {192, 264, 16400}});
}

// Every M from 129 to 192 (the second token tile holds 49 … 80 or 65 … 96
// of its columns), int8 with per-token zero points and fp8, against the
// CPU; int8 also bit for bit against the whole swapped tiles.
TEST_F(ScaledMmSwappedHalvesStreamK, EveryMAtItsTiles) {
  StreamKWorkspace workspace;
  std::vector<int64_t> ms;
  for (int64_t m = 129; m <= 192; ++m) ms.push_back(m);
  expect_every_m_matches_cpu({GemmKernel::kSm90SwappedHalvesStreamK, kLabel, &workspace}, ms, 392, 4112,
                             {DType::kInt8, DType::kFloat8E4M3}, GemmKernel::kSm90Swapped);
}

// Sub-matrix views (leading dimensions past the row; the output's a
// multiple of 8, as TMA needs). Declined: no workspace, 256 bytes of one, an
// output pitch TMA cannot store, M = 193, and M ≤ 128, which the whole
// 64-row tiles serve.
TEST_F(ScaledMmSwappedHalvesStreamK, PaddedViewsAndWhatItDeclines) {
  StreamKWorkspace workspace;
  GemmCase c;
  c.m = 150, c.n = 776, c.k = 4112;
  c.lda_pad = 16, c.ldb_pad = 32, c.ldo_pad = 8;
  expect_padded_views_and_declines({GemmKernel::kSm90SwappedHalvesStreamK, kLabel, &workspace}, c, 193, {1, 128});
}

// The same bits on every run (fp8's peers add in k order; int8's int32 sums
// are exact in any order), with the workspace left as the last run left it.
TEST_F(ScaledMmSwappedHalvesStreamK, Deterministic) {
  StreamKWorkspace workspace;
  GemmCase c;
  c.m = 176, c.n = 1024, c.k = 8192;
  expect_deterministic({GemmKernel::kSm90SwappedHalvesStreamK, kLabel, &workspace}, c);
}

// The public API with a workspace on 132 SMs where the rule sends calls
// here — 136×2048×28672 and 192×2560×20480 (160 k-tiles) for both inputs;
// 176×4096×28672 for fp8 only, int8 keeping the halves; past the halves'
// one wave 136×4288×12032, 176×6016×4096 and 144×6144×4096 (32 k-tiles,
// the whole swapped tiles in one wave) for both — and without one (the
// halves, the whole swapped tiles), against the CPU; int8 the same bits
// both ways.
TEST_F(ScaledMmSwappedHalvesStreamK, PublicApiTakesItWithAWorkspace) {
  const Mnk shapes[] = {{136, 2048, 28672}, {192, 2560, 20480}, {176, 4096, 28672}, {136, 4288, 12032},
                        {176, 6016, 4096},  {144, 6144, 4096}};
  for (const Mnk& s : shapes) {
    for (DType input : {DType::kInt8, DType::kFloat8E4M3}) {
      GemmCase c;
      c.m = s.m, c.n = s.n, c.k = s.k, c.input = input, c.bias = true;
      auto rng = make_rng(static_cast<uint64_t>(37 + s.n));
      GemmProblem p(c, rng);
      const WithAndWithoutWorkspace out = run_with_and_without_workspace(p);
      if (StreamKWorkspace::sm_count() == 132) {
        const bool int8_keeps_halves = input == DType::kInt8 && s.n >= 3072 && s.n <= 4224;
        EXPECT_EQ(out.chosen_with,
                  int8_keeps_halves ? GemmKernel::kSm90SwappedHalves : GemmKernel::kSm90SwappedHalvesStreamK)
            << c.name();
      }
      EXPECT_EQ(compare_all(p, out.with, "scaled_mm with a workspace"), 0);
      EXPECT_EQ(compare_all(p, out.without, "scaled_mm without a workspace"), 0);
      if (input == DType::kInt8) EXPECT_EQ(out.with, out.without) << c.name();
    }
  }
}

}  // namespace
}  // namespace qgemm::test
