// GPU tests of every scaled-GEMM kernel of the CUDA backend (skinny, sm90
// CUTLASS configs, the mma.sync CUTLASS configs — sm80 int8 and their sm89
// fp8 build, run here through their PTX — and the fallback), each forced on the same
// problems, and of the dispatcher across the shape grid:
//   - every epilogue × scale granularity × input × output dtype, per kernel,
//     against the CPU backend on the whole output;
//   - every M from 1 to 130 at N = K ∈ {32, 64, 96};
//   - sub-matrix views (leading dimensions past the row) and misaligned
//     pointers (which must fall back, not fail);
//   - M ∈ {1 … 4096} × the model (N, K) list, checked on sampled rows and
//     columns against an exact host reference, and on every element for
//     having been written (outputs are poisoned with NaN first).
// int8: the int32 accumulator is exact and the epilogue is the CPU's
// expression, so outputs must match the CPU rounding within one ulp of the
// output dtype. fp8: tensor-core fp8 accumulation keeps fewer bits than fp32
// round-to-nearest (Hopper's wgmma sums about 14-bit-aligned products before
// CUTLASS promotes them to fp32), so the bound is 2^-9 of s_a·s_b·Σ|a·b|
// plus one output ulp — still far below the error of any indexing mistake,
// which is of order Σ|a·b|/√K.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "common/cuda_buffer.h"
#include "gemm/cuda/dispatch_table.h"
#include "gemm/cuda/scaled_mm_cuda.h"
#include "gemm/gemm_device_problem.h"
#include "gemm/gemm_compare.h"
#include "gemm/gemm_problem.h"
#include "qgemm/version.h"

namespace qgemm::test {
namespace {

using detail::GemmKernel;
const Device kGpu = Device::cuda(0);


// Each kernel, forced, on every epilogue variant at shapes with ragged tiles.
struct KernelCase {
  GemmKernel kernel;
  int64_t m, n, k;
};

class ScaledMmKernel : public ::testing::TestWithParam<KernelCase> {
 protected:
  void SetUp() override { QGEMM_SKIP_WITHOUT_GPU(); }
};

// Whether the Ada fp8 build of the mma.sync tiles must run here: built for
// sm_89 (its PTX runs on later GPUs) and a GPU of compute capability ≥ 8.9.
bool sm89_fp8_expected() {
  int major = 0, minor = 0;
  cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0);
  cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, 0);
  const std::string archs = std::string(";") + cuda_archs() + ";";
  return major * 10 + minor >= 89 && archs.find(";89;") != std::string::npos;
}

TEST_P(ScaledMmKernel, EveryEpilogueMatchesCpu) {
  const KernelCase& kc = GetParam();
  int ran_int8 = 0, ran_fp8 = 0;
  const auto seed = static_cast<uint64_t>(kc.m * 131 + kc.n * 7 + kc.k);
  for_each_epilogue_problem(kc.m, kc.n, kc.k, seed, [&](const GemmCase& c, GemmProblem& p) {
    DeviceProblem d(p);
    if (!detail::scaled_mm_cuda_with(d.args(p), kc.kernel)) return;  // not built / not for this GPU
    ++(c.input == DType::kInt8 ? ran_int8 : ran_fp8);
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    std::vector<uint8_t> gpu_out;
    d.out.download(gpu_out);
    EXPECT_EQ(compare_all(p, gpu_out, detail::gemm_kernel_name(kc.kernel)), 0);
  });
  const bool mma_sync_tile = kc.kernel == GemmKernel::kSm80Large || kc.kernel == GemmKernel::kSm80Small;
  if (mma_sync_tile && ran_int8 > 0 && sm89_fp8_expected()) {
    EXPECT_GT(ran_fp8, 0) << "the sm89 fp8 build of " << detail::gemm_kernel_name(kc.kernel) << " did not run";
  }
  if (kc.kernel == GemmKernel::kSm90SkinnyStream && sm90a_kernels_expected()) {
    EXPECT_EQ(ran_int8 + ran_fp8, static_cast<int>(epilogue_cases(kc.m, kc.n, kc.k).size()))
        << "the Hopper decode kernel refused a case it must take";
  }
  if (detail::is_sm90_tma_kernel(kc.kernel) && kc.kernel != GemmKernel::kSm90Coop128 && sm90a_kernels_expected()) {
    EXPECT_GT(ran_int8, 0) << "the int8 build of " << detail::gemm_kernel_name(kc.kernel) << " did not run";
  }
  if (ran_int8 + ran_fp8 == 0) GTEST_SKIP() << detail::gemm_kernel_name(kc.kernel) << " does not run on this GPU";
}

