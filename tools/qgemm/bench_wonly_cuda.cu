// `qgemm bench wonly`, the GPU part (the command and its CPU part:
// bench_wonly.cpp): weight_only_mm against cuBLAS GEMM in the activation
// dtype (--dtype bf16, the default, or fp16) on the same shapes, and the
// device copy bandwidth, all in one run. The variants (bench_wonly_variants.cpp;
// --variants picks some): W4A16 group 128 plain and prepacked, with fp32
// scales and offsets, with 16-bit ones in the activation dtype
// ("-bf16-params" / "-fp16-params"), and with either group-major
// ("-group-major"); W8A16 per channel plain and prepacked. Weights (and
// their scales) are rotated across copies so the working set exceeds L2; the
// activations (a few MB at decode sizes) are not.
//
// Timing: median_us is device time (cuda::time_cuda_device: the timed
// launches queue behind a spin kernel, so the host's launch cost is not in
// them — what a CUDA-graph replay or a busy stream sees), as in the other
// benchmarks; host_us is the host-visible time per call of back-to-back
// calls (cuda::time_cuda), for the table's kernels and cuBLAS. Before
// c0a5be0 median_us was the host-visible time, which at ~10 µs kernels
// includes each call's launch cost.
//
// Per record: bytes = everything read (weight, scales, offsets, activations)
// + the output written; frac_of_copy_bw = (bytes / time) / copy bandwidth;
// speedup_vs_cublas_<dtype> = cuBLAS time / this time (the peer's record:
// "cublas-<dtype>").
//
// The table's calls pass a workspace (weight_only_workspace_bytes), so the
// tensor-core kernel runs stream-K where its tiles split unevenly over the
// SMs; for M > 16 each variant is timed again without one ("<impl>-no-workspace":
// the data-parallel launch), in the same run.
//
// For M ≥ kDenseFromTokens on a GPU with the dense prefill path, each
// variant is timed once more on that path, forced, with its workspace
// (weight_only_dense_workspace_bytes; "<impl>-dense": the dequantization pass
// and the dense GEMM, what one call costs) — the data behind the dispatch's
// thresholds (wonly_dispatch.cu, dense_min_tokens).
//
// --rounds R (1): for each M, the whole sequence above (cuBLAS, every
// variant, forced kernels) timed R times round-robin; each record is the
// median of its R round medians (bench_common.h, merge_rounds), its speedup
// and bandwidth fraction recomputed from those medians. The H100's clock
// follows its power draw over seconds: at M ≥ 256 one block of 50 runs per
// implementation can catch cuBLAS and qgemm at different clocks.
//
// --cooldown MS (0): an idle pause before every timing (cuda_bench.h,
// set_cooldown_ms), so that each implementation starts from the same clock
// instead of the one its predecessor left.
//
// --sweep: for M ≤ 16 every variant also forced onto wonly_gemv
// ("sweep-<variant>-gemv") and the int8 ones onto the Hopper int8 decode
// kernel ("sweep-<variant>-stream"); for M > 16 the W4A16 g128 and W8A16
// plain variants forced onto every tensor-core kernel and tile, for M ≤ 32
// onto 16-token decode launches and for M ≥ kDenseFromTokens onto the dense
// path's CUTLASS 2.x form (detail::WonlyKernelOverride): impl
// "sweep-<w4a16-g128|w8a16-channel>-<mma|wgmma>-<tile>", "sweep-…-gemv-chunks"
// and "sweep-…-dense-mma" — the data behind the dispatch table's rows
// (wonly_dispatch.cu), and the mma.sync kernel's speed (what sm_80 GPUs run)
// on this GPU.
#include <cublas_v2.h>

#include <algorithm>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "commands.h"
#include "cuda_bench.h"
#include "bench_wonly_variants.h"
#include "qgemm/weight_only.h"
#include "wonly/cuda/wonly_cuda.h"

