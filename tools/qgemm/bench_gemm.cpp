// `qgemm bench gemm`: times scaled_mm with per-token / per-channel scales,
// bias and bf16 output. The CPU part lives here; the GPU part, with the
// cuBLAS/cuBLASLt peers, in bench_gemm_cuda.cu.
#include <algorithm>
#include <cstdio>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench_common.h"
#include "commands.h"
#include "core/numeric.h"
#include "qgemm/gemm.h"

#if QGEMM_WITH_CUDA
#include "bench_gemm_sweep.h"
#endif

namespace qgemm::tools {
namespace {

std::string shape_label(int64_t m, int64_t n, int64_t k) {
  return std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k);
}

void bench_cpu_shape(int64_t m, int64_t n, int64_t k, DType input, const Options& options,
                     BenchReport& report) {
  std::mt19937_64 rng(static_cast<uint64_t>(m * 31 + n * 7 + k));
  std::uniform_int_distribution<int> byte(0, 255);
  std::uniform_real_distribution<float> unit(0.5f, 1.5f);
  std::vector<uint8_t> a(m * k), b(n * k);
  for (auto& x : a) x = static_cast<uint8_t>(byte(rng));
  for (auto& x : b) x = static_cast<uint8_t>(byte(rng));
  if (input == DType::kFloat8E4M3) {  // keep fp8 codes finite (0x7f / 0xff are NaN)
    for (auto& x : a) x = (x & 0x7f) == 0x7f ? 0x7e : x;
    for (auto& x : b) x = (x & 0x7f) == 0x7f ? 0x7e : x;
  }
  std::vector<float> scale_a(m), scale_b(n);
  for (auto& s : scale_a) s = unit(rng) * 1e-2f;
  for (auto& s : scale_b) s = unit(rng) * 1e-2f;
  std::vector<uint16_t> bias(n), out(m * n);
  for (auto& x : bias) x = numeric::float_to_bf16_bits(unit(rng));

  const TensorView out_v(out.data(), DType::kBFloat16, {m, n});
  const TensorView a_v(a.data(), input, {m, k});
  const auto b_v = TensorView::strided(b.data(), input, {k, n}, {1, k});
  const TensorView sa_v(scale_a.data(), DType::kFloat32, {m, 1});
  const TensorView sb_v(scale_b.data(), DType::kFloat32, {1, n});
  const TensorView bias_v(bias.data(), DType::kBFloat16, {n});

  const double ops = 2.0 * m * n * k;
  // Aim for about a second of timed work per shape on slow machines.
  const int runs = options.get_int("runs", std::max(3, std::min(50, static_cast<int>(2e10 / ops))));
  const auto stats = time_cpu([&] { scaled_mm(out_v, a_v, b_v, sa_v, sb_v, bias_v); },
                              options.get_int("warmup", 1), runs);
  BenchRecord r = timed_record("scaled_mm", input == DType::kInt8 ? "qgemm-cpu-int8" : "qgemm-cpu-fp8",
                               shape_label(m, n, k), "cpu", stats);
  r.ops = ops;
  r.bytes = static_cast<double>(m * k + n * k + 2 * m * n);
  r.extra["gops"] = ops / (stats.median_us * 1e3);
  report.add(r);
}

}  // namespace

void bench_gemm_cpu(const Options& options, BenchReport& report) {
  const auto shapes = options.get_shapes(
      "shapes", {{1024, 1024, 1024}, {1, 4096, 4096}, {16, 4096, 4096}, {128, 4096, 4096}});
  const int rounds = std::max(1, options.get_int("rounds", 1));
  for (const auto& s : shapes) {
    if (s.size() != 3) throw std::invalid_argument("--shapes takes MxNxK triples");
    std::vector<BenchReport> round_reports;
    for (int round = 0; round < rounds; ++round) {
      BenchReport& into = rounds > 1 ? round_reports.emplace_back("", "") : report;
      bench_cpu_shape(s[0], s[1], s[2], DType::kInt8, options, into);
      if (options.has("fp8")) bench_cpu_shape(s[0], s[1], s[2], DType::kFloat8E4M3, options, into);
    }
    for (BenchRecord& r : merge_rounds(round_reports)) {
      r.extra["gops"] = r.ops / (r.median_us * 1e3);
      report.add(r);
    }
  }
}

int cmd_bench_gemm(int argc, char** argv) {
  const Options options(argc, argv, 3, {"device", "shapes", "fp8", "sweep", "kernels", "rounds", "cooldown", "no-peers", "no-workspace", "json", "warmup", "runs", "epilogue"});
  const std::string epilogue = options.get("epilogue", "vectors");  // GPU only: bench_gemm_cuda.cu
  if (epilogue != "vectors" && epilogue != "scalars" && epilogue != "both") {
    throw std::invalid_argument("--epilogue: expected vectors, scalars or both, got '" + epilogue + "'");
  }
#if QGEMM_WITH_CUDA
  gemm_sweep_selection(options.get("kernels", ""));  // an unknown name fails before anything runs
#endif
  return run_bench_parts(options, command_line_string(argc, argv), bench_gemm_cpu, QGEMM_CUDA_PART(bench_gemm_cuda),
                         "bench_gemm.json");
}

}  // namespace qgemm::tools