std::vector<KernelCase> kernel_cases() {
  std::vector<KernelCase> cases;
  // kSm90Coop128 is built for precise fp8 only: its int8 cases are skipped.
  // K = 80, 208, 528 give the precise fp8 mainloops 1, 2 and 5 k-tiles: the
  // overlapped promotion's single-tile, even and odd endings.
  const GemmKernel kernels[] = {GemmKernel::kFallback,   GemmKernel::kSkinny,     GemmKernel::kSm90Wide,
                                GemmKernel::kSm90Square, GemmKernel::kSm90Narrow, GemmKernel::kSm90Small1x2,
                                GemmKernel::kSm90Small2x1, GemmKernel::kSm90Narrow2x1, GemmKernel::kSm90Wide192,
                                GemmKernel::kSm90Coop128, GemmKernel::kSm90Wide1x2, GemmKernel::kSm80Large,  GemmKernel::kSm80Small, GemmKernel::kSm90Direct,
                                GemmKernel::kSm90SkinnyStream, GemmKernel::kSm90Wide80, GemmKernel::kSm90Wide96,
                                GemmKernel::kSm90Thin48, GemmKernel::kSm90Wide80x4, GemmKernel::kSm90Wide96x4,
                                GemmKernel::kSm90Wide80Pairs, GemmKernel::kSm90Wide96Pairs};
  for (GemmKernel kernel : kernels) {
    if (kernel == GemmKernel::kSm90SkinnyStream) {
      // M ≤ 16 only, M on both sides of 8 (transposed / plain). K: one
      // partial stage (80), a 16-byte tail past whole 1024-byte stages
      // (1040, 8208), stages past the 8-deep ring so slots are reused within
      // a tile (8208, 16400) and across tiles (N = 8192: 512 tiles on ≤ 132
      // CTAs); N below, at and past one 16-row tile, odd N (rows past N copy
      // row N − 1). Each CTA walks K forward on its even tiles and backward
      // on its odd ones (partial stage first): N = 4111 with 3 stages gives
      // every CTA both directions; 16 × 10256 token bytes (more than L1
      // holds beside a CTA's stages) take two CTAs per SM where N = 2129's
      // 134 tiles are a tie between one and two (up to 133 SMs).
      const int64_t stream[][3] = {{1, 48, 80},    {16, 272, 208},  {3, 136, 8208}, {9, 40, 2064},
                                   {16, 72, 1040}, {5, 8192, 208},  {16, 8192, 1040}, {8, 1, 16400},
                                   {2, 4095, 4096}, {13, 1001, 3088}, {7, 17, 16},
                                   {4, 4111, 2064}, {16, 2129, 10256}};
      for (const auto& s : stream) cases.push_back({kernel, s[0], s[1], s[2]});
      continue;
    }
    const bool skinny = kernel == GemmKernel::kSkinny;
    // Ragged in every dimension against every tile (and K tails of 16).
    const int64_t shapes[][3] = {{1, 48, 80}, {17, 272, 208}, {skinny ? 64 : 300, 400, 528}};
    for (const auto& s : shapes) cases.push_back({kernel, s[0], s[1], s[2]});
    if (kernel == GemmKernel::kSm90Thin48) {
      // What it is for: M ≤ 64 over many thin N tiles. Clusters of four
      // along N: 1000 columns are 20.8 tiles of 48 (the last cluster has
      // three CTAs past N); M = 64 fills the tile, 33 does not; two M
      // tiles, which the dispatch does not send it.
      cases.push_back({kernel, 64, 1000, 1040});
      cases.push_back({kernel, 33, 4096, 528});
      cases.push_back({kernel, 100, 136, 208});
    }
    if (kernel == GemmKernel::kSm90Wide80 || kernel == GemmKernel::kSm90Wide96 || kernel == GemmKernel::kSm90Wide80x4 ||
        kernel == GemmKernel::kSm90Wide96x4) {
      // What they are for: one 128-row M tile over many narrow N tiles, the
      // last one ragged (N = 1000 is 12.5 tiles of 80, 10.4 of 96; an odd
      // count leaves the last cluster's second CTA past N), M below the
      // tile, and two M tiles, which the dispatch does not send them but the
      // kernels must take when forced.
      cases.push_back({kernel, 128, 1000, 1040});
      cases.push_back({kernel, 65, 2000, 528});
      cases.push_back({kernel, 200, 1200, 400});
    }
    if (kernel == GemmKernel::kSm90Wide80 || kernel == GemmKernel::kSm90Wide96 || kernel == GemmKernel::kSm90Wide80x4 ||
        kernel == GemmKernel::kSm90Wide96x4 || kernel == GemmKernel::kSm90Wide80Pairs ||
        kernel == GemmKernel::kSm90Wide96Pairs) {
      // More tiles than the GPU has SMs (4 × 63 of 80 columns, 4 × 53 of
      // 96), so each persistent CTA runs several tiles and rewrites both
      // tile buffers of its staged epilogue vectors (sm90_staged_vectors.cuh)
      // tile after tile, the last N tile ragged (N a multiple of 8, as
      // their TMA store needs).
      cases.push_back({kernel, 500, 5024, 272});
    }
    if (kernel == GemmKernel::kSm90Wide80Pairs || kernel == GemmKernel::kSm90Wide96Pairs) {
      // What they are for: two 128-row M tiles over many 80- or 96-column N
      // tiles, the pair sharing each weight tile (M = 256 full, 232 with 24
      // rows past M in the second), the last N tile ragged (1000 columns:
      // 12.5 tiles of 80, 10.4 of 96); an odd count of M tiles leaves the
      // last cluster's second CTA past M (M = 300: three tiles), and one M
      // tile pairs with a CTA wholly past M — neither of which the dispatch sends it.
      cases.push_back({kernel, 256, 1000, 1040});
      cases.push_back({kernel, 232, 6144, 528});
      cases.push_back({kernel, 100, 480, 208});
    }
    if (kernel == GemmKernel::kSm90Wide1x2) {
      // Clusters along N: an odd number of N tiles (3) leaves the last
      // cluster's second CTA past N; four M tiles, one of them ragged.
      cases.push_back({kernel, 385, 600, 208});
    }
    if (kernel == GemmKernel::kSm90Direct) {
      // What it exists for: N (the output pitch) not a multiple of 8 — odd,
      // narrower than one tile, one past a tile — and a multiple of 8 only.
      const int64_t unaligned[][3] = {{5, 1001, 208}, {130, 7, 80}, {257, 129, 528}, {64, 4095, 80}, {200, 8184, 208}};
      for (const auto& s : unaligned) cases.push_back({kernel, s[0], s[1], s[2]});
    }
    if (skinny) {
      // M ≤ 16 (decode): K long enough that every warp wraps its ring of
      // in-flight chunks, with a K tail of 16; M on both sides of 8.
      // N = 8192 (512 tiles): more tiles than 3 wide CTAs per SM hold, so
      // the 4-per-SM builds run (plain int8, transposed M ≤ 8) next to the
      // 3-per-SM and deep ones (fp8 M = 9–16).
      const int64_t decode[][3] = {{3, 136, 8208}, {9, 40, 2064}, {16, 72, 4112}, {5, 8192, 208}, {16, 8192, 208}};
      for (const auto& s : decode) cases.push_back({kernel, s[0], s[1], s[2]});
    }
  }
  return cases;
}