namespace qgemm::tools {
namespace {

void check_cublas(cublasStatus_t status, const char* what) {
  if (status != CUBLAS_STATUS_SUCCESS) {
    throw std::runtime_error(std::string(what) + ": cuBLAS status " + std::to_string(status));
  }
}

constexpr int64_t kDenseFromTokens = 256;

// Rotated copies of one quantized weight with its params, on the device.
struct WeightSets {
  int sets = 1;
  size_t w_bytes = 0, param_count = 0;
  cuda::DeviceBuffer w, scales, offsets;
};

}  // namespace

void bench_wonly_cuda(const Options& options, BenchReport& report) {
  report.set_device_name(cuda::device_name(0));
  cudaStream_t stream = nullptr;
  const int warmup = options.get_int("warmup", 10), runs = options.get_int("runs", 50);
  const int rounds = std::max(1, options.get_int("rounds", 1));
  cuda::set_cooldown_ms(options.get_int("cooldown", 0));
  const double copy_gbps = cuda::record_copy_bandwidth(report, stream);
  const Device gpu = Device::cuda(0);
  const auto shapes = options.get_shapes("shapes", {{28672, 8192}, {4096, 4096}, {11008, 4096}, {4096, 11008}});
  std::vector<int64_t> tokens;
  for (const auto& t : options.get_shapes("tokens", {{1}, {2}, {4}, {8}, {16}, {32}, {64}, {128}, {256}, {1024}, {4096}})) {
    tokens.push_back(t.at(0));
  }
  const bool sweep = options.has("sweep");
  const DType dtype = wonly_bench_dtype(options);
  const cudaDataType_t cublas_dtype = dtype == DType::kFloat16 ? CUDA_R_16F : CUDA_R_16BF;
  const std::string peer = std::string("cublas-") + dtype_name(dtype);
  const std::string speedup_key = std::string("speedup_vs_cublas_") + dtype_name(dtype);
  const std::vector<WonlyVariant> variants = selected_wonly_variants(options, dtype);
  // The dense path's workspace (weight_only_dense_workspace_bytes: the
  // dequantized weight), grown to the largest shape timed.
  cuda::DeviceBuffer dense_workspace;
  TensorView dense_v;
  const auto ensure_dense_workspace = [&](int64_t n, int64_t k) {
    const int64_t dense_bytes = weight_only_dense_workspace_bytes(gpu, n, k);
    if (dense_workspace.bytes() < static_cast<size_t>(dense_bytes)) {
      dense_workspace = cuda::DeviceBuffer(static_cast<size_t>(dense_bytes));
    }
    dense_v = TensorView(dense_workspace.get(), DType::kUInt8, {dense_bytes}, gpu);
  };
  const int64_t workspace_bytes = weight_only_workspace_bytes(gpu);
  cuda::DeviceBuffer workspace(static_cast<size_t>(workspace_bytes));
  const TensorView workspace_v(workspace.get(), DType::kUInt8, {workspace_bytes}, gpu);
  cublasHandle_t handle;
  check_cublas(cublasCreate(&handle), "cublasCreate");
  check_cublas(cublasSetStream(handle, stream), "cublasSetStream");

  for (const auto& s : shapes) {
    const int64_t n = s.at(0), k = s.at(1);
    const std::string nk = std::to_string(n) + "x" + std::to_string(k);
    int64_t max_m = 1;
    for (int64_t m : tokens) max_m = std::max(max_m, m);
    cuda::DeviceBuffer a(max_m * k * 2), out(max_m * n * 2);
    cuda::fill_random(a.get(), dtype, max_m * k, -1, 1, 21, stream);

    // The cuBLAS peer's 16-bit weight sets.
    const size_t peer_bytes = n * k * 2;
    const int peer_sets = cuda::rotation_sets(peer_bytes);
    cuda::DeviceBuffer w_peer(peer_bytes * peer_sets);
    cuda::fill_random(w_peer.get(), dtype, n * k * peer_sets, -0.1, 0.1, 22, stream);

    std::vector<WeightSets> weights(variants.size());
    for (size_t v = 0; v < variants.size(); ++v) {
      const WonlyVariant& var = variants[v];
      WeightSets& ws = weights[v];
      const int group = var.group == 0 ? static_cast<int>(k) : var.group;
      ws.param_count = n * (k / group);
      if (var.prepacked) {
        const auto shape = weight_only_prepacked_shape(n, k, var.int4);
        ws.w_bytes = shape.row_blocks * shape.k_tiles * 1024;
      } else {
        ws.w_bytes = var.int4 ? n * k / 2 : n * k;
      }
      ws.sets = cuda::rotation_sets(ws.w_bytes + ws.param_count * 2 * var.param_bytes());
      ws.w = cuda::DeviceBuffer(ws.w_bytes * ws.sets);
      ws.scales = cuda::DeviceBuffer(ws.param_count * var.param_bytes() * ws.sets);
      ws.offsets = cuda::DeviceBuffer(ws.param_count * var.param_bytes() * ws.sets);
      const DType w_dtype = var.int4 ? DType::kUInt8 : DType::kInt8;
      if (var.prepacked) {
        const int64_t row_bytes = var.int4 ? k / 2 : k;
        cuda::DeviceBuffer plain(n * row_bytes);
        cuda::fill_random(plain.get(), w_dtype, n * row_bytes, var.int4 ? 0 : -128, var.int4 ? 255 : 127, 23, stream);
        const auto shape = weight_only_prepacked_shape(n, k, var.int4);
        for (int set = 0; set < ws.sets; ++set) {
          weight_only_prepack(TensorView(ws.w.as<uint8_t>() + set * ws.w_bytes, w_dtype,
                                         {shape.row_blocks, shape.k_tiles, 1024}, gpu),
                              TensorView(plain.get(), w_dtype, {n, row_bytes}, gpu), stream);
        }
        cuda::check(cudaStreamSynchronize(stream), "prepack");
      } else {
        cuda::fill_random(ws.w.get(), w_dtype, ws.w_bytes * ws.sets,
                          var.int4 ? 0 : -128, var.int4 ? 255 : 127, 24, stream);
      }
      cuda::fill_random(ws.scales.get(), var.param_dtype(dtype), ws.param_count * ws.sets, 1e-3, 1e-2, 25, stream);
      cuda::fill_random(ws.offsets.get(), var.param_dtype(dtype), ws.param_count * ws.sets, -0.05, 0.0, 26, stream);
    }

    for (int64_t m : tokens) {
      std::vector<BenchReport> round_reports;
      for (int round = 0; round < rounds; ++round) {
        BenchReport& into = rounds > 1 ? round_reports.emplace_back("", "") : report;
        const std::string shape = std::to_string(m) + "x" + nk;
        const double act_bytes = static_cast<double>(m * k * 2 + m * n * 2);
        auto record = [&](const std::string& impl, const TimingStats& st, double bytes, double cublas_us,
                          double host_us = 0) {
          BenchRecord r = timed_record("weight_only_mm", impl, shape, "cuda", st);
          r.ops = 2.0 * m * n * k;
          r.bytes = bytes;
          r.extra["frac_of_copy_bw"] = bytes / (st.median_us * 1e3) / copy_gbps;
          if (cublas_us > 0) r.extra[speedup_key] = cublas_us / st.median_us;
          if (host_us > 0) r.extra["host_us"] = host_us;
          into.add(r);
          return st.median_us;
        };
        const TensorView a_v(a.get(), dtype, {m, k}, gpu);
        const TensorView out_v(out.get(), dtype, {m, n}, gpu);

        const float alpha = 1.0f, beta = 0.0f;
        const auto cublas_call = [&](int i) {
          const auto* w = reinterpret_cast<const uint8_t*>(w_peer.get()) + (i % peer_sets) * peer_bytes;
          // out[M,N] row-major = (column-major N×M) = Wᵀ(op T of the K×N column-major W) · a.
          check_cublas(cublasGemmEx(handle, CUBLAS_OP_T, CUBLAS_OP_N, static_cast<int>(n), static_cast<int>(m),
                                    static_cast<int>(k), &alpha, w, cublas_dtype, static_cast<int>(k), a.get(),
                                    cublas_dtype, static_cast<int>(k), &beta, out.get(), cublas_dtype,
                                    static_cast<int>(n), CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
                       "cublasGemmEx");
        };
        const auto cublas = cuda::time_cuda_device(cublas_call, stream, warmup, runs);
        const double cublas_us = record(peer, cublas, static_cast<double>(peer_bytes) + act_bytes, 0,
                                        cuda::time_cuda(cublas_call, stream, warmup, runs).median_us);

        for (size_t v = 0; v < variants.size(); ++v) {
          const WonlyVariant& var = variants[v];
          const WeightSets& ws = weights[v];
          const int group = var.group == 0 ? static_cast<int>(k) : var.group;
          const DType w_dtype = var.int4 ? DType::kUInt8 : DType::kInt8;
          const auto pre = weight_only_prepacked_shape(n, k, var.int4);
          const std::string& name = var.name;
          const std::string impl = "qgemm-" + name;
          bool with_workspace = true, dense = false;
          const auto call = [&](int i) {
            const int set = i % ws.sets;
            const uint8_t* w = ws.w.as<uint8_t>() + set * ws.w_bytes;
            const TensorView w_v = var.prepacked
                                       ? TensorView(w, w_dtype, {pre.row_blocks, pre.k_tiles, 1024}, gpu)
                                       : TensorView(w, w_dtype, {n, var.int4 ? k / 2 : k}, gpu);
            const int64_t groups = k / group;
            const size_t p_offset = set * ws.param_count * var.param_bytes();
            const auto params_view = [&](const cuda::DeviceBuffer& b) {
              const uint8_t* base = b.as<uint8_t>() + p_offset;
              return var.group_major ? TensorView::strided(base, var.param_dtype(dtype), {n, groups}, {1, n}, gpu)
                                     : TensorView(base, var.param_dtype(dtype), {n, groups}, gpu);
            };
            const TensorView s_v = params_view(ws.scales);
            std::optional<TensorView> o_v;
            if (var.offsets) o_v = params_view(ws.offsets);
            if (with_workspace) {
              weight_only_mm(out_v, a_v, w_v, s_v, o_v, group, std::nullopt, dense ? dense_v : workspace_v, stream);
            } else {
              weight_only_mm(out_v, a_v, w_v, s_v, o_v, group, std::nullopt, stream);
            }
          };
          auto time_variant = [&]() { return cuda::time_cuda_device(call, stream, warmup, runs); };
          const double param_bytes = static_cast<double>(ws.param_count * (var.offsets ? 2 : 1) * var.param_bytes());
          const double bytes = static_cast<double>(ws.w_bytes) + param_bytes + act_bytes;
          record(impl, time_variant(), bytes, cublas_us, cuda::time_cuda(call, stream, warmup, runs).median_us);
          if (m <= 16 && sweep) {
            // Both decode kernels forced: wonly_gemv for every variant, the
            // Hopper int8 decode kernel for the int8 ones.
            {
              detail::WonlyKernelOverride force(detail::WonlyKernel::kGemvChunks, 2);
              record("sweep-" + name + "-gemv", time_variant(), bytes, cublas_us);
            }
            if (!var.int4 && detail::wonly_stream_available(0)) {
              detail::WonlyKernelOverride force(detail::WonlyKernel::kStream, 0);
              record("sweep-" + name + "-stream", time_variant(), bytes, cublas_us);
            }
          }
          if (m <= 16) continue;
          with_workspace = false;
          record(impl + "-no-workspace", time_variant(), bytes, cublas_us);
          with_workspace = true;
          // One call forced onto the dense path (kDense or kDenseMma) with its workspace.
          const auto record_dense = [&](detail::WonlyKernel kernel, const std::string& impl) {
            ensure_dense_workspace(n, k);
            detail::WonlyKernelOverride force(kernel, 0);
            dense = true;
            record(impl, time_variant(), bytes, cublas_us);
            dense = false;
          };
          if (m >= kDenseFromTokens && detail::wonly_dense_available(0)) {
            record_dense(detail::WonlyKernel::kDense, impl + "-dense");
          }
          if (!sweep || var.prepacked || var.params16) continue;
          struct Forced {
            detail::WonlyKernel kernel;
            int tile;
            const char* name;
          };
          for (const Forced& f : {Forced{detail::WonlyKernel::kMma, 64, "mma-64"}, Forced{detail::WonlyKernel::kMma, 128, "mma-128"},
                                  Forced{detail::WonlyKernel::kWgmma, 32, "wgmma-32"},
                                  Forced{detail::WonlyKernel::kWgmma, 64, "wgmma-64"},
                                  Forced{detail::WonlyKernel::kWgmma, 128, "wgmma-128"},
                                  Forced{detail::WonlyKernel::kWgmma, 256, "wgmma-256"},
                                  Forced{detail::WonlyKernel::kGemvChunks, 2, "gemv-chunks"},
                                  Forced{detail::WonlyKernel::kGemvChunks, 4, "gemv-4"}}) {
            if (f.kernel == detail::WonlyKernel::kWgmma && !detail::wonly_wgmma_available(0)) continue;
            if ((f.kernel == detail::WonlyKernel::kGemvChunks || f.tile == 32) && m > 32) continue;
            detail::WonlyKernelOverride force(f.kernel, f.tile);
            record("sweep-" + name + "-" + f.name, time_variant(), bytes, cublas_us);
          }
          // The dense path's CUTLASS 2.x form (what sm_80 / Ada GPUs run), on this GPU.
          if (m >= kDenseFromTokens && detail::wonly_dense_mma_available(0)) {
            record_dense(detail::WonlyKernel::kDenseMma, "sweep-" + name + "-dense-mma");
          }
        }
      }
      // --rounds: the median of the round medians, the ratios recomputed from them.
      const std::vector<BenchRecord> merged = merge_rounds(round_reports);
      double cublas_us = 0;
      for (const BenchRecord& r : merged) {
        if (r.impl == peer) cublas_us = r.median_us;
      }
      for (BenchRecord r : merged) {
        r.extra["frac_of_copy_bw"] = r.bytes / (r.median_us * 1e3) / copy_gbps;
        if (r.extra.count(speedup_key) != 0) r.extra[speedup_key] = cublas_us / r.median_us;
        report.add(r);
      }
    }
  }
  cublasDestroy(handle);
}

}  // namespace qgemm::tools
