// `qgemm bench pdl` (GPU only): what programmatic dependent launch
// (qgemm/launch.h) buys calls launched back to back, as an engine's decode
// step launches them. For each call: `runs` launches on rotated inputs queued
// behind a spin kernel, a CUDA event every `--batch` launches, so the events
// time batches of back-to-back calls (an event between every two calls would
// serialize them and hide what PDL overlaps); the per-call time is a batch's
// time / batch, median over batches. PDL off and on are timed alternately,
// off on off on, and each side's median is over both of its rounds.
// Calls: the decode-size weight-only GEMV and skinny scaled_mm, the
// weight-only `wgmma` kernel at 64 and 256 tokens (grids of one and of more
// than one wave), scaled_mm at 64 and 256 tokens on CUTLASS, the fused
// RMSNorm + quant and per-token quantize at 16 and 256 tokens, and the pair
// an engine's decode step launches: RMSNorm + quant, then scaled_mm on its
// output (1 and 16 tokens; the weights rotated, as everywhere, so that they
// come from DRAM).
#include <cuda_runtime.h>

#include <algorithm>
#include <functional>
#include <string>
#include <vector>

#include "bench_common.h"
#include "commands.h"
#include "cuda_bench.h"
#include "qgemm/qgemm.h"

namespace qgemm::tools {
namespace {

struct Call {
  std::string op, impl, shape;
  double bytes;
  std::function<void(int set, cudaStream_t stream)> launch;
};

// Per-call microseconds of `runs` back-to-back launches, timed in batches.
std::vector<double> batch_samples(const Call& call, int sets, cudaStream_t stream, int warmup, int runs, int batch) {
  for (int i = 0; i < warmup; ++i) call.launch(i % sets, stream);
  const int batches = std::max(1, runs / batch);
  std::vector<cudaEvent_t> events(batches + 1);
  for (auto& e : events) cuda::check(cudaEventCreate(&e), "cudaEventCreate");
  cuda::spin(static_cast<uint64_t>(2'000'000 + 30'000 * batches * batch), stream);
  cuda::check(cudaEventRecord(events[0], stream), "cudaEventRecord");
  for (int b = 0; b < batches; ++b) {
    for (int i = 0; i < batch; ++i) call.launch((b * batch + i) % sets, stream);
    cuda::check(cudaEventRecord(events[b + 1], stream), "cudaEventRecord");
  }
  cuda::check(cudaEventSynchronize(events.back()), "cudaEventSynchronize");
  std::vector<double> samples(batches);
  for (int b = 0; b < batches; ++b) {
    float ms = 0;
    cuda::check(cudaEventElapsedTime(&ms, events[b], events[b + 1]), "cudaEventElapsedTime");
    samples[b] = ms * 1e3 / batch;
  }
  for (auto& e : events) cudaEventDestroy(e);
  return samples;
}

}  // namespace

void bench_pdl_cuda(const Options& options, BenchReport& report) {
  report.set_device_name(cuda::device_name(0));
  const int warmup = options.get_int("warmup", 20), runs = options.get_int("runs", 500),
            batch = options.get_int("batch", 25);
  cudaStream_t stream = nullptr;
  const double copy_gbps = cuda::record_copy_bandwidth(report, stream);
  const Device gpu = Device::cuda(0);
  // One buffer per operand, `sets` rotated copies of every input.
  std::vector<cuda::DeviceBuffer> keep;
  auto buffer = [&](size_t bytes, DType dtype, double lo, double hi) {
    keep.emplace_back(bytes);
    cuda::fill_random(keep.back().get(), dtype, bytes / dtype_size(dtype), lo, hi, keep.size(), stream);
    return keep.back().get();
  };
  std::vector<std::pair<Call, int>> calls;  // call, rotation sets

  for (int64_t t : {16, 256}) {
    for (int64_t h : {4096, 8192}) {
      const size_t x_bytes = t * h * 2;
      const int sets = cuda::rotation_sets(t * h * 3);
      auto* x = static_cast<uint8_t*>(buffer(x_bytes * sets, DType::kBFloat16, -2, 2));
      auto* w = buffer(h * 2, DType::kBFloat16, 0.5, 1.5);
      auto* q = static_cast<uint8_t*>(buffer(t * h * sets, DType::kInt8, 0, 0));
      auto* s = static_cast<float*>(buffer(t * 4 * sets, DType::kFloat32, 1, 1));
      const std::string shape = std::to_string(t) + "x" + std::to_string(h);
      calls.push_back({{"rms_norm_quant", "qgemm-dynamic-int8", shape, t * h * 3.0 + 4 * t,
                        [=](int i, cudaStream_t st) {
                          QuantOutput out;
                          out.q = TensorView(q + i * t * h, DType::kInt8, {t, h}, gpu);
                          out.scale = TensorView(s + i * t, DType::kFloat32, {t}, gpu);
                          rms_norm_quant(out, TensorView(x + i * x_bytes, DType::kBFloat16, {t, h}, gpu),
                                         TensorView(w, DType::kBFloat16, {h}, gpu), 1e-6f, st);
                        }},
                       sets});
      calls.push_back({{"quantize", "qgemm-token-int8", shape, t * h * 3.0 + 4 * t,
                        [=](int i, cudaStream_t st) {
                          quantize(TensorView(q + i * t * h, DType::kInt8, {t, h}, gpu),
                                   TensorView(s + i * t, DType::kFloat32, {t}, gpu), std::nullopt,
                                   TensorView(x + i * x_bytes, DType::kBFloat16, {t, h}, gpu), QuantOptions{}, st);
                        }},
                       sets});
    }
  }
  for (const auto& nk : std::vector<std::pair<int64_t, int64_t>>{{4096, 4096}, {6144, 4096}, {28672, 4096}}) {
    const int64_t n = nk.first, k = nk.second, max_m = 256;
    const int sets = cuda::rotation_sets(n * k);
    auto* b = static_cast<int8_t*>(buffer(n * k * sets, DType::kInt8, -128, 127));
    auto* sb = buffer(n * 4, DType::kFloat32, 1e-3, 2e-3);
    auto* a = static_cast<int8_t*>(buffer(max_m * k, DType::kInt8, -128, 127));
    auto* sa = buffer(max_m * 4, DType::kFloat32, 1e-3, 2e-3);
    auto* out = buffer(max_m * n * 2, DType::kBFloat16, 0, 0);
    // M ≤ 16: the skinny kernel; 64 and 256: CUTLASS sm_90 tiles (their own PDL waits).
    for (int64_t m : {1, 16, 64, 256}) {
      if (m > 16 && n > 6144) continue;
      const std::string shape = std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k);
      calls.push_back({{"scaled_mm", "qgemm-int8", shape, static_cast<double>(n * k),
                        [=](int i, cudaStream_t st) {
                          scaled_mm(TensorView(out, DType::kBFloat16, {m, n}, gpu),
                                    TensorView(a, DType::kInt8, {m, k}, gpu),
                                    TensorView::strided(b + i * n * k, DType::kInt8, {k, n}, {1, k}, gpu),
                                    TensorView(sa, DType::kFloat32, {m}, gpu),
                                    TensorView(sb, DType::kFloat32, {n}, gpu), std::nullopt, st);
                        }},
                       sets});
    }
  }
  // The pair: x [t, K] bf16 → rms_norm_quant → (q, s) → scaled_mm → [t, N].
  for (const auto& nk : std::vector<std::pair<int64_t, int64_t>>{
           {4096, 4096}, {6144, 4096}, {28672, 4096}, {4096, 14336}, {8192, 8192}}) {
    const int64_t n = nk.first, k = nk.second, max_t = 16;
    const int sets = cuda::rotation_sets(n * k);
    auto* b = static_cast<int8_t*>(buffer(n * k * sets, DType::kInt8, -128, 127));
    auto* sb = buffer(n * 4, DType::kFloat32, 1e-3, 2e-3);
    auto* x = buffer(max_t * k * 2, DType::kBFloat16, -2, 2);
    auto* norm_w = buffer(k * 2, DType::kBFloat16, 0.5, 1.5);
    auto* q = buffer(max_t * k, DType::kInt8, 0, 0);
    auto* s = buffer(max_t * 4, DType::kFloat32, 1, 1);
    auto* out = buffer(max_t * n * 2, DType::kBFloat16, 0, 0);
    for (int64_t t : {1, 16}) {
      const std::string shape = std::to_string(t) + "x" + std::to_string(n) + "x" + std::to_string(k);
      calls.push_back({{"rms_norm_quant+scaled_mm", "qgemm-int8", shape, static_cast<double>(n * k),
                        [=](int i, cudaStream_t st) {
                          QuantOutput norm_out;
                          norm_out.q = TensorView(q, DType::kInt8, {t, k}, gpu);
                          norm_out.scale = TensorView(s, DType::kFloat32, {t}, gpu);
                          rms_norm_quant(norm_out, TensorView(x, DType::kBFloat16, {t, k}, gpu),
                                         TensorView(norm_w, DType::kBFloat16, {k}, gpu), 1e-6f, st);
                          scaled_mm(TensorView(out, DType::kBFloat16, {t, n}, gpu), norm_out.q,
                                    TensorView::strided(b + i * n * k, DType::kInt8, {k, n}, {1, k}, gpu),
                                    norm_out.scale, TensorView(sb, DType::kFloat32, {n}, gpu), std::nullopt, st);
                        }},
                       sets});
    }
  }
  for (const auto& nk : std::vector<std::pair<int64_t, int64_t>>{{4096, 4096}, {11008, 4096}, {28672, 8192}}) {
    const int64_t n = nk.first, k = nk.second, groups = k / 128;
    const int64_t w_bytes = n * k / 2, p_count = n * groups;
    const int sets = cuda::rotation_sets(w_bytes + p_count * 8);
    auto* w = static_cast<uint8_t*>(buffer(w_bytes * sets, DType::kUInt8, 0, 255));
    auto* sc = static_cast<float*>(buffer(p_count * 4 * sets, DType::kFloat32, 1e-3, 1e-2));
    auto* of = static_cast<float*>(buffer(p_count * 4 * sets, DType::kFloat32, -0.05, 0));
    const int64_t max_m = 256;
    auto* a = buffer(max_m * k * 2, DType::kBFloat16, -1, 1);
    auto* out = buffer(max_m * n * 2, DType::kBFloat16, 0, 0);
    // M ≤ 16: the GEMV; 64 and 256: the wgmma kernel on sm_90 (no workspace:
    // data-parallel, K split in a cluster where the grid is small).
    for (int64_t m : {1, 16, 64, 256}) {
      const std::string shape = std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k);
      calls.push_back({{"weight_only_mm", "qgemm-w4a16-g128", shape, w_bytes + p_count * 8.0,
                        [=](int i, cudaStream_t st) {
                          weight_only_mm(TensorView(out, DType::kBFloat16, {m, n}, gpu),
                                         TensorView(a, DType::kBFloat16, {m, k}, gpu),
                                         TensorView(w + i * w_bytes, DType::kUInt8, {n, k / 2}, gpu),
                                         TensorView(sc + i * p_count, DType::kFloat32, {n, groups}, gpu),
                                         TensorView(of + i * p_count, DType::kFloat32, {n, groups}, gpu), 128,
                                         std::nullopt, st);
                        }},
                       sets});
    }
  }