INSTANTIATE_TEST_SUITE_P(Forced, ScaledMmKernel, ::testing::ValuesIn(kernel_cases()), [](const auto& info) {
  std::string name = detail::gemm_kernel_name(info.param.kernel);
  for (char& ch : name) ch = std::isalnum(static_cast<unsigned char>(ch)) ? ch : '_';
  return name + "_" + std::to_string(info.param.m) + "x" + std::to_string(info.param.n) + "x" +
         std::to_string(info.param.k);
});

// Runs the public API on the GPU and returns the output.
std::vector<uint8_t> run_public(const GemmProblem& p) {
  DeviceProblem d(p);
  if (p.c.zero_point == ZeroPoint::kNone) {
    scaled_mm(p.out_view(d.out.get(), kGpu), p.a_view(d.a.get(), kGpu), p.b_view(d.b.get(), kGpu),
              p.scale_a_view(d.sa.get(), kGpu), p.scale_b_view(d.sb.get(), kGpu), p.bias_view(d.bias.get(), kGpu));
  } else {
    scaled_mm_azp(p.out_view(d.out.get(), kGpu), p.a_view(d.a.get(), kGpu), p.b_view(d.b.get(), kGpu),
                  p.scale_a_view(d.sa.get(), kGpu), p.scale_b_view(d.sb.get(), kGpu),
                  p.azp_adj_view(d.azp_adj.get(), kGpu), p.azp_view(d.azp.get(), kGpu),
                  p.bias_view(d.bias.get(), kGpu));
  }
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  std::vector<uint8_t> out;
  d.out.download(out);
  return out;
}

