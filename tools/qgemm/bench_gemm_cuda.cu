// GPU part of `qgemm bench gemm`: qgemm int8 / fp8 scaled_mm (per-token and
// per-channel scales, bias, bf16 out) against the peers an engine would
// otherwise use (gemm_peers_cuda.h), all timed in the same process with CUDA
// events (warm-up, median of ≥ 50 runs), random data, inputs rotated so the
// working set exceeds L2, and the device copy bandwidth measured first.
//
// Figures per record: tops, speedup_vs_cublas_bf16, weight_bw_fraction
// (weight bytes / time against the 1 GiB copy's bandwidth) and, for
// M ≤ 16, weight_bw_fraction_of_same_size_copy (against a copy moving the
// weight's bytes, half read, half written, timed in the same run: a small
// weight's floor, since a 16 MB copy pays the same launch ramp and tail).
//
// Timing: cuda::time_cuda_device — the timed launches and their events are
// queued behind a spin kernel before the GPU reaches them, so each interval
// is the kernel's device time, not the host's launch overhead (which
// otherwise dominates at small M, where kernels take ~10 µs).
//
// Options: --shapes MxNxK,... (default: the issue's grid), --runs N (50),
// --warmup N (10), --sweep (also time every qgemm kernel config on every
// shape, the portable fallback included, to tune dispatch_table.h), --no-peers, --json FILE,
// --no-workspace (qgemm without its stream-K workspace; by default every
// qgemm call gets scaled_mm_workspace_bytes, as cuBLASLt gets 64 MiB), --rounds R (1):
// time every implementation of a shape R times, round-robin (the whole
// sequence of the shape, R times over), and report per implementation the
// median of its R round medians (min: the least sample; runs: all of them;
// extra "rounds" and "round_spread" = (max − min) / median of the round
// medians). The H100's clock follows its power draw and temperature over
// seconds, so one block of runs per implementation can catch a peer and
// qgemm at different clocks; interleaved rounds see the same conditions.
// --cooldown MS (0): an idle pause before every timing (cuda_bench.h,
// set_cooldown_ms), so that each implementation starts from the same clock
// instead of the one its predecessor left.
// --epilogue vectors|scalars|both (vectors): what qgemm's epilogue reads —
// per-token and per-channel scales and a bias (the default, the issue's
// case), or per-tensor scales and no bias (the work cuBLASLt fp8's call does,
// records "…-scalars"); both: each qgemm call timed both ways, in turn.
#include <cuda_bf16.h>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench_gemm_sweep.h"
#include "commands.h"
#include "cuda_bench.h"
#include "gemm/cuda/dispatch_table.h"
#include "gemm/cuda/scaled_mm_cuda.h"
#include "gemm_grid.h"
#include "gemm_peers_cuda.h"
#include "qgemm/gemm.h"

