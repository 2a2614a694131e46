// CUDA weight_only_mm / weight_only_prepack against the CPU twin.
//  - The issue's shapes (N,K) ∈ {(4096,4096), (11008,4096), (4096,11008),
//    (28672,8192), (1000,512)} × M ∈ {1,2,3,8,16,33,128,1000} × int4/int8,
//    cycling every group size, offsets on/off, bias on/off and both dtypes.
//    The CPU reference is computed on column blocks (first, middle, last) of
//    the big shapes; every output element is checked to be written.
//  - Small odd shapes in full: every variant, plain and prepacked.
//  - ŵ read back bit for bit through one-hot activations, every kernel.
//  - CUDA-graph capture and replay of every dispatch path.
//  - Both tensor-core kernels on the same problems: on an H100 M > 16 runs
//    the wgmma kernel (int4 and int8), so the mma.sync kernel (what sm_80
//    GPUs run) is forced with detail::WonlyKernelOverride, and every wgmma
//    tile.
// Both sides compute the same ŵ bit for bit; only the fp32 summation order
// differs, so the tolerance is 2(K+1)·2^-24·Σ|a·ŵ| plus one ulp of T.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <memory>
#include <optional>
#include <tuple>
#include <utility>
#include <vector>

#include "common/cuda_buffer.h"
#include "common/expect_error.h"
#include "wonly/cuda/wonly_cuda.h"
#include "wonly/cuda/wonly_split_plan.h"
#include "wonly/cuda/wonly_stream_plan.h"
#include "wonly/wonly_cuda_check.h"
#include "wonly/wonly_problem.h"

