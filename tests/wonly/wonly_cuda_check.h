// wonly_cuda_check.h — the GPU side of the weight-only tests: a problem's
// weight on the device (plain or prepacked) and the check of a GPU
// weight_only_mm call against the CPU twin (test_wonly_cuda.cpp says how).
#pragma once

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "common/cuda_buffer.h"
#include "qgemm/weight_only.h"
#include "wonly/wonly_problem.h"

namespace qgemm::test {

inline const Device kGpu = Device::cuda(0);

// The group sizes the tests cycle through (0: per channel).
inline constexpr int kGroups[] = {32, 64, 128, 0};

// An m × n × k case whose options cycle with `index`, so that a loop over
// shapes covers them all: group size (kGroups; 32 where it does not divide
// K), offsets, bias, the prepacked layout and the dtype.
inline WonlyCase cycled_case(int64_t m, int64_t n, int64_t k, bool int4, int index) {
  WonlyCase c;
  c.m = m, c.n = n, c.k = k, c.int4 = int4;
  c.group_size = kGroups[index % 4];
  if (c.group_size != 0 && c.k % c.group_size != 0) c.group_size = 32;
  c.offsets = index % 2 == 0, c.bias = index % 3 != 0, c.prepacked = index % 4 == 1;
  c.dtype = index % 5 < 3 ? DType::kBFloat16 : DType::kFloat16;
  return c;
}

// The weight on the device, plain or prepacked, and its params.
struct DeviceWeights {
  std::unique_ptr<CudaBuffer> plain, packed, scales, offsets;
  TensorView w_view;
  DeviceWeights(const WonlyWeights& host, bool prepacked) {
    plain = std::make_unique<CudaBuffer>(host.w);
    w_view = host.w_view(plain->get(), 0, host.n, kGpu);
    if (prepacked) {
      const auto shape = weight_only_prepacked_shape(host.n, host.k, host.int4);
      packed = std::make_unique<CudaBuffer>(static_cast<size_t>(shape.row_blocks * shape.k_tiles * 1024));
      const TensorView out(packed->get(), w_view.dtype(), {shape.row_blocks, shape.k_tiles, 1024}, kGpu);
      weight_only_prepack(out, w_view);
      w_view = out;
    }
    upload_params(host);
  }
  void upload_params(const WonlyWeights& host) {
    if (host.param_dtype == DType::kFloat32) {
      scales = std::make_unique<CudaBuffer>(host.scales);
      offsets = std::make_unique<CudaBuffer>(host.offsets);
    } else {
      scales = std::make_unique<CudaBuffer>(host.scales16);
      offsets = std::make_unique<CudaBuffer>(host.offsets16);
    }
  }
};

// weight_only_mm, through the workspace overload when `workspace` is given.
inline void weight_only_mm_with(const TensorView& out, const TensorView& a, const TensorView& w,
                                const TensorView& scales, const std::optional<TensorView>& offsets, int group,
                                const std::optional<TensorView>& bias, const TensorView* workspace,
                                Stream stream = nullptr) {
  if (workspace != nullptr) {
    weight_only_mm(out, a, w, scales, offsets, group, bias, *workspace, stream);
  } else {
    weight_only_mm(out, a, w, scales, offsets, group, bias, stream);
  }
}

// The activations, bias and an output of a case on the device, and
// weight_only_mm over them with the weight `dev` (all N columns).
struct DeviceCall {
  const WonlyWeights& w;
  const DeviceWeights& dev;
  const WonlyActs& x;
  CudaBuffer a, bias;
  DeviceCall(const WonlyWeights& w_, const DeviceWeights& dev_, const WonlyActs& x_)
      : w(w_), dev(dev_), x(x_), a(x_.a), bias(x_.bias) {}
  CudaBuffer output() const { return CudaBuffer(x.out.size() * 2); }
  // With `workspace`, through weight_only_mm's workspace overload.
  void run(CudaBuffer& out, const TensorView* workspace, cudaStream_t stream = nullptr) const {
    weight_only_mm_with(x.out_view(out.get(), w.n, x.ldo, kGpu), x.a_view(a.get(), kGpu), dev.w_view,
                        w.scales_view(dev.scales->get(), 0, w.n, kGpu),
                        w.offsets_view(dev.offsets->get(), 0, w.n, kGpu), w.group,
                        x.bias_view(bias.get(), 0, w.n, kGpu), workspace, stream);
  }
};

// A case's random weight and activations, on the host and the device,
// ready to call (rng seeded with `seed`).
struct DeviceProblem {
  std::mt19937_64 rng;
  WonlyWeights w;
  DeviceWeights dev;
  WonlyActs x;
  DeviceCall call;
  DeviceProblem(const WonlyCase& c, uint64_t seed, bool prepacked = false)
      : rng(make_rng(seed)), w(c.n, c.k, c.int4, c.group(), c.offsets, c.ldw_pad, rng), dev(w, prepacked),
        x(c, rng), call(w, dev, x) {}
};

// Captures what `enqueue` puts on `stream` in a CUDA graph, replays it
// `replays` times and waits for the stream.
template <class Enqueue>
void replay_in_graph(cudaStream_t stream, Enqueue&& enqueue, int replays = 1) {
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  QGEMM_TEST_CUDA(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
  enqueue();
  QGEMM_TEST_CUDA(cudaStreamEndCapture(stream, &graph));
  QGEMM_TEST_CUDA(cudaGraphInstantiate(&exec, graph, 0));
  for (int replay = 0; replay < replays; ++replay) QGEMM_TEST_CUDA(cudaGraphLaunch(exec, stream));
  QGEMM_TEST_CUDA(cudaStreamSynchronize(stream));
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
}

// Runs case c on the GPU and checks columns in `blocks` ([first, count)) against the CPU twin.
// With `workspace`, through weight_only_mm's workspace overload.
inline void check_case(const WonlyCase& c, const WonlyWeights& w, const DeviceWeights& dev,
                const std::vector<std::pair<int64_t, int64_t>>& blocks, const TensorView* workspace = nullptr) {
  auto rng = make_rng(static_cast<uint64_t>(c.m * 131 + c.n * 7 + c.k + c.group()));
  const WonlyActs x(c, rng);
  const DeviceCall call(w, dev, x);
  CudaBuffer out = call.output();
  out.poison();
  call.run(out, workspace);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess) << c.name();
  std::vector<uint16_t> gpu;
  out.download(gpu);

  int64_t unwritten = 0;  // every out[i, j] written, the row padding untouched
  for (int64_t i = 0; i < c.m; ++i) {
    for (int64_t j = 0; j < x.ldo; ++j) {
      const bool nan = std::isnan(x.out_value(gpu, i, j, x.ldo));
      if (j < c.n ? nan : gpu[i * x.ldo + j] != 0xffff) ++unwritten;
    }
  }
  EXPECT_EQ(unwritten, 0) << c.name();

  int64_t bad = 0;
  for (const auto& [col0, cols] : blocks) {
    std::vector<uint16_t> cpu(static_cast<size_t>(c.m * cols));
    poison(cpu.data(), cpu.size() * 2);
    weight_only_mm(x.out_view(cpu.data(), cols, cols), x.a_view(x.a.data()),
                   w.w_view(w.w.data(), col0, cols), w.scales_view(w.scales_host(), col0, cols),
                   w.offsets_view(w.offsets_host(), col0, cols), w.group,
                   x.bias_view(x.bias.data(), col0, cols));
    std::vector<double> w_hat(static_cast<size_t>(cols * c.k));
    for (int64_t j = 0; j < cols; ++j)
      for (int64_t kk = 0; kk < c.k; ++kk) w_hat[j * c.k + kk] = std::fabs(w.w_hat(col0 + j, kk, c.dtype));
    for (int64_t i = 0; i < c.m; ++i) {
      std::vector<double> abs_a(c.k);
      for (int64_t kk = 0; kk < c.k; ++kk) abs_a[kk] = std::fabs(x.a_value(i, kk));
      for (int64_t j = 0; j < cols; ++j) {
        double mag = std::fabs(x.bias_value(col0 + j));
        for (int64_t kk = 0; kk < c.k; ++kk) mag += abs_a[kk] * w_hat[j * c.k + kk];
        const double want = x.out_value(cpu, i, j, cols);
        const double got = x.out_value(gpu, i, col0 + j, x.ldo);
        const double tol = tolerance_between(want, mag, c.k, c.dtype);
        if (!(std::fabs(got - want) <= tol) && bad++ < 5) {
          ADD_FAILURE() << c.name() << ": gpu[" << i << "," << col0 + j << "] = " << got << ", cpu " << want << " ± " << tol;
        }
      }
    }
  }
  EXPECT_EQ(bad, 0) << c.name();
}

}  // namespace qgemm::test