namespace qgemm::tools {
namespace {

using detail::GemmKernel;

std::string shape_name(int64_t m, int64_t n, int64_t k) {
  return std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k);
}

// Buffers of one shape: `sets` rotated copies of A and B (sized for bf16, the
// widest input), one output, scales and bias.
struct ShapeBuffers {
  int64_t m, n, k;
  int sets;
  cuda::DeviceBuffer a, b, out, acc, scale_a, scale_b, bias, scalar_a, scalar_b;
  ShapeBuffers(int64_t m_, int64_t n_, int64_t k_, cudaStream_t stream)
      : m(m_), n(n_), k(k_), sets(cuda::rotation_sets(static_cast<size_t>(m_ * k_ + n_ * k_) * 2)),
        a(m_ * k_ * 2 * sets), b(n_ * k_ * 2 * sets), out(m_ * n_ * 2), acc(m_ * n_ * 4),
        scale_a(m_ * 4), scale_b(n_ * 4), bias(n_ * 2), scalar_a(4), scalar_b(4) {
    cuda::fill_random(scale_a.get(), DType::kFloat32, m, 1e-3, 1e-2, 3, stream);
    cuda::fill_random(scale_b.get(), DType::kFloat32, n, 1e-3, 1e-2, 4, stream);
    cuda::fill_random(bias.get(), DType::kBFloat16, n, -1, 1, 5, stream);
    cuda::fill_random(scalar_a.get(), DType::kFloat32, 1, 1e-2, 2e-2, 6, stream);
    cuda::fill_random(scalar_b.get(), DType::kFloat32, 1, 1e-2, 2e-2, 7, stream);
  }
  // Random inputs of `dtype` in every rotated set.
  void fill_inputs(DType dtype, cudaStream_t stream) {
    const size_t a_count = m * k * sets, b_count = n * k * sets;
    const double lo = dtype == DType::kInt8 ? -128 : -2, hi = dtype == DType::kInt8 ? 127 : 2;
    cuda::fill_random(a.get(), dtype, a_count, lo, hi, 11, stream);
    cuda::fill_random(b.get(), dtype, b_count, lo, hi, 12, stream);
  }
  const uint8_t* a_set(int i, size_t elem) const { return a.as<uint8_t>() + (i % sets) * m * k * elem; }
  const uint8_t* b_set(int i, size_t elem) const { return b.as<uint8_t>() + (i % sets) * n * k * elem; }
};

struct Context {
  const Options& options;
  BenchReport* report;  // where add_record puts records: the run's report or a round's
  cudaStream_t stream;
  int warmup, runs;
  double copy_gbps;
  double bf16_us = 0;  // cuBLAS bf16 time of the current shape (timed first)
  cuda::DeviceBuffer workspace;  // qgemm's stream-K workspace (empty with --no-workspace)
  // Decode shapes (M ≤ kSameSizeCopyMaxM): weight bytes → GB/s of a copy
  // moving that traffic (half read, half written), timed once per size.
  std::map<double, double> same_size_copies;
  bool epilogue_vectors = true, epilogue_scalars = false;  // --epilogue
};

constexpr int64_t kSameSizeCopyMaxM = 16;

// The bandwidth of a copy whose traffic is `bytes` (half read, half written;
// cuda::copy_bandwidth_gbps on rotated buffers, as the 1 GiB figure): the
// fastest a single call moving that many bytes runs, launch ramp and tail
// included — the floor a small weight's GEMM is read against.
double same_size_copy_gbps(Context& ctx, double bytes) {
  const auto it = ctx.same_size_copies.find(bytes);
  if (it != ctx.same_size_copies.end()) return it->second;
  return ctx.same_size_copies[bytes] =
             cuda::copy_bandwidth_gbps(static_cast<size_t>(bytes / 2), ctx.stream, ctx.warmup, ctx.runs);
}

void add_record(Context& ctx, const ShapeBuffers& s, const std::string& impl, const TimingStats& stats,
                double bytes, std::map<std::string, double> extra = {}) {
  BenchRecord r = timed_record("scaled_mm", impl, shape_name(s.m, s.n, s.k), "cuda", stats);
  r.ops = 2.0 * s.m * s.n * s.k;
  r.bytes = bytes;
  r.extra = std::move(extra);
  r.extra["tops"] = r.ops / (stats.median_us * 1e6);
  // Weight bytes per second as a fraction of the measured copy bandwidth:
  // the figure of merit where the GEMM is bandwidth-bound (small M).
  const double weight_bytes = static_cast<double>(s.n * s.k) * (impl.find("bf16") != std::string::npos ? 2 : 1);
  if (ctx.bf16_us > 0) r.extra["speedup_vs_cublas_bf16"] = ctx.bf16_us / stats.median_us;
  r.extra["weight_bw_fraction"] = weight_bytes / (stats.median_us * 1e3) / ctx.copy_gbps;
  if (s.m <= kSameSizeCopyMaxM) {
    r.extra["weight_bw_fraction_of_same_size_copy"] =
        weight_bytes / (stats.median_us * 1e3) / same_size_copy_gbps(ctx, weight_bytes);
  }
  ctx.report->add(r);
}

// The R rounds of one shape merged (merge_rounds: the median of the round
// medians per implementation) into ctx.report, the derived figures
// recomputed from the merged times.
void merge_shape_rounds(Context& ctx, const ShapeBuffers& s, const std::vector<BenchReport>& rounds) {
  const std::vector<BenchRecord> merged = merge_rounds(rounds);
  ctx.bf16_us = 0;
  for (const BenchRecord& r : merged) {
    if (r.impl == "cublas-bf16") ctx.bf16_us = r.median_us;
  }
  for (const BenchRecord& r : merged) {
    std::map<std::string, double> extra = r.extra;
    for (const char* derived : {"tops", "speedup_vs_cublas_bf16", "weight_bw_fraction", "weight_bw_fraction_of_same_size_copy"}) extra.erase(derived);
    add_record(ctx, s, r.impl, TimingStats{r.median_us, r.min_us, r.runs}, r.bytes, std::move(extra));
  }
}

// qgemm scaled_mm with per-token / per-channel scales and bias, bf16 out; with
// `kernel`, that kernel forced (the sweep), else the dispatcher's choice.
// `fast`: fp8 with Fp8Accumulation::kFast ("qgemm-fp8-fast", timed in the same
// run as cublaslt-fp8 and cublaslt-fp8-fastaccum). `scalars`: per-tensor
// scales and no bias instead (the impl name ends in "-scalars").
void bench_qgemm_epilogue(Context& ctx, ShapeBuffers& s, DType input, const GemmKernel* kernel, bool fast,
                          bool scalars) {
  const Device gpu = Device::cuda(0);
  detail::ScaledMmArgs args;
  args.m = s.m, args.n = s.n, args.k = s.k;
  args.input_dtype = input;
  args.out_dtype = DType::kBFloat16;
  args.lda = s.k, args.ldb = s.k, args.ldo = s.n;
  args.out = s.out.get();
  args.scale_a = (scalars ? s.scalar_a : s.scale_a).as<float>(), args.scale_a_per_token = !scalars;
  args.scale_b = (scalars ? s.scalar_b : s.scale_b).as<float>(), args.scale_b_per_channel = !scalars;
  args.bias = scalars ? nullptr : s.bias.get();
  args.fp8_fast_accum = fast && input != DType::kInt8;
  args.device = gpu;
  args.stream = ctx.stream;
  args.workspace = ctx.workspace.bytes() > 0 ? ctx.workspace.get() : nullptr;
  args.workspace_bytes = static_cast<int64_t>(ctx.workspace.bytes());
  args.a = s.a_set(0, 1), args.b = s.b_set(0, 1);
  if (kernel != nullptr && !detail::scaled_mm_cuda_with(args, *kernel)) return;  // cannot take it
  const GemmKernel chosen = kernel ? *kernel : detail::scaled_mm_cuda_kernel(args);

  const TensorView out(s.out.get(), DType::kBFloat16, {s.m, s.n}, gpu);
  const TensorView sa = scalars ? TensorView(s.scalar_a.get(), DType::kFloat32, {1}, gpu)
                                 : TensorView(s.scale_a.get(), DType::kFloat32, {s.m, 1}, gpu);
  const TensorView sb = scalars ? TensorView(s.scalar_b.get(), DType::kFloat32, {1}, gpu)
                                 : TensorView(s.scale_b.get(), DType::kFloat32, {1, s.n}, gpu);
  const std::optional<TensorView> bias =
      scalars ? std::nullopt : std::optional<TensorView>(TensorView(s.bias.get(), DType::kBFloat16, {s.n}, gpu));
  const TensorView workspace(ctx.workspace.get(), DType::kUInt8, {args.workspace_bytes}, gpu);
  const auto stats = cuda::time_cuda_device(
      [&](int i) {
        if (kernel != nullptr) {
          args.a = s.a_set(i, 1), args.b = s.b_set(i, 1);
          detail::scaled_mm_cuda_with(args, *kernel);
          return;
        }
        const TensorView a(s.a_set(i, 1), input, {s.m, s.k}, gpu);
        const auto b = TensorView::strided(s.b_set(i, 1), input, {s.k, s.n}, {1, s.k}, gpu);
        const Fp8Accumulation accumulation = fast ? Fp8Accumulation::kFast : Fp8Accumulation::kPrecise;
        if (args.workspace != nullptr) {
          scaled_mm(out, a, b, sa, sb, bias, workspace, ctx.stream, accumulation);
        } else {
          scaled_mm(out, a, b, sa, sb, bias, ctx.stream, accumulation);
        }
      },
      ctx.stream, ctx.warmup, ctx.runs);
  const std::string base = input == DType::kInt8 ? "qgemm-int8" : fast ? "qgemm-fp8-fast" : "qgemm-fp8";
  const std::string impl = (kernel ? "sweep-" + base + "-" + detail::gemm_kernel_name(*kernel) : base) +
                           (scalars ? "-scalars" : "");
  add_record(ctx, s, impl, stats, double(s.m * s.k + s.n * s.k + 2 * s.m * s.n + (scalars ? 0 : 8 * s.n)),
             {{"kernel", static_cast<double>(chosen)}, {"workspace_bytes", static_cast<double>(args.workspace_bytes)}});
}

// qgemm with the epilogue(s) --epilogue asks for, in turn.
void bench_qgemm(Context& ctx, ShapeBuffers& s, DType input, const GemmKernel* kernel, bool fast = false) {
  if (ctx.epilogue_vectors) bench_qgemm_epilogue(ctx, s, input, kernel, fast, false);
  if (ctx.epilogue_scalars) bench_qgemm_epilogue(ctx, s, input, kernel, fast, true);
}

struct Handles {
  cublasHandle_t blas = nullptr;
  cublasLtHandle_t lt = nullptr;
  cuda::DeviceBuffer workspace{size_t(64) << 20};
  explicit Handles(cudaStream_t stream) {
    cuda::check_cublas(cublasCreate(&blas), "cublasCreate");
    cuda::check_cublas(cublasSetStream(blas, stream), "cublasSetStream");
    cuda::check_cublas(cublasSetWorkspace(blas, workspace.get(), workspace.bytes()), "cublasSetWorkspace");
    cuda::check_cublas(cublasLtCreate(&lt), "cublasLtCreate");
  }
  ~Handles() {
    cublasLtDestroy(lt);
    cublasDestroy(blas);
  }
};

void bench_peers_int8(Context& ctx, ShapeBuffers& s, Handles& h) {
  cuda::LtMatmul lt(h.lt, cuda::LtMatmul::Kind::kInt8ToInt32, s.m, s.n, s.k, h.workspace.get(), h.workspace.bytes());
  if (!lt.ok()) {
    std::fprintf(stderr, "cuBLASLt int8: no algorithm for %s\n", shape_name(s.m, s.n, s.k).c_str());
    return;
  }
  const auto alone = cuda::time_cuda_device([&](int i) { lt.run(s.a_set(i, 1), s.b_set(i, 1), s.acc.get(), ctx.stream); },
                                     ctx.stream, ctx.warmup, ctx.runs);
  add_record(ctx, s, "cublaslt-int8", alone, double(s.m * s.k + s.n * s.k + 4 * s.m * s.n));
  const auto unfused = cuda::time_cuda_device(
      [&](int i) {
        lt.run(s.a_set(i, 1), s.b_set(i, 1), s.acc.get(), ctx.stream);
        cuda::dequant_epilogue_bf16(s.acc.as<int32_t>(), s.scale_a.as<float>(), s.scale_b.as<float>(), s.bias.get(),
                                    s.out.get(), s.m, s.n, ctx.stream);
      },
      ctx.stream, ctx.warmup, ctx.runs);
  add_record(ctx, s, "cublaslt-int8+epilogue", unfused,
             double(s.m * s.k + s.n * s.k + 4 * s.m * s.n * 2 + 2 * s.m * s.n));
}

void bench_peer_fp8(Context& ctx, ShapeBuffers& s, Handles& h, bool fast_accum) {
  cuda::LtMatmul lt(h.lt, cuda::LtMatmul::Kind::kFp8ToBf16, s.m, s.n, s.k, h.workspace.get(), h.workspace.bytes(),
                    s.scalar_a.as<float>(), s.scalar_b.as<float>(), fast_accum);
  if (!lt.ok()) {
    std::fprintf(stderr, "cuBLASLt fp8: no algorithm for %s\n", shape_name(s.m, s.n, s.k).c_str());
    return;
  }
  const auto stats = cuda::time_cuda_device([&](int i) { lt.run(s.a_set(i, 1), s.b_set(i, 1), s.out.get(), ctx.stream); },
                                     ctx.stream, ctx.warmup, ctx.runs);
  add_record(ctx, s, fast_accum ? "cublaslt-fp8-fastaccum" : "cublaslt-fp8", stats, double(s.m * s.k + s.n * s.k + 2 * s.m * s.n));
}

void bench_peer_bf16(Context& ctx, ShapeBuffers& s, Handles& h) {
  const auto stats = cuda::time_cuda_device(
      [&](int i) { cuda::cublas_bf16_gemm(h.blas, s.m, s.n, s.k, s.a_set(i, 2), s.b_set(i, 2), s.out.get()); },
      ctx.stream, ctx.warmup, ctx.runs);
  ctx.bf16_us = stats.median_us;
  add_record(ctx, s, "cublas-bf16", stats, double(2 * (s.m * s.k + s.n * s.k + s.m * s.n)));
}

}  // namespace

