// Programmatic dependent launch on the GPU (core/cuda_launch.cuh): a kernel
// launched early behind its predecessor must still see everything that
// predecessor wrote, in a stream and in a CUDA graph, and chains of qgemm ops
// that read each other's outputs must give the same bits with PDL on and off.
//
// Why these can fail: with PDL a kernel's blocks start while the previous
// kernel still runs; a kernel that touched memory before
// wait_for_preceding_grids() would read its input before the predecessor
// finished writing it. The ping-pong chain makes every launch depend on the
// one before (x ← x + 1 on alternating buffers, 1 M elements, 400 launches),
// so a missing wait shows as a count below 400 somewhere; the op chain does
// the same through the library's kernels (fused, quantize, dequantize, skinny
// scaled_mm, weight-only decode), whose outputs are compared bit for bit.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "common/cuda_buffer.h"
#include "common/test_util.h"
#include "core/cuda_launch.cuh"
#include "core/numeric.h"
#include "qgemm/qgemm.h"

namespace qgemm::test {
namespace {

__global__ void add_one(const float* in, float* out, int64_t n) {
  detail::wait_for_preceding_grids();
  detail::allow_dependent_launch();
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    out[i] = in[i] + 1.0f;
  }
}

// Restores the process-wide switch when a test ends.
class PdlSwitch {
 public:
  explicit PdlSwitch(bool enabled) : before_(programmatic_dependent_launch()) {
    set_programmatic_dependent_launch(enabled);
  }
  ~PdlSwitch() { set_programmatic_dependent_launch(before_); }

 private:
  bool before_;
};

bool device_has_pdl() {
  int major = 0;
  return cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0) == cudaSuccess && major >= 9;
}

constexpr int64_t kChainElements = int64_t{1} << 20;
constexpr int kChainLaunches = 400;

// The ping-pong buffers of a chain (a zeroed, b poisoned) and the
// non-blocking stream it runs on. enqueue() queues kChainLaunches dependent
// launches of add_one, which leave a = kChainLaunches (an even count ends in
// a) per run.
class PingPongChain {
 public:
  PingPongChain() : a_(kChainElements * sizeof(float)), b_(kChainElements * sizeof(float)) {
    EXPECT_EQ(cudaMemset(a_.get(), 0, a_.bytes()), cudaSuccess);
    b_.poison();
    EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);  // the memsets, before the non-blocking stream starts
    EXPECT_EQ(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), cudaSuccess);
  }
  ~PingPongChain() { cudaStreamDestroy(stream_); }
  PingPongChain(const PingPongChain&) = delete;
  PingPongChain& operator=(const PingPongChain&) = delete;

  cudaStream_t stream() const { return stream_; }

  void enqueue() {
    auto* a = static_cast<float*>(a_.get());
    auto* b = static_cast<float*>(b_.get());
    for (int i = 0; i < kChainLaunches; ++i) {
      const bool even = i % 2 == 0;
      detail::launch_pdl_kernel(add_one, dim3(264), dim3(256), 0, stream_, 0, even ? a : b, even ? b : a,
                                kChainElements);
    }
  }

  // After the stream finished: every element of a equals `expected`.
  void expect_a_equals(float expected) const {
    EXPECT_EQ(cudaStreamSynchronize(stream_), cudaSuccess);
    std::vector<float> host;
    a_.download(host);
    int64_t wrong = 0;
    for (float v : host) wrong += v != expected;
    EXPECT_EQ(wrong, 0) << "elements not equal to " << expected;
  }

 private:
  CudaBuffer a_, b_;
  cudaStream_t stream_ = nullptr;
};

TEST(PdlLaunch, LaunchesProgrammaticallyExactlyWhenEnabledOnHopper) {
  QGEMM_SKIP_WITHOUT_GPU();
  const auto* kernel = reinterpret_cast<const void*>(add_one);
  {
    PdlSwitch on(true);
    EXPECT_EQ(detail::launches_programmatically(kernel, 0), device_has_pdl());
  }
  PdlSwitch off(false);
  EXPECT_FALSE(detail::launches_programmatically(kernel, 0));
}