TEST(ScaledMmDispatch, EveryMUpTo130) {
  QGEMM_SKIP_WITHOUT_GPU();
  for (int64_t nk : {32, 64, 96}) {
    for (int64_t m = 1; m <= 130; ++m) {
      for (DType input : {DType::kInt8, DType::kFloat8E4M3}) {
        GemmCase c;
        c.m = m, c.n = nk, c.k = nk, c.input = input;
        c.zero_point = input == DType::kInt8 && m % 3 == 0 ? ZeroPoint::kPerToken : ZeroPoint::kNone;
        c.per_token = m % 2 == 0, c.out = m % 4 < 2 ? DType::kBFloat16 : DType::kFloat16;
        auto rng = make_rng(static_cast<uint64_t>(m * 1000 + nk));
        GemmProblem p(c, rng);
        ASSERT_EQ(compare_all(p, run_public(p), "dispatch"), 0) << c.name();
      }
    }
  }
}

// Sub-matrix views: padded leading dimensions (aligned pads keep the fast
// kernels, odd pads send the problem to the fallback) for every kind of M.
TEST(ScaledMmDispatch, SubMatrixViews) {
  QGEMM_SKIP_WITHOUT_GPU();
  const int64_t pads[][3] = {{16, 32, 8}, {3, 5, 1}, {64, 16, 0}};
  for (int64_t m : {1, 8, 40, 100, 300}) {
    for (const auto& pad : pads) {
      for (DType input : {DType::kInt8, DType::kFloat8E4M3}) {
        GemmCase c;
        c.m = m, c.n = 160, c.k = 192, c.input = input;
        c.lda_pad = pad[0], c.ldb_pad = pad[1], c.ldo_pad = pad[2];
        auto rng = make_rng(static_cast<uint64_t>(m + pad[0]));
        GemmProblem p(c, rng);
        EXPECT_EQ(compare_all(p, run_public(p), "view"), 0);
      }
    }
  }
}

// A device copy of `host` starting `offset` bytes into its buffer: a vector
// off its 16-byte line.
struct ShiftedCopy {
  CudaBuffer buffer;
  void* data;
  ShiftedCopy(const void* host, size_t bytes, size_t offset) : buffer(bytes + offset) {
    data = static_cast<uint8_t*>(buffer.get()) + offset;
    cudaMemcpy(data, host, bytes, cudaMemcpyHostToDevice);
  }
};

