// The dense prefill path of weight_only_mm (src/wonly/cuda/wonly_dense.cuh):
//  - forced (WonlyKernelOverride kDense) on ragged shapes, int4 and int8,
//    both dtypes, plain and prepacked, every group size, fp32 and 16-bit
//    parameters, with and without offsets and bias: against the CPU twin,
//    and the dequantized weight the workspace holds afterwards bit for bit
//    against wonly_math.h's ŵ;
//  - the dispatch's own choice from M = 4096 (int4) / 3072 (int8) with a
//    dense workspace;
//  - a CUDA graph replay; the workspace size query; the refusals;
//  - the CUTLASS 2.x form (sm_80 code) forced, and a misaligned bias.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/cuda_buffer.h"
#include "common/expect_error.h"
#include "wonly/cuda/wonly_cuda.h"
#include "wonly/wonly_cuda_check.h"
#include "wonly/wonly_problem.h"

namespace qgemm::test {
namespace {

class WeightOnlyDense : public ::testing::Test {
 protected:
  void SetUp() override {
    QGEMM_SKIP_WITHOUT_GPU();
    if (!detail::wonly_dense_available(0)) GTEST_SKIP() << "the dense path runs on sm_90 only";
  }
  // Forced onto `kernel` (kDense or kDenseMma): ragged shapes against the CPU
  // twin, and the workspace's ŵ afterwards bit for bit.
  void forced_matches_cpu(detail::WonlyKernel kernel) {
    // (N, K, ldo padding): N = 136 and 1000 are not multiples of the 256-column
    // tile; N and the output's row stride must be multiples of 8 elements (TMA).
    const int64_t shapes[][3] = {{1000, 512, 0}, {136, 4128, 8}, {264, 1024, 16}};
    int index = 0;
    detail::WonlyKernelOverride force(kernel, 0);
    for (bool int4 : {true, false}) {
      for (const auto& s : shapes) {
        for (int64_t m : {17, 100, 257}) {
          WonlyCase c = cycled_case(m, s[0], s[1], int4, index++);
          c.ldo_pad = s[2];
          c.lda_pad = index % 3 == 0 ? 8 : 0;
          auto rng = make_rng(static_cast<uint64_t>(index * 613 + 1));
          WonlyWeights w(c.n, c.k, int4, c.group(), c.offsets, c.ldw_pad, rng);
          if (index % 4 == 2) w.use_16bit_params(c.dtype);
          const DeviceWeights dev(w, c.prepacked);
          const TensorView ws = workspace(c.n, c.k);
          SCOPED_TRACE(c.name() + (w.param_dtype == DType::kFloat32 ? "" : " 16-bit params"));
          check_case(c, w, dev, {{0, c.n}}, &ws);
          expect_w_hat(w, c.dtype);
        }
      }
    }
  }
  // A workspace for the dense path of an n × k weight, poisoned.
  TensorView workspace(int64_t n, int64_t k) {
    const int64_t bytes = weight_only_dense_workspace_bytes(kGpu, n, k);
    buffer_ = std::make_unique<CudaBuffer>(static_cast<size_t>(bytes));
    buffer_->poison();
    return TensorView(buffer_->get(), DType::kUInt8, {bytes}, kGpu);
  }
  // How many of the workspace's first N·K 16-bit values differ from ŵ.
  int64_t w_hat_mismatches(const WonlyWeights& w, DType dtype, bool report) {
    std::vector<uint16_t> got;
    buffer_->download(got);
    int64_t bad = 0;
    for (int64_t row = 0; row < w.n; ++row) {
      for (int64_t col = 0; col < w.k; ++col) {
        const double want = w.w_hat(row, col, dtype);
        const double have = detail::load_float(got.data(), row * w.k + col, dtype);
        if (!(have == want) && bad++ < 5 && report) {
          ADD_FAILURE() << "w_hat[" << row << "," << col << "] = " << have << ", want " << want;
        }
      }
    }
    return bad;
  }
  void expect_w_hat(const WonlyWeights& w, DType dtype) { EXPECT_EQ(w_hat_mismatches(w, dtype, true), 0); }
  std::unique_ptr<CudaBuffer> buffer_;
};

TEST_F(WeightOnlyDense, ForcedMatchesCpuAndHoldsExactWHat) { forced_matches_cpu(detail::WonlyKernel::kDense); }

// No override: M ≥ 4096 (int4) / 3072 (int8) with a dense workspace takes
// the dense path (ŵ appears in the workspace); fewer tokens do not.
TEST_F(WeightOnlyDense, DispatchTakesItFromManyTokens) {
  for (bool int4 : {true, false}) {
    WonlyCase c;
    const int64_t from = int4 ? 4096 : 3072;
    c.m = from, c.n = 200, c.k = 256, c.int4 = int4, c.group_size = int4 ? 64 : 0;
    c.dtype = int4 ? DType::kBFloat16 : DType::kFloat16;
    auto rng = make_rng(int4 ? 11 : 12);
    const WonlyWeights w(c.n, c.k, int4, c.group(), c.offsets, c.ldw_pad, rng);
    const DeviceWeights dev(w, false);
    const TensorView ws = workspace(c.n, c.k);
    check_case(c, w, dev, {{0, c.n}}, &ws);
    expect_w_hat(w, c.dtype);
    c.m = from - 1;  // fused kernels: whatever the workspace holds after (poison, or stream-K's partials), not ŵ
    buffer_->poison();
    check_case(c, w, dev, {{0, c.n}}, &ws);
    EXPECT_GT(w_hat_mismatches(w, c.dtype, false), 0);
  }
}

// The same bits from a CUDA graph replay as from the direct call.
TEST_F(WeightOnlyDense, GraphReplayGivesTheSameBits) {
  WonlyCase c;
  c.m = 300, c.n = 512, c.k = 1024, c.group_size = 128;
  const DeviceProblem p(c, 5, true);
  const DeviceCall& call = p.call;
  CudaBuffer direct = call.output(), replayed = call.output();
  const TensorView ws = workspace(c.n, c.k);
  detail::WonlyKernelOverride force(detail::WonlyKernel::kDense, 0);
  cudaStream_t stream = nullptr;
  QGEMM_TEST_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  direct.poison();
  replayed.poison();
  call.run(direct, &ws, stream);
  replay_in_graph(stream, [&] { call.run(replayed, &ws, stream); });
  std::vector<uint16_t> want, got;
  direct.download(want);
  replayed.download(got);
  EXPECT_EQ(got, want);
  cudaStreamDestroy(stream);
}

TEST_F(WeightOnlyDense, WorkspaceBytesAndRefusals) {
  EXPECT_EQ(weight_only_dense_workspace_bytes(kGpu, 1, 1), weight_only_workspace_bytes(kGpu));
  EXPECT_EQ(weight_only_dense_workspace_bytes(kGpu, 28672, 8192), int64_t{28672} * 8192 * 2);
  EXPECT_EQ(weight_only_dense_workspace_bytes(Device::cpu(), 28672, 8192), 0);
  expect_error([] { weight_only_dense_workspace_bytes(kGpu, -1, 8); }, ErrorKind::kValue,
               {"weight_only_dense_workspace_bytes", "n=-1"});
  // Forced with a workspace too small for ŵ, or an output row stride TMA cannot take.
  WonlyCase c;
  c.m = 64, c.n = 4096, c.k = 4096, c.group_size = 128;
  const DeviceProblem p(c, 9);
  const DeviceCall& call = p.call;
  CudaBuffer out = call.output();
  const int64_t small = weight_only_workspace_bytes(kGpu);
  CudaBuffer small_ws(static_cast<size_t>(small));
  detail::WonlyKernelOverride force(detail::WonlyKernel::kDense, 0);
  const TensorView small_v(small_ws.get(), DType::kUInt8, {small}, kGpu);
  expect_error([&] { call.run(out, &small_v); }, ErrorKind::kValue,
               {"kDense", "weight_only_dense_workspace_bytes"});
  c.n = 100, c.ldo_pad = 4;  // N = 100: not a multiple of 8
  const DeviceProblem p2(c, 10);
  const DeviceCall& call2 = p2.call;
  CudaBuffer out2 = call2.output();
  const TensorView ws = workspace(c.n, c.k);
  expect_error([&] { call2.run(out2, &ws); }, ErrorKind::kValue, {"kDense", "operands"});
  QGEMM_TEST_CUDA(cudaDeviceSynchronize());
}

// Without the override, an N or output row stride the GEMM cannot take at
// M ≥ 4096 falls back to the fused kernels: a result, not an error.
TEST_F(WeightOnlyDense, UnalignedOutputFallsBack) {
  WonlyCase c;
  c.m = 4096, c.n = 100, c.k = 512, c.group_size = 32, c.ldo_pad = 1;
  auto rng = make_rng(21);
  const WonlyWeights w(c.n, c.k, c.int4, c.group(), c.offsets, c.ldw_pad, rng);
  const DeviceWeights dev(w, false);
  const TensorView ws = workspace(c.n, c.k);
  check_case(c, w, dev, {{0, c.n}}, &ws);
}

// The CUTLASS 2.x form (sm_80 code, what A100 / Ada GPUs run; the H100 runs
// its PTX), forced.
class WeightOnlyDenseMma : public WeightOnlyDense {
 protected:
  void SetUp() override {
    QGEMM_SKIP_WITHOUT_GPU();
    if (!detail::wonly_dense_mma_available(0)) GTEST_SKIP() << "the sm_80 dense path is not built";
  }
};

TEST_F(WeightOnlyDenseMma, ForcedMatchesCpuAndHoldsExactWHat) { forced_matches_cpu(detail::WonlyKernel::kDenseMma); }

// A bias that is not 16-byte aligned (its row broadcast loads 16-byte
// vectors): refused when forced, the fused kernels otherwise.
TEST_F(WeightOnlyDenseMma, MisalignedBiasFallsBackOrIsRefused) {
  WonlyCase c;
  c.m = 4096, c.n = 256, c.k = 512, c.group_size = 64;
  const DeviceProblem p(c, 31);
  const WonlyWeights& w = p.w;
  const DeviceWeights& dev = p.dev;
  const WonlyActs& x = p.x;
  const DeviceCall& call = p.call;
  CudaBuffer out = call.output(), bias_copy(x.bias.size() * 2 + 16);
  QGEMM_TEST_CUDA(cudaMemcpy(static_cast<uint8_t*>(bias_copy.get()) + 2, x.bias.data(), x.bias.size() * 2,
                             cudaMemcpyHostToDevice));
  const TensorView ws = workspace(c.n, c.k);
  const TensorView bias(static_cast<uint8_t*>(bias_copy.get()) + 2, c.dtype, {c.n}, kGpu);
  auto run = [&] {
    weight_only_mm(x.out_view(out.get(), c.n, x.ldo, kGpu), x.a_view(call.a.get(), kGpu), dev.w_view,
                   w.scales_view(dev.scales->get(), 0, c.n, kGpu), w.offsets_view(dev.offsets->get(), 0, c.n, kGpu),
                   w.group, bias, ws);
  };
  for (detail::WonlyKernel kernel : {detail::WonlyKernel::kDenseMma, detail::WonlyKernel::kDense}) {
    if (kernel == detail::WonlyKernel::kDense && !detail::wonly_dense_available(0)) continue;
    detail::WonlyKernelOverride force(kernel, 0);
    expect_error(run, ErrorKind::kValue, {"WonlyKernelOverride", "operands"});
  }
  // The dispatch's choice: the fused kernels. Against the dense call with the
  // aligned bias: the same ŵ and bias, fp32 sums in another order, so each
  // output is the same bf16 value or its neighbour.
  out.poison();
  run();
  CudaBuffer want = call.output();
  call.run(want, &ws);
  QGEMM_TEST_CUDA(cudaDeviceSynchronize());
  std::vector<uint16_t> got, expected;
  out.download(got);
  want.download(expected);
  int64_t far = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    const double g = detail::load_float(got.data(), static_cast<int64_t>(i), c.dtype);
    const double e = detail::load_float(expected.data(), static_cast<int64_t>(i), c.dtype);
    const double ulp = std::ldexp(1.0, std::ilogb(std::max({std::fabs(g), std::fabs(e), 1e-30})) - 7);
    if (!(std::fabs(g - e) <= ulp)) ++far;
  }
  EXPECT_EQ(far, 0);
}

}  // namespace
}  // namespace qgemm::test