TEST(PdlLaunch, EveryLaunchSeesItsPredecessorInAStream) {
  QGEMM_SKIP_WITHOUT_GPU();
  PdlSwitch on(true);
  PingPongChain chain;
  chain.enqueue();
  chain.expect_a_equals(static_cast<float>(kChainLaunches));
}

TEST(PdlLaunch, EveryLaunchSeesItsPredecessorInAGraph) {
  QGEMM_SKIP_WITHOUT_GPU();
  PdlSwitch on(true);
  PingPongChain chain;
  cudaGraph_t graph;
  QGEMM_TEST_CUDA(cudaStreamBeginCapture(chain.stream(), cudaStreamCaptureModeThreadLocal));
  chain.enqueue();
  QGEMM_TEST_CUDA(cudaStreamEndCapture(chain.stream(), &graph));
  cudaGraphExec_t exec;
  QGEMM_TEST_CUDA(cudaGraphInstantiate(&exec, graph, 0));
  constexpr int kReplays = 3;
  for (int r = 0; r < kReplays; ++r) QGEMM_TEST_CUDA(cudaGraphLaunch(exec, chain.stream()));
  chain.expect_a_equals(static_cast<float>(kReplays * kChainLaunches));
  QGEMM_TEST_CUDA(cudaGraphExecDestroy(exec));
  QGEMM_TEST_CUDA(cudaGraphDestroy(graph));
}

// A step of qgemm ops, each reading the previous one's output:
//   x → rms_norm_quant → (q, s) → scaled_mm → y
//     → quantize (per token) → dequantize → y2 → weight_only_mm (W4) → x
// At T = 8 the GEMMs are the decode kernels (skinny scaled_mm, weight-only
// GEMV); at T = 64 CUTLASS's sm_90 scaled_mm (its own PDL waits) and the
// weight-only wgmma kernel.
class OpChain {
 public:
  static constexpr int64_t kH = 1024, kGroup = 128;

  explicit OpChain(int64_t tokens)
      : tokens_(tokens),
        x_(tokens_ * kH * 2), norm_w_(kH * 2), q_(tokens_ * kH), s_(tokens_ * 4), b_(kH * kH), sb_(kH * 4),
        y_(tokens_ * kH * 2), q2_(tokens_ * kH), s2_(tokens_ * 4), y2_(tokens_ * kH * 2), w4_(kH * kH / 2),
        ws_(kH * kH / kGroup * 4),
        wo_(kH * kH / kGroup * 4) {
    std::mt19937 rng(2026);
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    std::uniform_int_distribution<int> byte(0, 255);
    auto bf16 = [&](int64_t n, float scale, float offset) {
      std::vector<uint16_t> v(static_cast<size_t>(n));
      for (auto& e : v) e = numeric::float_to_bf16_bits(offset + scale * u(rng));
      return v;
    };
    auto bytes = [&](int64_t n) {
      std::vector<uint8_t> v(static_cast<size_t>(n));
      for (auto& e : v) e = static_cast<uint8_t>(byte(rng));
      return v;
    };
    auto floats = [&](int64_t n, float scale, float offset) {
      std::vector<float> v(static_cast<size_t>(n));
      for (auto& e : v) e = offset + scale * u(rng);
      return v;
    };
    x0_ = bf16(tokens_ * kH, 1.0f, 0.0f);
    upload(norm_w_, bf16(kH, 0.5f, 1.0f));
    upload(b_, bytes(kH * kH));
    upload(sb_, floats(kH, 0.5e-3f, 1e-3f));
    upload(w4_, bytes(kH * kH / 2));
    upload(ws_, floats(kH * kH / kGroup, 0.5e-2f, 1e-2f));
    upload(wo_, floats(kH * kH / kGroup, 0.05f, -0.08f));
    EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  }

  // `steps` decode steps from x0 on `stream`; returns x's bits.
  std::vector<uint16_t> run(int steps, cudaStream_t stream) {
    reset();
    for (int i = 0; i < steps; ++i) enqueue_step(stream);
    return read(stream);
  }

  // x ← x0. A pageable cudaMemcpy may return before its DMA lands, and the
  // chain runs on a non-blocking stream: synchronize before it starts.
  void reset() {
    upload(x_, x0_);
    EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  }

  std::vector<uint16_t> read(cudaStream_t stream) {
    EXPECT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
    std::vector<uint16_t> out;
    x_.download(out);
    return out;
  }

