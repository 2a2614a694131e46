// GPU tests of the stream-K Hopper kernel (kSm90StreamK) and of scaled_mm
// with a workspace (docs/gemm.md, "Stream-K").
//
// Stream-K splits the k loops of the tiles of the last waves over the SMs;
// the peers of a split tile add their partial accumulators in the workspace
// in a fixed order. So:
//   - int8: the int32 partial sums add exactly, and the result must match
//     the CPU backend as every int8 kernel does (one output ulp), and be the
//     same bits as the data-parallel run of the same kernel;
//   - precise fp8: the same fp32 sums as the data-parallel kernel, added in
//     another order: the precise tolerance of gemm_compare.h holds;
//   - every run with the same inputs gives the same bits (Deterministic).
// The shapes make the scheduler split: fewer output tiles than SMs with 16+
// k-tiles per tile (CUTLASS splits nothing with 8 or fewer), a K tail of 16,
// M past a tile, and 144 tiles on 132 SMs (one full wave and a ragged one,
// all split). With too small a workspace the kernel runs data-parallel.
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

bool hopper() {
  int major = 0;
  cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0);
  return major == 9;
}

// kSm90StreamK forced on p with `workspace_bytes` of the workspace (−1: all
// of it); empty when the kernel is not built here.
std::vector<uint8_t> run_stream_k(const GemmProblem& p, const StreamKWorkspace& workspace,
                                  int64_t workspace_bytes = -1) {
  return run_forced(p, GemmKernel::kSm90StreamK, &workspace, workspace_bytes);
}

class ScaledMmStreamK : public ::testing::Test {
 protected:
  void SetUp() override {
    QGEMM_SKIP_WITHOUT_GPU();
    if (!hopper()) GTEST_SKIP() << "kSm90StreamK is sm_90a";
  }
};

// Every epilogue variant (scales, bias, zero points, bf16 / fp16, int8 and
// precise fp8) against the CPU backend, split and data-parallel.
TEST_F(ScaledMmStreamK, EveryEpilogueMatchesCpu) {
  StreamKWorkspace workspace;
  expect_every_epilogue_matches_cpu({GemmKernel::kSm90StreamK, "stream-K", &workspace},
                                    {{136, 1000, 2064}, {64, 512, 4096}, {300, 400, 528}});
}

// One wave and a ragged second (144 tiles of 128×256 on 132 SMs): the
// scheduler splits every tile, nine k-tiles each.
TEST_F(ScaledMmStreamK, TwoWavesMatchCpu) {
  if (StreamKWorkspace::sm_count() != 132) GTEST_SKIP() << "the shape is sized for 132 SMs";
  StreamKWorkspace workspace;
  for (DType input : {DType::kInt8, DType::kFloat8E4M3}) {
    GemmCase c;
    c.m = 1100, c.n = 4096, c.k = 1040, c.input = input, c.bias = true;
    c.per_token = true, c.per_channel = true;
    c.zero_point = input == DType::kInt8 ? ZeroPoint::kPerToken : ZeroPoint::kNone;
    auto rng = make_rng(11);
    GemmProblem p(c, rng);
    const std::vector<uint8_t> out = run_stream_k(p, workspace);
    ASSERT_FALSE(out.empty());
    EXPECT_EQ(compare_all(p, out, "stream-K two waves"), 0);
  }
}

// The same bits on every run; int8 the same bits as data-parallel (too small
// a workspace: the kernel runs whole tiles), fp8 within the precise bound.
TEST_F(ScaledMmStreamK, DeterministicAndDataParallelWithoutRoom) {
  StreamKWorkspace workspace;
  for (DType input : {DType::kInt8, DType::kFloat8E4M3}) {
    GemmCase c;
    c.m = 136, c.n = 1000, c.k = 4112, c.input = input, c.bias = true, c.per_token = true;
    auto rng = make_rng(12);
    GemmProblem p(c, rng);
    const std::vector<uint8_t> first = run_stream_k(p, workspace);
    ASSERT_FALSE(first.empty());
    for (int run = 0; run < 3; ++run) EXPECT_EQ(run_stream_k(p, workspace), first) << c.name() << " run " << run;
    const std::vector<uint8_t> whole_tiles = run_stream_k(p, workspace, 1024);
    EXPECT_EQ(compare_all(p, whole_tiles, "stream-K kernel, data-parallel"), 0);
    if (input == DType::kInt8) EXPECT_EQ(whole_tiles, first);
  }
}

// The public API with a workspace: the dispatcher's pick (stream-K where the
// tile model says it balances the SMs better: 769×2048×14336 on 132 SMs, 56
// tiles of 128×256, the last M tile one row, over 112 k-tiles each; M ≤ 768
// goes to the swapped token tiles first where they take it) against the
// CPU, and, for int8, the same bits as the call without a workspace.
TEST_F(ScaledMmStreamK, PublicApiWithWorkspace) {
  ASSERT_EQ(scaled_mm_workspace_bytes(Device::cuda(0)), detail::stream_k_workspace_bytes(StreamKWorkspace::sm_count()));
  const int64_t shapes[][3] = {{769, 2048, 14336}, {136, 1024, 4096}, {520, 4096, 1040}, {24, 512, 8192}};
  for (const auto& s : shapes) {
    for (DType input : {DType::kInt8, DType::kFloat8E4M3}) {
      GemmCase c;
      c.m = s[0], c.n = s[1], c.k = s[2], c.input = input, c.bias = true, c.per_channel = true;
      auto rng = make_rng(static_cast<uint64_t>(s[0] + s[2]));
      GemmProblem p(c, rng);
      const WithAndWithoutWorkspace out = run_with_and_without_workspace(p);
      if (s[0] == 769 && StreamKWorkspace::sm_count() == 132) EXPECT_EQ(out.chosen_with, GemmKernel::kSm90StreamK);
      const std::string what = std::string("with workspace (") + detail::gemm_kernel_name(out.chosen_with) + ")";
      EXPECT_EQ(compare_all(p, out.with, what), 0);
      if (input == DType::kInt8) EXPECT_EQ(out.with, out.without) << c.name();
    }
  }
}

}  // namespace
}  // namespace qgemm::test
