// Stream-K in the wgmma weight-only kernel (src/wonly/cuda/wonly_stream_k.h):
//  - its arithmetic on the host: every iteration belongs to exactly one CTA
//    (begin / cta_of), and the rule that picks it;
//  - forced on the GPU with every CTA count from one CTA doing everything to
//    CTAs with 8 k tiles each (a tile cut between up to 9 CTAs), on
//    ragged shapes, both stream-K tiles (64 and 256 tokens), int4 and int8,
//    both dtypes, plain and prepacked: against the CPU twin;
//  - the same bits from run to run, whatever the workspace held before, and
//    from a CUDA graph replay;
//  - workspace arguments that the GPU path refuses.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <vector>

#include "common/cuda_buffer.h"
#include "common/expect_error.h"
#include "wonly/cuda/wonly_cuda.h"
#include "wonly/cuda/wonly_stream_k.h"
#include "wonly/wonly_cuda_check.h"
#include "wonly/wonly_problem.h"

namespace qgemm::test {
namespace {

using detail::wonly::StreamKPlan;
using detail::wonly::stream_k_ctas;

StreamKPlan plan(int ctas, int64_t tiles, int k_tiles) {
  StreamKPlan p;
  p.ctas = ctas, p.k_tiles = k_tiles, p.tiles_x = 1, p.tiles_y = tiles;
  return p;
}

TEST(WeightOnlyStreamKPlan, EveryIterationHasOneCta) {
  for (int ctas : {1, 2, 7, 132, 264}) {
    for (int64_t tiles : {1, 3, 224, 344}) {
      for (int k_tiles : {1, 5, 64, 128}) {
        const StreamKPlan p = plan(ctas, tiles, k_tiles);
        if (p.iterations() < ctas) continue;  // the launcher keeps ≥ 8 per CTA
        EXPECT_EQ(p.begin(0), 0);
        EXPECT_EQ(p.begin(ctas), p.iterations());
        for (int c = 0; c < ctas; ++c) {
          ASSERT_LT(p.begin(c), p.begin(c + 1)) << "an empty run: " << ctas << " " << tiles << " " << k_tiles;
          for (int64_t i : {p.begin(c), p.begin(c + 1) - 1}) ASSERT_EQ(p.cta_of(i), c) << i;
        }
      }
    }
  }
}

TEST(WeightOnlyStreamKPlan, RulePicksRaggedGrids) {
  constexpr int64_t kPartial64 = 32 * 256 * 4, kPartial256 = 128 * 256 * 4, kWorkspace = 132 * 128 * 1024 + 4096;
  // M = 64 on (28672, 8192): 224 tiles of 128 k tiles on 264 slots, 85 % full.
  EXPECT_EQ(stream_k_ctas(224, 128, 264, 8, kPartial64, kWorkspace), 264);
  // M = 256 there: 224 tiles on 132 slots take two rounds; an equal share is 1.7 tiles.
  EXPECT_EQ(stream_k_ctas(224, 128, 132, 8, kPartial256, kWorkspace), 132);
  // M = 1024 on (11008, 4096): 344 tiles, three rounds for 2.6 tiles of work.
  EXPECT_EQ(stream_k_ctas(344, 64, 132, 8, kPartial256, kWorkspace), 132);
  // Within 10 % of an equal share: M = 4096 there (1376 tiles, 10.4 rounds), 896 tiles on 132.
  EXPECT_EQ(stream_k_ctas(1376, 64, 132, 8, kPartial256, kWorkspace), 0);
  EXPECT_EQ(stream_k_ctas(896, 128, 132, 8, kPartial256, kWorkspace), 0);
  // Whole rounds, too little work per CTA, a workspace too small.
  EXPECT_EQ(stream_k_ctas(264, 128, 132, 8, kPartial256, kWorkspace), 0);
  EXPECT_EQ(stream_k_ctas(100, 4, 132, 8, kPartial256, kWorkspace), 0);
  EXPECT_EQ(stream_k_ctas(224, 128, 132, 8, kPartial256, kWorkspace / 2), 0);
  // In place of a cluster split of ≥ 4: one CTA per SM, given 8 k tiles per CTA and the workspace.
  using detail::wonly::stream_k_ctas_small_grid;
  EXPECT_EQ(stream_k_ctas_small_grid(172, 32, 132, 8, kPartial64, kWorkspace), 132);  // M = 64 on (4096, 11008)
  EXPECT_EQ(stream_k_ctas_small_grid(16, 32, 132, 8, kPartial64, kWorkspace), 0);    // 512 k tiles: under 8 each
  EXPECT_EQ(stream_k_ctas_small_grid(172, 32, 132, 8, kPartial64, 1000), 0);
}

class WeightOnlyStreamK : public ::testing::Test {
 protected:
  void SetUp() override {
    QGEMM_SKIP_WITHOUT_GPU();
    if (!detail::wonly_wgmma_available(0)) GTEST_SKIP() << "the wgmma kernel runs on sm_90 only";
    bytes_ = weight_only_workspace_bytes(kGpu);
    buffer_ = std::make_unique<CudaBuffer>(static_cast<size_t>(bytes_));
    workspace_ = TensorView(buffer_->get(), DType::kUInt8, {bytes_}, kGpu);
  }
  int64_t bytes_ = 0;
  std::unique_ptr<CudaBuffer> buffer_;
  TensorView workspace_;
};

// Tiles 3 (1000 × 288 at 256 tokens) … 80 (1000 × 512, M = 257 at 64
// tokens); 1 CTA, a few, and more CTAs than tiles.
TEST_F(WeightOnlyStreamK, ForcedCtasMatchCpu) {
  const int64_t shapes[][2] = {{1000, 288}, {129, 4128}, {300, 1024}, {1000, 512}};
  int index = 0;
  for (bool int4 : {true, false}) {
    for (int tile : {32, 64, 256}) {
      detail::WonlyKernelOverride force(detail::WonlyKernel::kWgmma, tile);
      for (const auto& s : shapes) {
        for (int64_t m : {17, 100, 257}) {
          const WonlyCase c = cycled_case(m, s[0], s[1], int4, index++);
          auto rng = make_rng(static_cast<uint64_t>(index * 977 + tile));
          const WonlyWeights w(c.n, c.k, int4, c.group(), c.offsets, c.ldw_pad, rng);
          const DeviceWeights dev(w, c.prepacked);
          const int64_t tiles = (c.m + tile - 1) / tile * ((c.n + 127) / 128), k_tiles = (c.k + 63) / 64;
          for (int64_t ctas : {int64_t{1}, int64_t{3}, 2 * tiles + 1, tiles * k_tiles / 8}) {
            if (ctas < 1 || ctas > tiles * k_tiles || ctas > 132) continue;
            detail::WonlyStreamKOverride sk(static_cast<int>(ctas));
            SCOPED_TRACE("tile " + std::to_string(tile) + ", " + std::to_string(ctas) + " stream-K CTAs");
            check_case(c, w, dev, {{0, c.n}}, &workspace_);
          }
        }
      }
    }
  }
}

// The rules' own choice on grids a cluster split of 8 would serve (8 row
// tiles, 256 k tiles: stream-K over one CTA per SM, tiles cut between ~17
// CTAs; at M = 17–32 the four-token-block decode launch runs instead),
// against the CPU twin.
TEST_F(WeightOnlyStreamK, SmallGridRuleMatchesCpu) {
  int index = 0;
  for (bool int4 : {true, false}) {
    for (int64_t m : {17, 32, 48, 64}) {
      WonlyCase c;
      c.m = m, c.n = 1000, c.k = 16384, c.int4 = int4, c.group_size = int4 ? 128 : 0;
      c.offsets = index % 2 == 0, c.bias = index % 3 != 1, c.dtype = index % 2 ? DType::kFloat16 : DType::kBFloat16;
      ++index;
      auto rng = make_rng(static_cast<uint64_t>(index * 31 + 5));
      const WonlyWeights w(c.n, c.k, int4, c.group(), c.offsets, c.ldw_pad, rng);
      const DeviceWeights dev(w, index == 3);
      check_case(c, w, dev, {{0, c.n}}, &workspace_);
    }
  }
}

// The partial-sum order is fixed: a second call, after the workspace was
// filled with garbage (flags set, partials NaN), gives the same bits; so does
// a CUDA graph replay of the call. Needs no initialized workspace.
TEST_F(WeightOnlyStreamK, DeterministicAnyWorkspaceContentsAndGraphs) {
  WonlyCase c;
  c.m = 100, c.n = 1000, c.k = 4096, c.group_size = 128;
  const DeviceProblem p(c, 7);
  const DeviceCall& call = p.call;
  CudaBuffer first = call.output(), second = call.output(), replayed = call.output();
  detail::WonlyKernelOverride force(detail::WonlyKernel::kWgmma, 64);
  detail::WonlyStreamKOverride sk(37);  // 16 tiles × 64 k tiles: tiles cut between 3 CTAs
  cudaStream_t stream = nullptr;
  QGEMM_TEST_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  for (CudaBuffer* out : {&first, &second, &replayed}) out->poison();
  QGEMM_TEST_CUDA(cudaMemset(buffer_->get(), 0xff, static_cast<size_t>(bytes_)));
  call.run(first, &workspace_, stream);
  QGEMM_TEST_CUDA(cudaMemsetAsync(buffer_->get(), 0xff, static_cast<size_t>(bytes_), stream));
  call.run(second, &workspace_, stream);
  replay_in_graph(stream, [&] { call.run(replayed, &workspace_, stream); }, 2);
  std::vector<uint16_t> want, got, graph_out;
  first.download(want);
  second.download(got);
  replayed.download(graph_out);
  EXPECT_EQ(got, want);
  EXPECT_EQ(graph_out, want);
  cudaStreamDestroy(stream);
  check_case(c, p.w, p.dev, {{0, c.n}}, &workspace_);  // and the bits are right
}

// The workspace overload on the GPU: too small, misaligned, on the CPU,
// overlapping the output; and an override the launcher cannot honour.
TEST_F(WeightOnlyStreamK, RefusesBadWorkspaces) {
  WonlyCase c;
  c.m = 64, c.n = 256, c.k = 512, c.group_size = 128;  // 8 k tiles: no cluster split
  auto rng = make_rng(3);
  const WonlyWeights w(c.n, c.k, c.int4, c.group(), c.offsets, c.ldw_pad, rng);
  const DeviceWeights dev(w, false);
  WonlyActs x(c, rng);
  CudaBuffer a(x.a), out(x.out.size() * 2);
  out.poison();
  const TensorView out_v = x.out_view(out.get(), c.n, x.ldo, kGpu);
  auto run = [&](const TensorView& ws) {
    weight_only_mm(out_v, x.a_view(a.get(), kGpu), dev.w_view, w.scales_view(dev.scales->get(), 0, c.n, kGpu),
                   w.offsets_view(dev.offsets->get(), 0, c.n, kGpu), w.group, std::nullopt, ws);
  };
  auto* base = static_cast<uint8_t*>(buffer_->get());
  expect_error([&] { run(TensorView(base, DType::kUInt8, {bytes_ - 1}, kGpu)); }, ErrorKind::kValue,
               {"workspace", "weight_only_workspace_bytes", std::to_string(bytes_)});
  CudaBuffer bigger(static_cast<size_t>(bytes_ + 16));
  expect_error([&] { run(TensorView(static_cast<uint8_t*>(bigger.get()) + 4, DType::kUInt8, {bytes_}, kGpu)); },
               ErrorKind::kValue, {"workspace", "16-byte aligned"});
  std::vector<uint8_t> host(static_cast<size_t>(bytes_));
  expect_error([&] { run(TensorView(host.data(), DType::kUInt8, {bytes_})); }, ErrorKind::kValue, {"workspace"});
  expect_error([&] { run(TensorView(out.get(), DType::kUInt8, {bytes_}, kGpu)); }, ErrorKind::kValue,
               {"workspace", "overlap", "out"});
  {
    detail::WonlyKernelOverride force(detail::WonlyKernel::kWgmma, 64);
    detail::WonlyStreamKOverride sk(1 << 20);
    expect_error([&] { run(workspace_); }, ErrorKind::kValue, {"WonlyStreamKOverride", "do not fit"});
  }
  EXPECT_THROW(detail::WonlyStreamKOverride(-1), Error);
  QGEMM_TEST_CUDA(cudaDeviceSynchronize());
}

}  // namespace
}  // namespace qgemm::test