  void enqueue_step(cudaStream_t stream) {
    const Device gpu = Device::cuda(0);
    const Stream s = stream;
    const TensorView x(x_.get(), DType::kBFloat16, {tokens_, kH}, gpu);
    QuantOutput norm_out;
    norm_out.q = TensorView(q_.get(), DType::kInt8, {tokens_, kH}, gpu);
    norm_out.scale = TensorView(s_.get(), DType::kFloat32, {tokens_}, gpu);
    rms_norm_quant(norm_out, x, TensorView(norm_w_.get(), DType::kBFloat16, {kH}, gpu), 1e-6f, s);
    const TensorView y(y_.get(), DType::kBFloat16, {tokens_, kH}, gpu);
    scaled_mm(y, norm_out.q, TensorView::strided(b_.get(), DType::kInt8, {kH, kH}, {1, kH}, gpu), norm_out.scale,
              TensorView(sb_.get(), DType::kFloat32, {kH}, gpu), std::nullopt, s);
    QuantOptions per_token;
    const TensorView q2(q2_.get(), DType::kInt8, {tokens_, kH}, gpu), s2(s2_.get(), DType::kFloat32, {tokens_}, gpu);
    quantize(q2, s2, std::nullopt, y, per_token, s);
    const TensorView y2(y2_.get(), DType::kBFloat16, {tokens_, kH}, gpu);
    dequantize(y2, q2, s2, std::nullopt, per_token, s);
    weight_only_mm(x, y2, TensorView(w4_.get(), DType::kUInt8, {kH, kH / 2}, gpu),
                   TensorView(ws_.get(), DType::kFloat32, {kH, kH / kGroup}, gpu),
                   TensorView(wo_.get(), DType::kFloat32, {kH, kH / kGroup}, gpu), static_cast<int>(kGroup),
                   std::nullopt, s);
  }

 private:
  template <class T>
  static void upload(const CudaBuffer& buffer, const std::vector<T>& host) {
    ASSERT_EQ(cudaMemcpy(buffer.get(), host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice), cudaSuccess);
  }

  const int64_t tokens_;
  std::vector<uint16_t> x0_;
  CudaBuffer x_, norm_w_, q_, s_, b_, sb_, y_, q2_, s2_, y2_, w4_, ws_, wo_;
};

class PdlOpChain : public ::testing::TestWithParam<int64_t> {};

TEST_P(PdlOpChain, GivesTheSameBitsWithPdlOnAndOff) {
  QGEMM_SKIP_WITHOUT_GPU();
  constexpr int kSteps = 40;
  OpChain chain(GetParam());
  cudaStream_t stream;
  QGEMM_TEST_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  std::vector<uint16_t> off, on, graph;
  {
    PdlSwitch pdl(false);
    off = chain.run(kSteps, stream);
  }
  PdlSwitch pdl(true);
  on = chain.run(kSteps, stream);
  // The same steps captured once and replayed: programmatic edges in a graph.
  {
    chain.reset();
    cudaGraph_t g;
    QGEMM_TEST_CUDA(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
    for (int i = 0; i < kSteps; ++i) chain.enqueue_step(stream);
    QGEMM_TEST_CUDA(cudaStreamEndCapture(stream, &g));
    cudaGraphExec_t exec;
    QGEMM_TEST_CUDA(cudaGraphInstantiate(&exec, g, 0));
    QGEMM_TEST_CUDA(cudaGraphLaunch(exec, stream));
    graph = chain.read(stream);
    QGEMM_TEST_CUDA(cudaGraphExecDestroy(exec));
    QGEMM_TEST_CUDA(cudaGraphDestroy(g));
  }
  QGEMM_TEST_CUDA(cudaStreamDestroy(stream));
  int64_t finite = 0;
  for (uint16_t bits : off) finite += (bits & 0x7f80) != 0x7f80;
  EXPECT_EQ(finite, static_cast<int64_t>(off.size())) << "the chain stays finite, so equal bits mean something";
  EXPECT_EQ(on, off);
  EXPECT_EQ(graph, off);
}

INSTANTIATE_TEST_SUITE_P(Tokens, PdlOpChain, ::testing::Values(int64_t{8}, int64_t{64}));

}  // namespace
}  // namespace qgemm::test