// Outputs and vectors off the 16-byte grid, with A and B fit for 16-byte
// loads: an N (and output pitch) that is not a multiple of 8, an output
// pitch padded by an odd count, an output one element into a 16-byte line
// — which on Hopper the direct-store kernel must take (not the slow
// fallback) — and N = 1000 (a multiple of 8, not of 16) and per-channel
// vectors one element into their line, which the TMA kernels take (TMA
// clips N; their row broadcasts load single elements). Every result must
// match the CPU on every element.
TEST(ScaledMmDispatch, UnalignedOutputsRunTheDirectStoreKernelOnHopper) {
  QGEMM_SKIP_WITHOUT_GPU();
  int major = 0;
  QGEMM_TEST_CUDA(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0));
  const std::string archs = cuda_archs();
  const bool hopper = major == 9 && archs.find("90a") != std::string::npos;
  struct Shape {
    int64_t m, n, k, ldo_pad;
    int64_t out_offset;     // output elements past a 16-byte boundary
    int64_t vector_offset;  // bias and scale_b elements past theirs
    bool direct;            // Hopper: the direct-store kernel, else a TMA one
  };
  const Shape shapes[] = {{17, 1001, 208, 0, 0, 0, true},  {100, 4095, 80, 0, 0, 0, true},
                          {300, 403, 528, 0, 0, 0, true},  {1000, 250, 256, 0, 0, 0, true},
                          {129, 256, 208, 3, 0, 0, true},  {64, 512, 128, 0, 1, 0, true},
                          {300, 1000, 256, 0, 0, 0, false}, {300, 512, 208, 0, 0, 1, false}};
  for (const Shape& shape : shapes) {
    for (DType input : {DType::kInt8, DType::kFloat8E4M3}) {
      GemmCase c;
      c.m = shape.m, c.n = shape.n, c.k = shape.k, c.input = input, c.ldo_pad = shape.ldo_pad;
      c.out = shape.m % 2 ? DType::kFloat16 : DType::kBFloat16;
      c.zero_point = input == DType::kInt8 ? ZeroPoint::kPerToken : ZeroPoint::kNone;
      auto rng = make_rng(static_cast<uint64_t>(shape.m * 7 + shape.n));
      GemmProblem p(c, rng);
      DeviceProblem d(p);
      const size_t elem = dtype_size(c.out);
      const ShiftedCopy bias(p.bias.data(), p.bias.size(), elem * shape.vector_offset);
      const ShiftedCopy scale_b(p.scale_b.data(), p.scale_b.size() * sizeof(float), sizeof(float) * shape.vector_offset);
      CudaBuffer out_shifted(p.out.size() + elem * shape.out_offset);
      detail::ScaledMmArgs args = d.args(p);
      args.out = static_cast<uint8_t*>(out_shifted.get()) + elem * shape.out_offset;
      args.bias = p.c.bias ? bias.data : nullptr;
      args.scale_b = static_cast<const float*>(scale_b.data);
      if (hopper) {
        const GemmKernel chosen = detail::scaled_mm_cuda_kernel(args);
        if (shape.direct) EXPECT_EQ(chosen, GemmKernel::kSm90Direct) << c.name();
        else EXPECT_TRUE(chosen != GemmKernel::kFallback && chosen != GemmKernel::kSm90Direct) << c.name();
      }
      out_shifted.poison();
      detail::scaled_mm_cuda(args);
      ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
      std::vector<uint8_t> shifted;
      out_shifted.download(shifted);
      const std::vector<uint8_t> gpu_out(shifted.begin() + elem * shape.out_offset, shifted.end());
      EXPECT_EQ(compare_all(p, gpu_out, "unaligned output"), 0) << c.name();
    }
  }
}