void bench_gemm_cuda(const Options& options, BenchReport& report) {
  report.set_device_name(cuda::device_name(0));
  cudaStream_t stream;
  cuda::check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate");
  Context ctx{options, &report, stream, options.get_int("warmup", 10), std::max(50, options.get_int("runs", 50)), 0};
  const int rounds = std::max(1, options.get_int("rounds", 1));
  const std::string epilogue = options.get("epilogue", "vectors");  // checked by cmd_bench_gemm
  ctx.epilogue_vectors = epilogue != "scalars", ctx.epilogue_scalars = epilogue != "vectors";
  cuda::set_cooldown_ms(options.get_int("cooldown", 0));
  ctx.copy_gbps = cuda::record_copy_bandwidth(report, stream);
  if (!options.has("no-workspace")) {
    ctx.workspace = cuda::DeviceBuffer(static_cast<size_t>(scaled_mm_workspace_bytes(Device::cuda(0))));
  }

  const bool peers = !options.has("no-peers"), sweep = options.has("sweep");
  Handles handles(stream);
  const std::vector<GemmKernel> swept = gemm_sweep_selection(options.get("kernels", ""));
  for (const auto& shape : options.get_shapes("shapes", gemm_grid_shapes())) {
    if (shape.size() != 3) throw std::invalid_argument("--shapes takes MxNxK triples");
    ShapeBuffers s(shape[0], shape[1], shape[2], stream);
    std::vector<BenchReport> round_reports;
    round_reports.reserve(static_cast<size_t>(rounds));
    for (int round = 0; round < rounds; ++round) {
      if (rounds > 1) {
        round_reports.emplace_back("", "");
        ctx.report = &round_reports.back();
      }
      ctx.bf16_us = 0;
      if (peers) {  // first, so every record of the shape can carry its speedup
        s.fill_inputs(DType::kBFloat16, stream);
        bench_peer_bf16(ctx, s, handles);
      }
      for (DType input : {DType::kInt8, DType::kFloat8E4M3}) {
        s.fill_inputs(input, stream);
        bench_qgemm(ctx, s, input, nullptr);
        if (input != DType::kInt8) bench_qgemm(ctx, s, input, nullptr, true);
        if (sweep) {
          for (GemmKernel kernel : swept) bench_qgemm(ctx, s, input, &kernel);
          if (input != DType::kInt8) {  // those with a fast-accumulation variant
            for (GemmKernel kernel : swept) {
              if (detail::has_fp8_fast_variant(kernel)) bench_qgemm(ctx, s, input, &kernel, true);
            }
          }
        }
        if (peers && input == DType::kInt8) bench_peers_int8(ctx, s, handles);
        if (peers && input != DType::kInt8) {
          bench_peer_fp8(ctx, s, handles, false);
          bench_peer_fp8(ctx, s, handles, true);
        }
      }
    }
    if (rounds > 1) {
      ctx.report = &report;
      merge_shape_rounds(ctx, s, round_reports);
    }
    cuda::check(cudaStreamSynchronize(stream), "bench shape");
    std::fprintf(stderr, "%s done\n", shape_name(s.m, s.n, s.k).c_str());
  }
  cudaStreamDestroy(stream);
}

}  // namespace qgemm::tools
