// scaled_mm inside a captured CUDA graph on a user stream: capture must
// succeed (no allocation, no synchronization inside the op), and replays
// must produce the CPU backend's results for fresh inputs copied into the
// captured buffers between replays.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "common/cuda_buffer.h"
#include "gemm/gemm_problem.h"

namespace qgemm::test {
namespace {

// Captures scaled_mm on `shape` (with `workspace` where given) on a user
// stream, then replays it three times on fresh activations.
void capture_and_replay(const GemmCase& shape, const TensorView* workspace) {
  const Device gpu = Device::cuda(0);
  auto rng = make_rng(static_cast<uint64_t>(shape.n));
  GemmProblem p(shape, rng);
  CudaBuffer a(p.a), b(p.b), sa(p.scale_a), sb(p.scale_b), bias(p.bias), out(p.out.size());
  cudaStream_t stream;
  QGEMM_TEST_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));

  cudaGraph_t graph;
  QGEMM_TEST_CUDA(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
  const TensorView out_v = p.out_view(out.get(), gpu), a_v = p.a_view(a.get(), gpu), b_v = p.b_view(b.get(), gpu);
  const TensorView sa_v = p.scale_a_view(sa.get(), gpu), sb_v = p.scale_b_view(sb.get(), gpu);
  if (workspace != nullptr) {
    scaled_mm(out_v, a_v, b_v, sa_v, sb_v, p.bias_view(bias.get(), gpu), *workspace, stream);
  } else {
    scaled_mm(out_v, a_v, b_v, sa_v, sb_v, p.bias_view(bias.get(), gpu), stream);
  }
  QGEMM_TEST_CUDA(cudaStreamEndCapture(stream, &graph));
  cudaGraphExec_t exec;
  QGEMM_TEST_CUDA(cudaGraphInstantiate(&exec, graph, 0));

  for (int replay = 0; replay < 3; ++replay) {
    // New activations each replay, written into the captured input buffer.
    GemmProblem fresh(shape, rng);
    fresh.b = p.b, fresh.scale_a = p.scale_a, fresh.scale_b = p.scale_b, fresh.bias = p.bias;
    QGEMM_TEST_CUDA(cudaMemcpyAsync(a.get(), fresh.a.data(), fresh.a.size(), cudaMemcpyHostToDevice, stream));
    QGEMM_TEST_CUDA(cudaMemsetAsync(out.get(), 0xff, out.bytes(), stream));
    QGEMM_TEST_CUDA(cudaGraphLaunch(exec, stream));
    QGEMM_TEST_CUDA(cudaStreamSynchronize(stream));
    std::vector<uint8_t> gpu_out;
    out.download(gpu_out);
    fresh.run_cpu();
    int64_t bad = 0;
    for (int64_t i = 0; i < shape.m; ++i) {
      for (int64_t j = 0; j < shape.n; ++j) {
        const double cpu = fresh.out_value(i, j);
        const double got = detail::load_float(gpu_out.data(), i * p.ldo + j, shape.out);
        bad += !(std::fabs(got - cpu) <= unit_roundoff(shape.out) * std::fabs(cpu) + subnormal_spacing(shape.out));
      }
    }
    EXPECT_EQ(bad, 0) << shape.name() << " replay " << replay;
  }
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
  cudaStreamDestroy(stream);
}

TEST(ScaledMmGraph, CaptureAndReplayOnAUserStream) {
  QGEMM_SKIP_WITHOUT_GPU();
  GemmCase c;
  c.m = 77, c.n = 128, c.k = 256;  // one aligned shape and ...
  GemmCase odd = c;
  odd.n = 100, odd.k = 72;  // ... one the fast kernels may not take
  GemmCase swapped = c;
  swapped.m = 150, swapped.n = 8192, swapped.k = 1024;  // on Hopper the swapped tiles (kSm90Swapped)
  for (const GemmCase& shape : {c, odd, swapped}) capture_and_replay(shape, nullptr);
}

// With a workspace, on shapes where Hopper runs a stream-K scheduler: the
// capture holds the memset that clears the split tiles' flags, and each
// replay reuses the workspace.
TEST(ScaledMmGraph, CaptureAndReplayWithWorkspace) {
  QGEMM_SKIP_WITHOUT_GPU();
  const Device gpu = Device::cuda(0);
  const int64_t bytes = scaled_mm_workspace_bytes(gpu);
  CudaBuffer scratch(static_cast<size_t>(bytes));
  const TensorView workspace(scratch.get(), DType::kUInt8, {bytes}, gpu);
  GemmCase c;
  c.m = 320, c.n = 4096, c.k = 14336;
  capture_and_replay(c, &workspace);
  // M ≤ 16 on a large weight: the swapped decode kernel (kSm90Decode on
  // Hopper), whose capture holds its scheduler's memset too.
  GemmCase decode;
  decode.m = 3, decode.n = 28672, decode.k = 8192;
  capture_and_replay(decode, &workspace);
  // M = 129–160 where the 64-channel swapped tiles do not fill their waves:
  // the swapped stream-K tiles (kSm90SwappedStreamK on Hopper).
  GemmCase swapped = c;
  swapped.m = 150, swapped.n = 10240, swapped.k = 1024;
  capture_and_replay(swapped, &workspace);
  // M = 129–192 on long K at N = 2048: the token halves' stream-K twin
  // (kSm90SwappedHalvesStreamK on Hopper; 160 k-tiles).
  GemmCase halves = c;
  halves.m = 136, halves.n = 2048, halves.k = 20480;
  capture_and_replay(halves, &workspace);
}

}  // namespace
}  // namespace qgemm::test