  const bool restore = programmatic_dependent_launch();
  for (const auto& [call, sets] : calls) {
    std::vector<double> off, on;
    for (int round = 0; round < 2; ++round) {
      for (bool pdl : {false, true}) {
        set_programmatic_dependent_launch(pdl);
        const auto samples = batch_samples(call, sets, stream, warmup, runs, batch);
        (pdl ? on : off).insert((pdl ? on : off).end(), samples.begin(), samples.end());
      }
    }
    const TimingStats off_stats = summarize(off), on_stats = summarize(on);
    for (bool pdl : {false, true}) {
      const TimingStats& stats = pdl ? on_stats : off_stats;
      BenchRecord r = timed_record(call.op, call.impl + (pdl ? "-pdl-on" : "-pdl-off"), call.shape, "cuda", stats);
      r.runs = stats.runs * batch;
      r.bytes = call.bytes;
      r.extra["frac_of_copy_bw"] = call.bytes / (r.median_us * 1e3) / copy_gbps;
      r.extra["batch"] = batch;
      if (pdl) r.extra["speedup_vs_pdl_off"] = off_stats.median_us / on_stats.median_us;
      report.add(r);
    }
  }
  set_programmatic_dependent_launch(restore);
}

int cmd_bench_pdl(int argc, char** argv) {
  return run_gpu_bench_command(argc, argv, {"json", "warmup", "runs", "batch"}, bench_pdl_cuda, "bench_pdl.json");
}

}  // namespace qgemm::tools
