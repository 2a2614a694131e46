// gemm_device_problem.h — device copies of a GemmProblem's inputs (and a
// NaN-poisoned output) and the backend-neutral arguments the public API
// would build from them: what the GPU kernel tests hand to
// detail::scaled_mm_cuda_with / scaled_mm_cuda.
#pragma once

#if QGEMM_WITH_CUDA

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "common/cuda_buffer.h"
#include "gemm/cuda/kernels.h"
#include "gemm/cuda/scaled_mm_cuda.h"
#include "gemm/gemm_problem.h"
#include "gemm/scaled_mm_args.h"
#include "qgemm/gemm.h"
#include "qgemm/version.h"

namespace qgemm::test {

struct DeviceProblem {
  CudaBuffer a, b, sa, sb, bias, azp, azp_adj, out;
  explicit DeviceProblem(const GemmProblem& p)
      : a(p.a), b(p.b), sa(p.scale_a), sb(p.scale_b), bias(p.bias), azp(p.azp), azp_adj(p.azp_adj),
        out(p.out.size()) {
    out.poison();
  }
  detail::ScaledMmArgs args(const GemmProblem& p) const {
    detail::ScaledMmArgs r;
    r.m = p.c.m, r.n = p.c.n, r.k = p.c.k;
    r.input_dtype = p.c.input, r.out_dtype = p.c.out;
    r.a = a.get(), r.lda = p.lda;
    r.b = b.get(), r.ldb = p.ldb;
    r.out = out.get(), r.ldo = p.ldo;
    r.scale_a = static_cast<const float*>(sa.get()), r.scale_a_per_token = p.c.per_token;
    r.scale_b = static_cast<const float*>(sb.get()), r.scale_b_per_channel = p.c.per_channel;
    r.bias = p.c.bias ? bias.get() : nullptr;
    if (p.c.zero_point != ZeroPoint::kNone) r.azp_adj = static_cast<const int32_t*>(azp_adj.get());
    if (p.c.zero_point == ZeroPoint::kPerToken) r.azp = static_cast<const int32_t*>(azp.get());
    r.device = Device::cuda(0);
    return r;
  }
};

// A stream-K workspace (kSm90StreamK) for device 0, filled with garbage
// first: the kernels need it uninitialized.
struct StreamKWorkspace {
  CudaBuffer buffer;
  StreamKWorkspace() : buffer(static_cast<size_t>(detail::stream_k_workspace_bytes(sm_count()))) {
    cudaMemset(buffer.get(), 0xab, buffer.bytes());
  }
  // `args` with this workspace, or with only `bytes` of it.
  detail::ScaledMmArgs attach(detail::ScaledMmArgs args, int64_t bytes = -1) const {
    args.workspace = buffer.get();
    args.workspace_bytes = bytes < 0 ? static_cast<int64_t>(buffer.bytes()) : bytes;
    return args;
  }
  static int sm_count() {
    int sms = 0;
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
    return sms;
  }
};

// Whether the sm_90a kernels must run here: built for sm_90a and a compute
// capability 9.0 GPU.
inline bool sm90a_kernels_expected() {
  int major = 0;
  cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0);
  const std::string archs = std::string(";") + cuda_archs() + ";";
  return major == 9 && archs.find(";90a;") != std::string::npos;
}

// Runs `kernel` forced on p (detail::scaled_mm_cuda_with), with `workspace`
// attached where given — only `workspace_bytes` of it (−1: all of it) — and
// returns the output; empty when the kernel declined (not built here, not
// for this GPU, or not for these arguments).
inline std::vector<uint8_t> run_forced(const GemmProblem& p, detail::GemmKernel kernel,
                                       const StreamKWorkspace* workspace = nullptr, int64_t workspace_bytes = -1) {
  DeviceProblem d(p);
  detail::ScaledMmArgs args = d.args(p);
  if (workspace != nullptr) args = workspace->attach(args, workspace_bytes);
  std::vector<uint8_t> out;
  if (!detail::scaled_mm_cuda_with(args, kernel)) return out;
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  d.out.download(out);
  return out;
}

// The public scaled_mm on p twice, with the device's workspace
// (scaled_mm_workspace_bytes) and without one: both outputs, and the kernel
// the dispatcher picks for the call with it — for the tests of what a
// workspace changes (stream-K, the swapped decode kernel).
struct WithAndWithoutWorkspace {
  std::vector<uint8_t> with, without;
  detail::GemmKernel chosen_with;
};
inline WithAndWithoutWorkspace run_with_and_without_workspace(const GemmProblem& p) {
  const Device gpu = Device::cuda(0);
  const int64_t bytes = scaled_mm_workspace_bytes(gpu);
  CudaBuffer workspace(static_cast<size_t>(bytes));
  const TensorView workspace_view(workspace.get(), DType::kUInt8, {bytes}, gpu);
  DeviceProblem with(p), without(p);
  scaled_mm(p.out_view(with.out.get(), gpu), p.a_view(with.a.get(), gpu), p.b_view(with.b.get(), gpu),
            p.scale_a_view(with.sa.get(), gpu), p.scale_b_view(with.sb.get(), gpu), p.bias_view(with.bias.get(), gpu),
            workspace_view);
  scaled_mm(p.out_view(without.out.get(), gpu), p.a_view(without.a.get(), gpu), p.b_view(without.b.get(), gpu),
            p.scale_a_view(without.sa.get(), gpu), p.scale_b_view(without.sb.get(), gpu),
            p.bias_view(without.bias.get(), gpu));
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  WithAndWithoutWorkspace out;
  with.out.download(out.with);
  without.out.download(out.without);
  detail::ScaledMmArgs args = with.args(p);
  args.workspace = workspace.get(), args.workspace_bytes = bytes;
  out.chosen_with = detail::scaled_mm_cuda_kernel(args);
  return out;
}

}  // namespace qgemm::test

#endif  // QGEMM_WITH_CUDA