// Pointers one element past a 16-byte boundary: the fast kernels decline,
// the fallback answers.
TEST(ScaledMmDispatch, MisalignedPointersFallBack) {
  QGEMM_SKIP_WITHOUT_GPU();
  for (int64_t m : {4, 200}) {
    GemmCase c;
    c.m = m, c.n = 64, c.k = 64;
    auto rng = make_rng(static_cast<uint64_t>(m));
    GemmProblem p(c, rng);
    DeviceProblem d(p);
    CudaBuffer a_shifted(p.a.size() + 1), out_shifted(p.out.size() + 2);
    ASSERT_EQ(cudaMemcpy(static_cast<uint8_t*>(a_shifted.get()) + 1, p.a.data(), p.a.size(), cudaMemcpyHostToDevice), cudaSuccess);
    out_shifted.poison();
    void* out_ptr = static_cast<uint8_t*>(out_shifted.get()) + 2;
    scaled_mm(p.out_view(out_ptr, kGpu), p.a_view(static_cast<uint8_t*>(a_shifted.get()) + 1, kGpu),
              p.b_view(d.b.get(), kGpu), p.scale_a_view(d.sa.get(), kGpu), p.scale_b_view(d.sb.get(), kGpu),
              p.bias_view(d.bias.get(), kGpu));
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    std::vector<uint8_t> shifted;
    out_shifted.download(shifted);
    const std::vector<uint8_t> gpu_out(shifted.begin() + 2, shifted.begin() + 2 + p.out.size());
    EXPECT_EQ(compare_all(p, gpu_out, "misaligned"), 0);
  }
}

// Capture into a CUDA graph and replay, for one problem per dispatch path
// (skinny — on Hopper its bulk-copy twin, transposed at M = 8 and plain at 16 —, each sm90
// bucket, direct store, fallback), with zero points: capture fails if
// the op allocated or synchronized; replays must match the CPU.
TEST(ScaledMmDispatch, GraphCaptureOnEveryPath) {
  QGEMM_SKIP_WITHOUT_GPU();
  cudaStream_t stream;
  QGEMM_TEST_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  for (int64_t m : {8, 16, 48, 200, 700, 33, 34}) {
    GemmCase c;
    // N = 100 (M = 33): the direct-store kernel on Hopper; K = 100 (M = 34): the fallback.
    c.m = m, c.n = m == 33 ? 100 : 256, c.k = m == 34 ? 100 : 320;
    c.zero_point = ZeroPoint::kPerToken;
    auto rng = make_rng(static_cast<uint64_t>(m));
    GemmProblem p(c, rng);
    DeviceProblem d(p);
    cudaGraph_t graph;
    QGEMM_TEST_CUDA(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
    scaled_mm_azp(p.out_view(d.out.get(), kGpu), p.a_view(d.a.get(), kGpu), p.b_view(d.b.get(), kGpu),
                  p.scale_a_view(d.sa.get(), kGpu), p.scale_b_view(d.sb.get(), kGpu),
                  p.azp_adj_view(d.azp_adj.get(), kGpu), p.azp_view(d.azp.get(), kGpu),
                  p.bias_view(d.bias.get(), kGpu), stream);
    QGEMM_TEST_CUDA(cudaStreamEndCapture(stream, &graph));
    cudaGraphExec_t exec;
    QGEMM_TEST_CUDA(cudaGraphInstantiate(&exec, graph, 0));
    for (int replay = 0; replay < 2; ++replay) {
      QGEMM_TEST_CUDA(cudaMemsetAsync(d.out.get(), 0xff, d.out.bytes(), stream));
      QGEMM_TEST_CUDA(cudaGraphLaunch(exec, stream));
      QGEMM_TEST_CUDA(cudaStreamSynchronize(stream));
      std::vector<uint8_t> gpu_out;
      d.out.download(gpu_out);
      EXPECT_EQ(compare_all(p, gpu_out, "graph"), 0) << "M=" << m << " replay " << replay;
    }
    cudaGraphExecDestroy(exec);
    cudaGraphDestroy(graph);
  }
  cudaStreamDestroy(stream);
}

}  // namespace
}  // namespace qgemm::test