namespace qgemm::test {
namespace {

const int64_t kTokens[] = {1, 2, 3, 8, 16, 33, 128, 1000};

class WeightOnlyCudaShapes : public ::testing::TestWithParam<std::tuple<int64_t, int64_t, bool>> {
 protected:
  void SetUp() override { QGEMM_SKIP_WITHOUT_GPU(); }
};

TEST_P(WeightOnlyCudaShapes, MatchesCpu) {
  const auto [n, k, int4] = GetParam();
  auto rng = make_rng(static_cast<uint64_t>(n * 3 + k + int4));
  WonlyWeights w(n, k, int4, 32, true, 0, rng);
  DeviceWeights dev(w, false);
  const int64_t b = std::min<int64_t>(n, 32);
  const std::vector<std::pair<int64_t, int64_t>> blocks = {{0, b}, {n / 2 - b / 2 + 3 < n - b ? n / 2 - b / 2 + 3 : 0, b}, {n - b, b}};
  // Two variants per M, so that every group size, offsets and bias both ways
  // and both dtypes meet every shape.
  for (size_t mi = 0; mi < std::size(kTokens); ++mi) {
    for (int variant = 0; variant < 2; ++variant) {
      WonlyCase c;
      c.m = kTokens[mi], c.n = n, c.k = k, c.int4 = int4;
      c.group_size = kGroups[(mi + 2 * variant) % 4];
      c.offsets = (mi + variant) % 2 == 0;
      c.bias = (mi / 2 + variant) % 2 == 0;
      c.dtype = (mi + variant) % 4 < 2 ? DType::kBFloat16 : DType::kFloat16;
      w.set_params(c.group(), c.offsets, rng);
      dev.upload_params(w);
      check_case(c, w, dev, blocks);
    }
  }
}

using Shape = std::tuple<int64_t, int64_t, bool>;
INSTANTIATE_TEST_SUITE_P(
    IssueShapes, WeightOnlyCudaShapes,
    ::testing::Values(Shape{4096, 4096, true}, Shape{4096, 4096, false}, Shape{11008, 4096, true},
                      Shape{11008, 4096, false}, Shape{4096, 11008, true}, Shape{4096, 11008, false},
                      Shape{28672, 8192, true}, Shape{28672, 8192, false}, Shape{1000, 512, true},
                      Shape{1000, 512, false}),
    [](const auto& info) {
      return std::to_string(std::get<0>(info.param)) + "x" + std::to_string(std::get<1>(info.param)) +
             (std::get<2>(info.param) ? "_int4" : "_int8");
    });

// Small and odd shapes, every output checked: ragged N (not a multiple of
// 16, 32 or 128), K with a partial K tile, M around every dispatch boundary,
// every group × offsets × bias × dtype, plain and prepacked, padded views.
class WeightOnlyCudaSmall : public ::testing::TestWithParam<WonlyCase> {
 protected:
  void SetUp() override { QGEMM_SKIP_WITHOUT_GPU(); }
};

TEST_P(WeightOnlyCudaSmall, MatchesCpu) {
  const WonlyCase c = GetParam();
  auto rng = make_rng(static_cast<uint64_t>(c.m * 7919 + c.n * 31 + c.k));
  const WonlyWeights w(c.n, c.k, c.int4, c.group(), c.offsets, c.ldw_pad, rng);
  const DeviceWeights dev(w, c.prepacked);
  check_case(c, w, dev, {{0, c.n}});
}

// The same cases on the mma.sync kernel where the table picks wgmma.
TEST_P(WeightOnlyCudaSmall, MmaSyncKernelMatchesCpu) {
  const WonlyCase c = GetParam();
  if (c.m <= 32 || !detail::wonly_wgmma_available(0)) GTEST_SKIP() << "already the table's kernel";
  detail::WonlyKernelOverride force(detail::WonlyKernel::kMma, c.m <= 64 ? 64 : 128);
  auto rng = make_rng(static_cast<uint64_t>(c.m * 7919 + c.n * 31 + c.k));
  const WonlyWeights w(c.n, c.k, c.int4, c.group(), c.offsets, c.ldw_pad, rng);
  const DeviceWeights dev(w, c.prepacked);
  check_case(c, w, dev, {{0, c.n}});
}

std::vector<WonlyCase> small_cases() {
  std::vector<WonlyCase> cases;
  const int64_t shapes[][2] = {{1, 32}, {17, 96}, {129, 160}, {1000, 512}, {200, 384}};
  const int64_t tokens[] = {1, 5, 8, 9, 16, 17, 25, 32, 33, 64, 65, 200};
  size_t index = 0;
  for (bool int4 : {true, false}) {
    for (int group : kGroups) {
      for (int flags = 0; flags < 4; ++flags) {
        for (DType dtype : {DType::kBFloat16, DType::kFloat16}) {
          for (const auto& s : shapes) {
            if (group != 0 && s[1] % group != 0) continue;
            WonlyCase c;
            c.n = s[0], c.k = s[1], c.int4 = int4, c.group_size = group, c.dtype = dtype;
            c.offsets = flags & 1, c.bias = flags & 2;
            c.m = tokens[index % std::size(tokens)];
            c.prepacked = index % 3 == 0;
            ++index;
            cases.push_back(c);
          }
        }
      }
    }
  }
  for (int64_t m : tokens) {  // every M through both layouts and padded views
    for (bool int4 : {true, false}) {
      WonlyCase c;
      c.m = m, c.n = 77, c.k = 288, c.int4 = int4, c.group_size = 32;
      c.prepacked = true;
      cases.push_back(c);
      c.prepacked = false, c.lda_pad = 8, c.ldo_pad = 5, c.ldw_pad = 16;
      cases.push_back(c);
    }
  }
  // Split K across a cluster (sm_90: few output tiles, enough K per split),
  // decode and tensor-core kernels: 2 and 4 splits of K tiles that do not
  // divide evenly, with a partial last tile. K = 16544 gives the int4
  // decode shapes of 8 warps (M ≤ 8, and M ≤ 16 on small grids) 4 splits.
  for (const auto& s : {std::array<int64_t, 2>{77, 2080}, std::array<int64_t, 2>{200, 4128},
                        std::array<int64_t, 2>{77, 16544}}) {
    for (int64_t m : {1, 9, 16, 33, 64, 130}) {
      for (bool int4 : {true, false}) {
        WonlyCase c;
        c.m = m, c.n = s[0], c.k = s[1], c.int4 = int4, c.group_size = int4 ? 32 : 0;
        c.offsets = true, c.bias = m != 64, c.prepacked = m == 130;
        c.dtype = int4 ? DType::kBFloat16 : DType::kFloat16;
        cases.push_back(c);
      }
    }
  }
  // int4 M ≤ 4 where 16-row blocks give ≥ 20 warps per SM (N ≥ 80·SMs:
  // 10560 on a 132-SM H100) run the second one-token-block decode shape:
  // ragged N, a partial last K tile, both layouts, a padded view; M = 5 is
  // the first shape on the same weight.
  for (int64_t m : {1, 3, 4, 5}) {
    WonlyCase c;
    c.m = m, c.n = 10595, c.k = 416, c.int4 = true, c.group_size = 32;
    c.offsets = m != 3, c.bias = m != 1, c.prepacked = m == 4;
    c.dtype = m == 3 ? DType::kFloat16 : DType::kBFloat16;
    if (m == 1) c.lda_pad = 8, c.ldo_pad = 5, c.ldw_pad = 16;
    cases.push_back(c);
  }
  // M = 9–16 on N = 5003, ragged, with a partial last K tile: int4 runs the
  // 32-row, 4-warp decode shape (32·SMs < N ≤ 96·SMs: 4256–12672 on an
  // H100), int8 the 16-row one (its 313 blocks fill 79 % of a wave of 396 on
  // an H100, the 32-row shape's 157 blocks 59 % of 264).
  for (int64_t m : {9, 16}) {
    for (bool prepacked : {false, true}) {
      WonlyCase c;
      c.m = m, c.n = 5003, c.k = 416, c.int4 = true, c.group_size = 32;
      c.offsets = prepacked, c.bias = m == 9, c.prepacked = prepacked;
      c.dtype = prepacked ? DType::kFloat16 : DType::kBFloat16;
      cases.push_back(c);
      c.int4 = false, c.group_size = m == 9 ? 0 : 32;  // int8: per channel, and groups
      cases.push_back(c);
    }
  }
  // M = 17…32 (wgmma32_takes, wonly_dispatch.cu): a weight of few row tiles
  // with long K (one decode launch of four token blocks, split K), one of 71
  // row tiles (on a 132-SM Hopper: the 32-token wgmma tile for int4, the
  // decode launch for int8) and one of 102 (wgmma for both); decode launches
  // off sm_90.
  for (const auto& s : {std::array<int64_t, 2>{200, 8256}, std::array<int64_t, 2>{9000, 320},
                        std::array<int64_t, 2>{13000, 320}}) {
    for (int64_t m : {17, 25, 32}) {
      for (bool int4 : {true, false}) {
        WonlyCase c;
        c.m = m, c.n = s[0], c.k = s[1], c.int4 = int4, c.group_size = int4 ? 64 : 0;
        c.offsets = m != 25, c.bias = m != 17, c.prepacked = m == 32;
        c.dtype = m == 25 ? DType::kFloat16 : DType::kBFloat16;
        cases.push_back(c);
      }
    }
  }
  return cases;
}

// The int4 decode shapes its occupancy rules pick (wonly_gemv.cu), bf16:
// 16-row blocks of 8 warps at M ≤ 8 where the 32-row blocks are at most one
// wave and K ≤ 6144 ((4096, 4096), (5000, 4128): a partial K tile and a
// ragged last block), and 32-row blocks of 8 warps at two per SM at M =
// 9–16 where that grid is one wave with more warps per SM ((4096, 11008),
// (8192, 4096) on an H100 or H200), in the table's own dispatch, every
// variant cycled but the dtype, every output checked. The depth-2 shapes
// (the next K tile's weights in flight; fp32 parameters) on a 132-SM GPU:
// 32 rows × 8 warps at M ≤ 8 on (8192, 6176) (a partial K tile, 6 full
// tiles per warp), at M ≤ 4 on (9000, 4128) and split over a cluster on
// (4096, 11008) (5 or 6 tiles per warp: the odd count ends the loop on its
// first half); 32 rows × 4 warps at M = 5–8 on (9000, 4128) (ragged last
// block) and (8704, 224) (one full tile: warps with 1 and 0 tiles, and the
// partial one), the last two also in fp16.
TEST(WeightOnlyCudaGemv, OccupancyShapesMatchCpu) {
  QGEMM_SKIP_WITHOUT_GPU();
  const int64_t shapes[][2] = {{4096, 4096}, {5000, 4128}, {4096, 11008}, {8192, 4096},
                               {8192, 6176}, {9000, 4128},  {8704, 224}};
  int index = 0;
  const auto check = [&index](int64_t m, const int64_t* shape, DType dtype) {
    WonlyCase c = cycled_case(m, shape[0], shape[1], true, index++);
    c.dtype = dtype;
    auto rng = make_rng(static_cast<uint64_t>(index * 173 + 9));
    const WonlyWeights w(c.n, c.k, true, c.group(), c.offsets, c.ldw_pad, rng);
    const DeviceWeights dev(w, c.prepacked);
    check_case(c, w, dev, {{0, c.n}});
  };
  for (const auto& s : shapes) {
    for (int64_t m : {1, 5, 8, 9, 16}) check(m, s, DType::kBFloat16);
  }
  // fp16 takes the 4-warp depth-2 shape too (M = 5–8, fp32 parameters).
  for (const int64_t* s : {shapes[5], shapes[6]}) {
    for (int64_t m : {5, 8}) check(m, s, DType::kFloat16);
  }
}

// A weight of more than 96·SMs rows (H100, H200) at M = 9–16, where the
// decode block depends on dtype and weight type (wonly_gemv.cu, `launch`):
// int4 32-row 4-warp blocks for fp16, 64-row ones for bf16 with row-major
// parameters; int8 16-row blocks at four per SM or 32-row ones, by their
// last-wave fill. Both dtypes, both weight types, every output.
TEST(WeightOnlyCudaGemv, TallWeightsAtNineToSixteenTokensMatchCpu) {
  QGEMM_SKIP_WITHOUT_GPU();
  int index = 0;
  for (bool int4 : {true, false}) {
    for (DType dtype : {DType::kBFloat16, DType::kFloat16}) {
      for (int64_t m : {9, 12, 16}) {
        WonlyCase c = cycled_case(m, 13000, 384, int4, index++);
        c.dtype = dtype;
        auto rng = make_rng(static_cast<uint64_t>(index * 211 + 5));
        const WonlyWeights w(c.n, c.k, int4, c.group(), c.offsets, c.ldw_pad, rng);
        const DeviceWeights dev(w, c.prepacked);
        check_case(c, w, dev, {{0, c.n}});
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(OddShapes, WeightOnlyCudaSmall, ::testing::ValuesIn(small_cases()),
                         [](const auto& info) { return gtest_name(info.param, info.index); });

// Every wgmma tile (32, 64, 128, 256 tokens) forced on ragged shapes (M from 17,
// where the dispatch table can pick it on small grids with long K): partial
// token tiles, N not a multiple of 128 (nor of the 64 rows of a warpgroup),
// K with a partial k tile, split K (200 × 4128: few tiles),
// every group size, offsets and bias both ways, both dtypes, plain and
// prepacked, int4 and int8 weights.
TEST(WeightOnlyCudaWgmma, EveryTileMatchesCpu) {
  QGEMM_SKIP_WITHOUT_GPU();
  if (!detail::wonly_wgmma_available(0)) GTEST_SKIP() << "the wgmma kernel runs on sm_90 only";
  const int64_t shapes[][2] = {{77, 288}, {129, 160}, {1000, 512}, {200, 4128}, {300, 1024}};
  int index = 0;
  for (bool int4 : {true, false}) {
    for (int tile : {32, 64, 128, 256}) {
      detail::WonlyKernelOverride force(detail::WonlyKernel::kWgmma, tile);
      for (const auto& s : shapes) {
        for (int64_t m : {17, 33, 100, 257}) {
          const WonlyCase c = cycled_case(m, s[0], s[1], int4, index++);
          auto rng = make_rng(static_cast<uint64_t>(index * 101 + tile));
          const WonlyWeights w(c.n, c.k, int4, c.group(), c.offsets, c.ldw_pad, rng);
          const DeviceWeights dev(w, c.prepacked);
          SCOPED_TRACE("tile " + std::to_string(tile));
          check_case(c, w, dev, {{0, c.n}});
        }
      }
    }
  }
}

// The decode kernel's four-token-block shapes (M = 17–32 in one launch)
// forced on ragged shapes: partial token blocks (M = 17, 25), a full one
// (32), N not a multiple of 16, K with a partial K tile, split K across a
// cluster (200 × 4128: few row blocks), every group size, offsets and bias
// both ways, both dtypes, plain and prepacked, int4 and int8 — int4 on its
// 16-row shape (N ≤ 16·SMs) and its 32-row one (N = 5003, 10001); and M = 9
// under the same override (two token blocks).
TEST(WeightOnlyCudaGemv, FourTokenBlocksMatchCpu) {
  QGEMM_SKIP_WITHOUT_GPU();
  detail::WonlyKernelOverride force(detail::WonlyKernel::kGemvChunks, 4);
  const int64_t shapes[][2] = {{77, 288}, {129, 160}, {1000, 512}, {200, 4128}, {5003, 416}, {10001, 160}};
  int index = 0;
  for (bool int4 : {true, false}) {
    for (const auto& s : shapes) {
      for (int64_t m : {9, 17, 25, 32}) {
        const WonlyCase c = cycled_case(m, s[0], s[1], int4, index++);
        auto rng = make_rng(static_cast<uint64_t>(index * 131 + 4));
        const WonlyWeights w(c.n, c.k, int4, c.group(), c.offsets, c.ldw_pad, rng);
        const DeviceWeights dev(w, c.prepacked);
        check_case(c, w, dev, {{0, c.n}});
      }
    }
  }
}

// The Hopper int8 decode kernel (weight stages by bulk copy,
// wonly_stream_sm90.cu) forced on ragged shapes: M = 1, 5, 8, 9, 16 (two n8
// token blocks, partial or full); N not a multiple of 16 or 32; K with a
// partial K tile and a partial last stage (K = 160, 288, 416, 1056, 4128: 1–5
// stages of 1024 elements); more row tiles than CTAs (N = 5003, 10001:
// persistent CTAs that walk K in both directions and refill stages across
// tiles); every group size, offsets and bias both ways, both dtypes, plain
// and prepacked, padded views. Then what the override refuses: M > 16, int4
// weights, a tile other than 0.
TEST(WeightOnlyCudaStream, Int8MatchesCpu) {
  QGEMM_SKIP_WITHOUT_GPU();
  if (!detail::wonly_stream_available(0)) GTEST_SKIP() << "the Hopper decode kernel runs on sm_90 only";
  const int64_t shapes[][2] = {{77, 288}, {129, 160}, {1000, 512}, {200, 4128}, {5003, 416}, {10001, 1056}};
  int index = 0;
  {
    detail::WonlyKernelOverride force(detail::WonlyKernel::kStream, 0);
    for (const auto& s : shapes) {
      for (int64_t m : {1, 5, 8, 9, 16}) {
        WonlyCase c = cycled_case(m, s[0], s[1], false, index++);
        if (index % 7 == 3) c.lda_pad = 8, c.ldo_pad = 5, c.ldw_pad = c.prepacked ? 0 : 16;
        auto rng = make_rng(static_cast<uint64_t>(index * 197 + 32));
        const WonlyWeights w(c.n, c.k, false, c.group(), c.offsets, c.ldw_pad, rng);
        const DeviceWeights dev(w, c.prepacked);
        check_case(c, w, dev, {{0, c.n}});
      }
    }
  }

  auto rng = make_rng(11);
  for (bool int4 : {false, true}) {
    WonlyCase c;
    c.n = 64, c.k = 64, c.int4 = int4, c.group_size = 32;
    const WonlyWeights w(c.n, c.k, int4, c.group(), c.offsets, c.ldw_pad, rng);
    const DeviceWeights dev(w, false);
    auto run = [&](int64_t m) {
      c.m = m;
      WonlyActs x(c, rng);
      CudaBuffer a(x.a), out(x.out.size() * 2);
      weight_only_mm(x.out_view(out.get(), c.n, x.ldo, kGpu), x.a_view(a.get(), kGpu), dev.w_view,
                     w.scales_view(dev.scales->get(), 0, c.n, kGpu), std::nullopt, w.group);
    };
    detail::WonlyKernelOverride force(detail::WonlyKernel::kStream, 0);
    if (int4) {
      expect_error([&] { run(16); }, ErrorKind::kValue, {"WonlyKernelOverride", "kStream", "int8", "got M=16, int4"});
    } else {
      expect_error([&] { run(17); }, ErrorKind::kValue, {"WonlyKernelOverride", "kStream", "M <= 16", "got M=17"});
      detail::WonlyKernelOverride bad(detail::WonlyKernel::kStream, 32);
      expect_error([&] { run(16); }, ErrorKind::kValue, {"WonlyKernelOverride", "kStream", "tile 0", "tile 32"});
    }
  }
}

// Where the dispatch gives int8 weights at M ≤ 16 the Hopper decode kernel:
// one round of 32-row tiles (at most one per SM) on four fifths of the SMs,
// or half for the plain layout at M = 9–16, on a GPU whose DRAM gives each
// SM at most 30 GB/s of peak (wonly_stream_plan.h): an H100 SXM (3352 GB/s,
// 132 SMs) or PCIe (2039, 114), not an H200 (4814, 132).
TEST(WeightOnlyStreamPlan, TakesOneRoundOnEnoughSms) {
  const auto stream_takes = [](int64_t n, int64_t m, bool prepacked, int64_t sms) {
    const int64_t peak = sms == 114 ? 2039 : 3352;
    return detail::wonly::stream_takes(n, m, prepacked, sms, peak);
  };
  for (int64_t m : {1, 8, 9, 16}) {
    for (bool prepacked : {false, true}) {
      // The H200: never; nor where the bandwidth per SM is just above 30 GB/s.
      EXPECT_FALSE(detail::wonly::stream_takes(4096, m, prepacked, 132, 4814));
      EXPECT_FALSE(detail::wonly::stream_takes(4096, m, prepacked, 132, 30 * 132 + 1));
      EXPECT_TRUE(detail::wonly::stream_takes(4096, m, prepacked, 132, 30 * 132));
      EXPECT_TRUE(detail::wonly::stream_takes(4096, m, prepacked, 132, 0));  // unknown: the measured rule
    }
  }
  for (int64_t m : {1, 8, 9, 16}) {
    for (bool prepacked : {false, true}) {
      SCOPED_TRACE(testing::Message() << "M=" << m << (prepacked ? " prepacked" : " plain"));
      EXPECT_TRUE(stream_takes(4096, m, prepacked, 132));    // 128 tiles
      EXPECT_TRUE(stream_takes(4224, m, prepacked, 132));    // 132 tiles: one per SM
      EXPECT_FALSE(stream_takes(4225, m, prepacked, 132));   // 133 tiles: two rounds
      EXPECT_FALSE(stream_takes(28672, m, prepacked, 132));  // 896 tiles: 7 rounds
      EXPECT_FALSE(stream_takes(11008, m, prepacked, 132));
      EXPECT_FALSE(stream_takes(2048, m, prepacked, 132));   // 64 tiles
      EXPECT_FALSE(stream_takes(1, m, prepacked, 132));
      EXPECT_TRUE(stream_takes(3648, m, prepacked, 114));    // an H100 PCIe's 114 SMs: 114 tiles
      EXPECT_FALSE(stream_takes(4096, m, prepacked, 114));   // 128 tiles on 114 SMs
      EXPECT_TRUE(stream_takes(3392, m, prepacked, 132));    // 106 tiles: 4/5 of the SMs
      const bool half_suffice = m > 8 && !prepacked;
      EXPECT_EQ(stream_takes(3360, m, prepacked, 132), half_suffice);  // 105 tiles
      EXPECT_EQ(stream_takes(2112, m, prepacked, 132), half_suffice);  // 66 tiles: half the SMs
      EXPECT_FALSE(stream_takes(2080, m, prepacked, 132));             // 65 tiles
    }
  }
}

// Scales and offsets with a row stride larger than the group count, and a
// base 4 bytes past an 8-byte boundary: the wgmma kernel's param blocks
// (wonly_param_blocks.cuh) then take their two-4-byte-copy path although the
// group count is even (odd stride or odd base), or the 8-byte one with
// padding (even stride). Same kernel, same values: the output must equal the
// contiguous call's bit for bit (which the other tests check against the CPU).
TEST(WeightOnlyCudaWgmma, StridedParamsMatchContiguous) {
  QGEMM_SKIP_WITHOUT_GPU();
  const bool wgmma = detail::wonly_wgmma_available(0);
  struct Layout {
    int64_t pad, shift;  // row stride = groups + pad; base = buffer + shift floats
  };
  int index = 0;
  for (const auto& s : {std::array<int64_t, 3>{200, 512, 64}, std::array<int64_t, 3>{77, 288, 32},
                        std::array<int64_t, 3>{300, 1024, 0}}) {
    WonlyCase c;
    c.m = 40 + 50 * index, c.n = s[0], c.k = s[1], c.int4 = true, c.group_size = static_cast<int>(s[2]);
    c.offsets = true, c.bias = index != 1, c.prepacked = index == 2;
    ++index;
    auto rng = make_rng(static_cast<uint64_t>(977 * index));
    const WonlyWeights w(c.n, c.k, true, c.group(), c.offsets, c.ldw_pad, rng);
    const DeviceWeights dev(w, c.prepacked);
    WonlyActs x(c, rng);
    CudaBuffer a(x.a), bias(x.bias), out(x.out.size() * 2), strided_out(x.out.size() * 2);
    const int64_t groups = w.groups();
    for (const auto kernel : {detail::WonlyKernel::kWgmma, detail::WonlyKernel::kMma}) {
      if (kernel == detail::WonlyKernel::kWgmma && !wgmma) continue;
      for (int tile : {64, 128}) {
        detail::WonlyKernelOverride force(kernel, tile);
        out.poison();
        weight_only_mm(x.out_view(out.get(), c.n, x.ldo, kGpu), x.a_view(a.get(), kGpu), dev.w_view,
                       w.scales_view(dev.scales->get(), 0, c.n, kGpu),
                       w.offsets_view(dev.offsets->get(), 0, c.n, kGpu), w.group,
                       x.bias_view(bias.get(), 0, c.n, kGpu));
        std::vector<uint16_t> want;
        ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
        out.download(want);
        for (const Layout layout : {Layout{1, 0}, Layout{2, 0}, Layout{2, 1}}) {
          const int64_t ld = groups + layout.pad;
          std::vector<float> scales(static_cast<size_t>(layout.shift + c.n * ld), 7.0f);
          std::vector<float> offsets(scales.size(), -7.0f);
          for (int64_t r = 0; r < c.n; ++r) {
            for (int64_t g = 0; g < groups; ++g) {
              scales[layout.shift + r * ld + g] = w.scales[r * groups + g];
              offsets[layout.shift + r * ld + g] = w.offsets[r * groups + g];
            }
          }
          CudaBuffer scales_dev(scales), offsets_dev(offsets);
          auto view = [&](const CudaBuffer& b) {
            return TensorView::strided(static_cast<const float*>(b.get()) + layout.shift, DType::kFloat32,
                                       {c.n, groups}, {ld, 1}, kGpu);
          };
          strided_out.poison();
          weight_only_mm(x.out_view(strided_out.get(), c.n, x.ldo, kGpu), x.a_view(a.get(), kGpu), dev.w_view,
                         view(scales_dev), view(offsets_dev), w.group, x.bias_view(bias.get(), 0, c.n, kGpu));
          std::vector<uint16_t> got;
          ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
          strided_out.download(got);
          EXPECT_EQ(got, want) << c.name() << " tile " << tile << " ld " << ld << " shift " << layout.shift
                               << (kernel == detail::WonlyKernel::kWgmma ? " wgmma" : " mma");
        }
      }
    }
  }
}

// Group-major scales and offsets ([K/group, N] viewed as [N, K/group] with
// strides (1, ld), wonly_args.h) read the same values as row-major ones, so
// every kernel's output must equal its row-major output bit for bit (which
// the other tests check against the CPU): the decode kernel's 1, 2 and 4
// token blocks, the Hopper int8 decode kernel, both tensor-core kernels at
// every tile, stream-K (with a workspace) and the dense path; fp32 and
// 16-bit parameters, a base one element past alignment, padded groups.
TEST(WeightOnlyCudaParams, GroupMajorMatchesRowMajor) {
  QGEMM_SKIP_WITHOUT_GPU();
  using detail::WonlyKernel;
  struct Run {
    WonlyKernel kernel;  // kGemv with tile 0: the dispatcher's choice
    int tile;
    int64_t m;
    bool workspace;
  };
  struct Shape {
    bool int4;
    int64_t n, k;
    int group;
    bool prepacked, params16;
    DType dtype;
  };
  // 13000 rows: more than 96·SMs on an H100 or H200, where M = 9–16 in bf16
  // takes 32-row blocks with group-major parameters and 64-row ones with row-major.
  const Shape shapes[] = {{true, 300, 1024, 128, false, false, DType::kBFloat16},
                          {true, 13000, 256, 128, true, false, DType::kBFloat16},
                          {true, 13000, 256, 64, false, true, DType::kBFloat16},
                          {true, 200, 512, 32, true, true, DType::kFloat16},
                          {false, 136, 1024, 64, false, false, DType::kBFloat16},
                          {false, 264, 512, 128, true, true, DType::kBFloat16}};
  int index = 0;
  for (const Shape& sh : shapes) {
    WonlyCase c;
    c.n = sh.n, c.k = sh.k, c.int4 = sh.int4, c.group_size = sh.group, c.prepacked = sh.prepacked, c.dtype = sh.dtype;
    auto rng = make_rng(static_cast<uint64_t>(4242 + index++));
    WonlyWeights w(c.n, c.k, c.int4, c.group(), true, 0, rng);
    if (sh.params16) w.use_16bit_params(c.dtype);
    const DeviceWeights dev(w, c.prepacked);
    CudaBuffer workspace(static_cast<size_t>(weight_only_dense_workspace_bytes(kGpu, c.n, c.k)));
    const TensorView workspace_view(workspace.get(), DType::kUInt8, {static_cast<int64_t>(workspace.bytes())}, kGpu);

    // Two layouts of the group-major copies: an odd row stride and a base 2
    // bytes into the buffer (16-bit parameters go through 2-byte loads), and an
    // even stride from an aligned base (16-bit: 4-byte copies of the aligned
    // words, wonly_param_blocks.cuh `words`).
    for (const auto& [ld_pad, shift] : {std::pair<int64_t, int64_t>{3, 1}, std::pair<int64_t, int64_t>{4, 0}}) {
      const int64_t ld = c.n + ld_pad;
      const CudaBuffer scales_gm(w.group_major_bytes(w.scales_host(), ld, shift));
      const CudaBuffer offsets_gm(w.group_major_bytes(w.offsets_host(), ld, shift));
      const TensorView scales_row = w.scales_view(dev.scales->get(), 0, c.n, kGpu);
      const TensorView scales_col = w.group_major_view(scales_gm.get(), ld, shift, kGpu);
      const TensorView offsets_col = w.group_major_view(offsets_gm.get(), ld, shift, kGpu);

      std::vector<Run> runs;
      for (int64_t m : {1, 5, 12, 16, 24, 40, 64, 130, 300, 700}) runs.push_back({WonlyKernel::kGemv, 0, m, m > 100});
      runs.push_back({WonlyKernel::kGemvChunks, 4, 30, false});
      for (int tile : {64, 128}) runs.push_back({WonlyKernel::kMma, tile, 100, false});
      if (detail::wonly_wgmma_available(0)) {
        for (int tile : {32, 64, 128, 256}) runs.push_back({WonlyKernel::kWgmma, tile, 150, false});
        runs.push_back({WonlyKernel::kWgmma, 64, 48, true});  // stream-K where its rules take it
        runs.push_back({WonlyKernel::kWgmma, 32, 24, true});
      }
      if (!c.int4 && detail::wonly_stream_available(0)) {
        for (int64_t m : {3, 16}) runs.push_back({WonlyKernel::kStream, 0, m, false});
      }
      if (c.n % 8 == 0) {  // the dense GEMMs' operands (dense_operands_aligned)
        if (detail::wonly_dense_available(0)) runs.push_back({WonlyKernel::kDense, 0, 200, true});
        if (detail::wonly_dense_mma_available(0)) runs.push_back({WonlyKernel::kDenseMma, 0, 200, true});
      }

      for (const Run& run : runs) {
        c.m = run.m;
        WonlyActs x(c, rng);
        CudaBuffer a(x.a), bias(x.bias), want_dev(x.out.size() * 2), got_dev(x.out.size() * 2);
        std::optional<detail::WonlyKernelOverride> force;
        if (run.kernel != WonlyKernel::kGemv) force.emplace(run.kernel, run.tile);
        const TensorView* ws = run.workspace ? &workspace_view : nullptr;
        std::vector<uint16_t> want, got;
        want_dev.poison();
        weight_only_mm_with(x.out_view(want_dev.get(), c.n, x.ldo, kGpu), x.a_view(a.get(), kGpu), dev.w_view,
                            scales_row, w.offsets_view(dev.offsets->get(), 0, c.n, kGpu), w.group,
                            x.bias_view(bias.get(), 0, c.n, kGpu), ws);
        got_dev.poison();
        weight_only_mm_with(x.out_view(got_dev.get(), c.n, x.ldo, kGpu), x.a_view(a.get(), kGpu), dev.w_view,
                            scales_col, offsets_col, w.group, x.bias_view(bias.get(), 0, c.n, kGpu), ws);
        ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
        want_dev.download(want);
        got_dev.download(got);
        ASSERT_EQ(got, want) << c.name() << (sh.params16 ? " 16-bit params" : "") << " kernel "
                             << static_cast<int>(run.kernel) << " tile " << run.tile
                             << (run.workspace ? " workspace" : "") << " ld +" << ld_pad;
      }
    }
  }
}

// Asking for a kernel where it cannot run, or a tile it does not have, is an
// error, not a wrong result: the wgmma kernel off sm_90 (on an H100 it runs
// int8 weights: checked against the CPU), tiles that no kernel has.
TEST(WeightOnlyCudaWgmma, OverrideRefusesWhatCannotRun) {
  QGEMM_SKIP_WITHOUT_GPU();
  WonlyCase c;
  c.m = 40, c.n = 64, c.k = 64, c.int4 = false, c.group_size = 0;
  auto rng = make_rng(5);
  const WonlyWeights w(c.n, c.k, false, c.group(), c.offsets, c.ldw_pad, rng);
  const DeviceWeights dev(w, false);
  WonlyActs x(c, rng);
  CudaBuffer a(x.a), out(x.out.size() * 2);
  {
    detail::WonlyKernelOverride force(detail::WonlyKernel::kWgmma, 64);
    if (detail::wonly_wgmma_available(0)) {
      check_case(c, w, dev, {{0, c.n}});
    } else {
      expect_error([&] {
        weight_only_mm(x.out_view(out.get(), c.n, x.ldo, kGpu), x.a_view(a.get(), kGpu), dev.w_view,
                       w.scales_view(dev.scales->get(), 0, c.n, kGpu), std::nullopt, w.group);
      }, ErrorKind::kValue, {"wgmma", "sm_90"});
    }
  }

  WonlyCase c4 = c;
  c4.int4 = true, c4.group_size = 32;
  const WonlyWeights w4(c4.n, c4.k, true, c4.group(), c4.offsets, c4.ldw_pad, rng);
  const DeviceWeights dev4(w4, false);
  auto run4 = [&] {
    weight_only_mm(x.out_view(out.get(), c4.n, x.ldo, kGpu), x.a_view(a.get(), kGpu), dev4.w_view,
                   w4.scales_view(dev4.scales->get(), 0, c4.n, kGpu), std::nullopt, w4.group);
  };
  {
    detail::WonlyKernelOverride bad(detail::WonlyKernel::kMma, 256);
    expect_error(run4, ErrorKind::kValue, {"WonlyKernelOverride", "got tile 256"});
  }
  if (detail::wonly_wgmma_available(0)) {
    for (int tile : {16, 96}) {
      detail::WonlyKernelOverride bad(detail::WonlyKernel::kWgmma, tile);
      expect_error(run4, ErrorKind::kValue, {"WonlyKernelOverride", "got tile " + std::to_string(tile)});
    }
  }
  {
    detail::WonlyKernelOverride bad(detail::WonlyKernel::kMma, 32);  // the 32-token tile is wgmma's only
    expect_error(run4, ErrorKind::kValue, {"WonlyKernelOverride", "got tile 32"});
  }
  {
    detail::WonlyKernelOverride bad(detail::WonlyKernel::kGemvChunks, 1);
    expect_error(run4, ErrorKind::kValue, {"WonlyKernelOverride", "kGemvChunks", "got tile 1"});
  }
}

// ŵ read back bit for bit: with one-hot activations (token i is 1 at k =
// k_i, 0 elsewhere) out[i, n] = ŵ[n, k_i] exactly (one product, no bias), so
// the GPU's dequantization is compared with the CPU twin's scalar
// (wonly_math.h) for every element of w, through the kernel the table picks
// for M tokens (or the mma.sync kernel, force_mma). Group size 32; the
// weight is prepacked at M = 16. Returns the mismatches (the first 10 are
// reported).
int64_t w_hat_mismatches(WonlyWeights& w, DType dtype, int64_t m, bool force_mma) {
  std::optional<detail::WonlyKernelOverride> force;
  if (force_mma) force.emplace(detail::WonlyKernel::kMma, static_cast<int>(m));
  const int64_t n = w.n, k = w.k;
  const bool prepacked = m == 16;
  const DeviceWeights dev(w, prepacked);
  WonlyCase c;
  c.m = m, c.n = n, c.k = k, c.int4 = w.int4, c.group_size = 32, c.dtype = dtype, c.bias = false;
  const uint16_t one = to_half_bits({1.0f}, dtype)[0];
  int64_t bad = 0;
  for (int64_t k0 = 0; k0 < k; k0 += m) {
    std::vector<uint16_t> a(static_cast<size_t>(m * k), 0);
    for (int64_t i = 0; i < m; ++i) a[i * k + (k0 + i) % k] = one;
    CudaBuffer a_dev(a), out(static_cast<size_t>(m * n * 2));
    out.poison();
    weight_only_mm(TensorView(out.get(), dtype, {m, n}, kGpu), TensorView(a_dev.get(), dtype, {m, k}, kGpu),
                   dev.w_view, w.scales_view(dev.scales->get(), 0, n, kGpu),
                   w.offsets_view(dev.offsets->get(), 0, n, kGpu), 32);
    EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    std::vector<uint16_t> gpu;
    out.download(gpu);
    for (int64_t i = 0; i < m; ++i) {
      const int64_t kk = (k0 + i) % k;
      for (int64_t j = 0; j < n; ++j) {
        const float want = static_cast<float>(w.w_hat(j, kk, dtype));
        const uint16_t want_bits = to_half_bits({want}, dtype)[0];
        const uint16_t got = gpu[i * n + j];
        // ±0: the fp32 accumulator adds +0 to a −0 product.
        const bool same = got == want_bits || ((got | want_bits) & 0x7fff) == 0;
        if (!same && bad++ < 10) {
          ADD_FAILURE() << c.name() << (prepacked ? " prepacked" : "") << (force_mma ? " mma.sync" : "")
                        << " n=" << j << " k=" << kk << " q=" << w.q(j, kk) << " s=" << w.scales[j * w.groups() + kk / 32]
                        << " o=" << w.offsets[j * w.groups() + kk / 32] << ": gpu 0x" << std::hex << got << ", cpu 0x"
                        << want_bits;
        }
      }
    }
  }
  return bad;
}

// Through every kernel of the dispatch table (M = 8, 16, 32, 64, 128, 300;
// int4 with 64 and 128 tokens on both tensor-core kernels). Scales and
// offsets spread over several binades so that q·s_T + o_T needs rounding
// and hits ties; ŵ stays finite (0·inf would poison the other tokens' sums)
// and, for bf16, above the fp32 subnormal range.
TEST(WeightOnlyCudaDequant, BitIdenticalToCpuScalar) {
  QGEMM_SKIP_WITHOUT_GPU();
  const int64_t n = 1024, k = 256;
  int64_t bad = 0;
  for (bool int4 : {true, false}) {
    for (DType dtype : {DType::kBFloat16, DType::kFloat16}) {
      struct Run {
        int64_t m;
        bool force_mma;  // the mma.sync kernel where the table picks wgmma
      };
      for (const auto [m, force_mma] : {Run{8, false}, Run{16, false}, Run{32, false}, Run{64, false},
                                        Run{128, false}, Run{300, false}, Run{64, true}, Run{128, true}}) {
        if (force_mma && !detail::wonly_wgmma_available(0)) continue;
        auto rng = make_rng(static_cast<uint64_t>(int4 * 1000 + (dtype == DType::kFloat16) * 100 + m));
        WonlyWeights w(n, k, int4, 32, true, 0, rng);
        std::uniform_real_distribution<double> expo(-6.0, 3.0), uni(0.5, 1.0);
        for (size_t i = 0; i < w.scales.size(); ++i) {
          const double s = uni(rng) * std::exp2(std::floor(expo(rng)));
          w.scales[i] = static_cast<float>(int4 ? s : s / 16);
          const double o = uni(rng) * std::exp2(std::floor(expo(rng)) + 2);
          w.offsets[i] = static_cast<float>(rng() & 1 ? o : -o);
        }
        bad += w_hat_mismatches(w, dtype, m, force_mma);
      }
    }
  }
  EXPECT_EQ(bad, 0);
}

// bf16 int4 decode (wonly_dequant_scaled.cuh): the one-HFMA2 form holds
// 2^-8·ŵ and is exact only while the scale is below 7.5 and the scale and
// offset are 0 or at least 2^-110 (the offset below 2^120). Parameters at
// and beyond those edges, one group in eight, send a warp's K tile to the
// magic form on rescaled accumulators; ŵ must stay bit-identical either
// way, in the tiles that mix both and in the partial last K tile (K = 288).
// fp32 and bf16 parameters, M = 1 and 8 (one token block), 16 (two, the
// weight prepacked); and M = 64, the same parameters through the 64-token
// wgmma tile on sm_90 with its split of K over a cluster (4 row tiles). N =
// 9000 takes the depth-2 decode shapes at M = 1 and 8 on a 132-SM GPU (with
// fp32 parameters; bf16 ones keep depth 1).
TEST(WeightOnlyCudaDequant, ScaledBf16Int4ExactAtItsEdges) {
  QGEMM_SKIP_WITHOUT_GPU();
  const int64_t k = 288;
  const float edge_scales[] = {7.49f, 7.5f, 8.0f, 40.0f, -100.0f, 0.0f, 0x1p-110f, 0x1p-111f, -0x1p-115f};
  const float edge_offsets[] = {0.0f, 0x1p-110f, -0x1p-110f, 0x1p-112f, 0x1p119f, -0x1p120f, 3.0f, -0.25f};
  int64_t bad = 0, edges = 0;
  const std::pair<int64_t, int64_t> runs[] = {{512, 1}, {512, 8}, {512, 16}, {512, 64}, {9000, 1}, {9000, 8}};
  for (DType params : {DType::kFloat32, DType::kBFloat16}) {
    for (const auto& [n, m] : runs) {
      auto rng = make_rng(static_cast<uint64_t>(7000 + m + n + (params == DType::kBFloat16) * 100));
      WonlyWeights w(n, k, true, 32, true, 0, rng);
      std::uniform_real_distribution<double> expo(-12.0, 2.0), uni(0.5, 1.0);
      for (size_t i = 0; i < w.scales.size(); ++i) {
        const bool edge = rng() % 8 == 0;
        edges += edge;
        w.scales[i] = edge ? edge_scales[rng() % std::size(edge_scales)]
                           : static_cast<float>(uni(rng) * std::exp2(std::floor(expo(rng))));
        const double o = uni(rng) * std::exp2(std::floor(expo(rng)) + 2);
        w.offsets[i] = edge ? edge_offsets[rng() % std::size(edge_offsets)] : static_cast<float>(rng() & 1 ? o : -o);
      }
      if (params == DType::kBFloat16) w.use_16bit_params(params);
      bad += w_hat_mismatches(w, DType::kBFloat16, m, false);
    }
  }
  EXPECT_GT(edges, 100);
  EXPECT_EQ(bad, 0);
}

TEST(WeightOnlyCudaPrepack, SameBytesAsCpu) {
  QGEMM_SKIP_WITHOUT_GPU();
  for (bool int4 : {true, false}) {
    auto rng = make_rng(int4);
    const WonlyWeights w(45, 224, int4, 32, false, 16, rng);
    const auto shape = weight_only_prepacked_shape(w.n, w.k, int4);
    const size_t bytes = static_cast<size_t>(shape.row_blocks * shape.k_tiles * 1024);
    std::vector<uint8_t> cpu(bytes, 0xcd), gpu;
    const DType dtype = int4 ? DType::kUInt8 : DType::kInt8;
    weight_only_prepack(TensorView(cpu.data(), dtype, {shape.row_blocks, shape.k_tiles, 1024}),
                        w.w_view(w.w.data(), 0, w.n));
    CudaBuffer w_dev(w.w), out(bytes);
    out.poison();
    weight_only_prepack(TensorView(out.get(), dtype, {shape.row_blocks, shape.k_tiles, 1024}, kGpu),
                        w.w_view(w_dev.get(), 0, w.n, kGpu));
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    out.download(gpu);
    EXPECT_EQ(gpu, cpu);
  }
}

// The CUDA kernels' 16-byte loads: misaligned views are rejected up front.
// Split K across a cluster: never more CTAs per cluster than the kernel can
// be resident in (a GPU partition may not fit 8), never on pre-sm_90 code,
// never past half the resident CTAs or below min_units of K work per split.
// Host logic only: runs without a GPU.
TEST(WeightOnlySplitK, FactorRespectsClusterLimit) {
  using detail::KernelInfo;
  using detail::wonly::split_k_factor;
  // H100-like: 264 resident CTAs, clusters of 8 fit.
  EXPECT_EQ(split_k_factor(KernelInfo{90, 264, 8}, 32, 64, 8), 8);
  EXPECT_EQ(split_k_factor(KernelInfo{90, 264, 4}, 32, 64, 8), 4);
  EXPECT_EQ(split_k_factor(KernelInfo{90, 264, 2}, 32, 64, 8), 2);
  EXPECT_EQ(split_k_factor(KernelInfo{90, 264, 1}, 32, 64, 8), 1);
  EXPECT_EQ(split_k_factor(KernelInfo{80, 264, 8}, 32, 64, 8), 1);   // sm_80 code: no cluster reduction
  EXPECT_EQ(split_k_factor(KernelInfo{90, 264, 8}, 100, 64, 8), 2);  // 4 × 100 > 264 resident
  EXPECT_EQ(split_k_factor(KernelInfo{90, 264, 8}, 32, 20, 8), 2);   // 4 splits would get < 8 units
  EXPECT_EQ(split_k_factor(KernelInfo{90, 264, 8}, 200, 64, 8), 1);  // the grid already fills half
}

// The wgmma kernel's split: at most one CTA per SM (132), else 2 where the
// doubled grid is resident; never past the cluster limit, never on pre-sm_90
// code, never below min_units per split. Host logic only.
TEST(WeightOnlySplitK, OnePerSmFactor) {
  using detail::KernelInfo;
  using detail::wonly::split_k_factor_one_per_sm;
  const KernelInfo h100{90, 264, 8};  // two CTAs per SM resident, clusters of 8 fit
  EXPECT_EQ(split_k_factor_one_per_sm(h100, 132, 32, 64, 8), 4);    // 128 CTAs
  EXPECT_EQ(split_k_factor_one_per_sm(h100, 132, 64, 64, 8), 2);    // 128 CTAs
  EXPECT_EQ(split_k_factor_one_per_sm(h100, 132, 128, 64, 8), 2);   // > 132 but resident
  EXPECT_EQ(split_k_factor_one_per_sm(h100, 132, 86, 64, 8), 2);
  EXPECT_EQ(split_k_factor_one_per_sm(KernelInfo{90, 132, 8}, 132, 86, 64, 8), 1);  // 172 not resident
  EXPECT_EQ(split_k_factor_one_per_sm(h100, 132, 200, 64, 8), 1);
  EXPECT_EQ(split_k_factor_one_per_sm(h100, 132, 16, 64, 8), 8);    // 128 CTAs
  EXPECT_EQ(split_k_factor_one_per_sm(KernelInfo{90, 264, 4}, 132, 16, 64, 8), 4);  // cluster limit
  EXPECT_EQ(split_k_factor_one_per_sm(KernelInfo{90, 264, 1}, 132, 32, 64, 8), 1);
  EXPECT_EQ(split_k_factor_one_per_sm(KernelInfo{80, 264, 8}, 132, 32, 64, 8), 1);  // sm_80 code
  EXPECT_EQ(split_k_factor_one_per_sm(h100, 132, 32, 20, 8), 2);    // 4 splits would get < 8 units
  EXPECT_EQ(split_k_factor_one_per_sm(h100, 132, 32, 15, 8), 1);
}

TEST(WeightOnlyCudaValidation, SixteenByteAlignment) {
  QGEMM_SKIP_WITHOUT_GPU();
  const int64_t m = 4, n = 32, k = 64;
  CudaBuffer a(m * (k + 8) * 2), w(n * 48), s(n * 4 * 2), out(m * n * 2);
  const TensorView out_v(out.get(), DType::kBFloat16, {m, n}, kGpu);
  const TensorView a_v(a.get(), DType::kBFloat16, {m, k}, kGpu);
  const TensorView w_v(w.get(), DType::kUInt8, {n, k / 2}, kGpu);
  const TensorView s_v(s.get(), DType::kFloat32, {n, 2}, kGpu);
  weight_only_mm(out_v, a_v, w_v, s_v, std::nullopt, 32);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  const auto a_shifted = TensorView(static_cast<uint16_t*>(a.get()) + 4, DType::kBFloat16, {m, k}, kGpu);
  expect_error([&] { weight_only_mm(out_v, a_shifted, w_v, s_v, std::nullopt, 32); }, ErrorKind::kValue,
               {"a:", "16-byte aligned"});
  const auto a_stride = TensorView::strided(a.get(), DType::kBFloat16, {m, k}, {k + 4, 1}, kGpu);
  expect_error([&] { weight_only_mm(out_v, a_stride, w_v, s_v, std::nullopt, 32); }, ErrorKind::kValue,
               {"a:", "multiple of 16 bytes", "136"});
  const auto w_stride = TensorView::strided(w.get(), DType::kUInt8, {n, k / 2}, {40, 1}, kGpu);
  expect_error([&] { weight_only_mm(out_v, a_v, w_stride, s_v, std::nullopt, 32); }, ErrorKind::kValue,
               {"w:", "multiple of 16 bytes", "40"});
}

// A call of M × N × K (int4, group 128) is refused with `expected` before
// anything is launched: the views span small buffers (validation reads only
// shapes and strides, nothing runs) and the poisoned output stays untouched.
// scales_group_stride > 0: group-major scales with that group stride.
void expect_refused_before_launch(int64_t m, int64_t n, int64_t k, const std::vector<std::string>& expected,
                                  int64_t scales_group_stride = 0) {
  CudaBuffer a(4096), w(4096), s(4096), out(4096);
  out.poison();
  const TensorView out_v(out.get(), DType::kBFloat16, {m, n}, kGpu);
  const TensorView a_v(a.get(), DType::kBFloat16, {m, k}, kGpu);
  const TensorView w_v(w.get(), DType::kUInt8, {n, k / 2}, kGpu);
  const TensorView s_v = scales_group_stride > 0
                             ? TensorView::strided(s.get(), DType::kFloat32, {n, k / 128}, {1, scales_group_stride}, kGpu)
                             : TensorView(s.get(), DType::kFloat32, {n, k / 128}, kGpu);
  expect_error([&] { weight_only_mm(out_v, a_v, w_v, s_v, std::nullopt, 128); }, ErrorKind::kValue,
               expected);
  std::vector<uint16_t> after;
  out.download(after);
  for (uint16_t v : after) ASSERT_EQ(v, 0xffff);  // untouched
}

// The tensor-core kernel (M > 32) indexes k in 32 bits: K above 2^30 is
// refused before anything is launched.
TEST(WeightOnlyCudaValidation, TensorCoreKernelKLimit) {
  QGEMM_SKIP_WITHOUT_GPU();
  expect_refused_before_launch(64, 32, (int64_t{1} << 30) + 128, {"K=1073741952", "32-bit k index"});
}

// The tensor-core kernels' parameter blocks index a group in 32 bits: a
// group-major group stride above 2^31 − 1 is refused before anything is
// launched (nothing reads the 8 GB such a view spans).
TEST(WeightOnlyCudaValidation, TensorCoreKernelParamGroupStrideLimit) {
  QGEMM_SKIP_WITHOUT_GPU();
  expect_refused_before_launch(64, 32, 256, {"group stride 2147483648", "32-bit parameter index"},
                               int64_t{1} << 31);
}

// The wgmma kernel's TMA token coordinate is 32-bit: M above 2^31 − 1 is
// refused before anything is launched.
TEST(WeightOnlyCudaValidation, WgmmaKernelMLimit) {
  QGEMM_SKIP_WITHOUT_GPU();
  if (!detail::wonly_wgmma_available(0)) GTEST_SKIP() << "the wgmma kernel runs on sm_90 only";
  expect_refused_before_launch((int64_t{1} << 31) + 64, 32, 128, {"M=2147483712", "32-bit token coordinate"});
}

// The decode kernel (M ≤ 32) adds 32-bit byte offsets to the arguments'
// pointers: a weight of more than 4 GiB, scales whose group-major stride
// puts the last group past 4 GiB, or tokens whose row stride puts the last
// one past 4 GiB, is refused before anything is launched.
TEST(WeightOnlyCudaValidation, DecodeKernelOffsetLimit) {
  QGEMM_SKIP_WITHOUT_GPU();
  const int64_t n = (int64_t{1} << 25) + 32;  // int4 rows of 128 bytes: 4 GiB + 4 KiB
  expect_refused_before_launch(1, n, 256, {"decode kernel", "w through 32-bit offsets", "4294971392 bytes"});
  expect_refused_before_launch(16, 32, 256, {"decode kernel", "scales and offsets", "8589934720 bytes"},
                               int64_t{1} << 31);
  // Two tokens 2^31 elements apart: the second starts 4 GiB into a.
  CudaBuffer a(4096), w(4096), s(4096), out(4096);
  out.poison();
  const int64_t rows = 32, k = 256;
  const TensorView a_v = TensorView::strided(a.get(), DType::kBFloat16, {2, k}, {int64_t{1} << 31, 1}, kGpu);
  const TensorView w_v(w.get(), DType::kUInt8, {rows, k / 2}, kGpu);
  const TensorView s_v(s.get(), DType::kFloat32, {rows, k / 128}, kGpu);
  const TensorView out_v(out.get(), DType::kBFloat16, {2, rows}, kGpu);
  expect_error([&] { weight_only_mm(out_v, a_v, w_v, s_v, std::nullopt, 128); }, ErrorKind::kValue,
               {"decode kernel", "a through 32-bit offsets", "4294967808 bytes"});
  std::vector<uint16_t> after;
  out.download(after);
  for (uint16_t v : after) ASSERT_EQ(v, 0xffff);  // untouched
}

// Every dispatch path — decode kernel, decode kernel per 16 tokens (two
// launches), the wgmma kernel's 32-token tile for M ≤ 32 on a weight of
// many row tiles (M = 20, N = 11008, on sm_90), tensor-core kernel with cluster split K (N = 256: 2 tiles → 8
// splits on an H100) and without it — enqueues on the caller's stream,
// allocates nothing and never synchronizes, so it can be captured into a
// CUDA graph; the replay writes the same bits as a direct call (every path
// is deterministic: fixed reduction orders, no atomics).
TEST(WeightOnlyCudaGraph, CaptureAndReplayMatchDirectCall) {
  QGEMM_SKIP_WITHOUT_GPU();
  for (int64_t m : {1, 20, 24, 64, 200, 300}) {
    WonlyCase c;
    c.m = m, c.n = m >= 200 ? 1000 : m == 20 ? 11008 : 256, c.k = 4096, c.int4 = m != 24;
    c.group_size = 128;
    auto rng = make_rng(static_cast<uint64_t>(m));
    const WonlyWeights w(c.n, c.k, c.int4, c.group(), c.offsets, c.ldw_pad, rng);
    const DeviceWeights dev(w, m == 64);
    WonlyActs x(c, rng);
    CudaBuffer a(x.a), bias(x.bias), direct(x.out.size() * 2), replayed(x.out.size() * 2);
    direct.poison();
    replayed.poison();
    cudaStream_t stream = nullptr;
    QGEMM_TEST_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    auto run = [&](void* out) {
      weight_only_mm(x.out_view(out, c.n, x.ldo, kGpu), x.a_view(a.get(), kGpu), dev.w_view,
                     w.scales_view(dev.scales->get(), 0, c.n, kGpu), w.offsets_view(dev.offsets->get(), 0, c.n, kGpu),
                     w.group, x.bias_view(bias.get(), 0, c.n, kGpu), stream);
    };
    run(direct.get());
    QGEMM_TEST_CUDA(cudaStreamSynchronize(stream));
    cudaGraph_t graph = nullptr;
    cudaGraphExec_t exec = nullptr;
    QGEMM_TEST_CUDA(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
    run(replayed.get());
    QGEMM_TEST_CUDA(cudaStreamEndCapture(stream, &graph));
    QGEMM_TEST_CUDA(cudaGraphInstantiate(&exec, graph, 0));
    for (int replay = 0; replay < 2; ++replay) QGEMM_TEST_CUDA(cudaGraphLaunch(exec, stream));
    QGEMM_TEST_CUDA(cudaStreamSynchronize(stream));
    std::vector<uint16_t> want, got;
    direct.download(want);
    replayed.download(got);
    EXPECT_EQ(got, want) << c.name();
    int64_t unwritten = 0;
    for (int64_t i = 0; i < c.m; ++i)
      for (int64_t j = 0; j < c.n; ++j) unwritten += std::isnan(x.out_value(want, i, j, x.ldo)) ? 1 : 0;
    EXPECT_EQ(unwritten, 0) << c.name();
    cudaGraphExecDestroy(exec);
    cudaGraphDestroy(graph);
    cudaStreamDestroy(stream);
  }
}

}  // namespace
}  // namespace qgemm::test
