// `qgemm bench quant`: times quantize / dequantize. The CPU part (the
// reference backend, bf16 → int8 per token and back) lives here; the GPU part,
// with its peers, in bench_quant_cuda.cu.
#include <algorithm>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench_common.h"
#include "commands.h"
#include "core/numeric.h"
#include "qgemm/quant.h"

namespace qgemm::tools {

void bench_quant_cpu(const Options& options, BenchReport& report) {
  const auto shapes = options.get_shapes("shapes", {{1, 4096}, {16, 4096}, {256, 4096}, {4096, 4096}});
  for (const auto& s : shapes) {
    if (s.size() != 2) throw std::invalid_argument("--shapes takes TxH pairs");
    const int64_t t = s[0], h = s[1];
    std::mt19937_64 rng(static_cast<uint64_t>(t * 31 + h));
    std::normal_distribution<float> normal(0.0f, 1.0f);
    std::vector<uint16_t> x(t * h), back(t * h);
    for (auto& v : x) v = numeric::float_to_bf16_bits(normal(rng));
    std::vector<int8_t> q(t * h);
    std::vector<float> scale(t);
    const TensorView x_v(x.data(), DType::kBFloat16, {t, h}), back_v(back.data(), DType::kBFloat16, {t, h});
    const TensorView q_v(q.data(), DType::kInt8, {t, h}), scale_v(scale.data(), DType::kFloat32, {t});
    const QuantOptions o;  // dynamic per token, symmetric
    const int runs = options.get_int("runs", std::max(3, std::min(50, static_cast<int>(2e8 / (t * h)))));
    const int warmup = options.get_int("warmup", 1);
    const double bytes = static_cast<double>(t * h * 3 + t * 4);
    auto add = [&](const char* impl, const TimingStats& st) {
      BenchRecord r = timed_record("quant", impl, std::to_string(t) + "x" + std::to_string(h), "cpu", st);
      r.bytes = bytes;
      report.add(r);
    };
    add("qgemm-cpu-token-int8", time_cpu([&] { quantize(q_v, scale_v, std::nullopt, x_v, o); }, warmup, runs));
    add("qgemm-cpu-dequant-token-int8",
        time_cpu([&] { dequantize(back_v, q_v, scale_v, std::nullopt, o); }, warmup, runs));
  }
}

int cmd_bench_quant(int argc, char** argv) {
  const Options options(argc, argv, 3, {"device", "shapes", "json", "warmup", "runs"});
  return run_bench_parts(options, command_line_string(argc, argv), bench_quant_cpu, QGEMM_CUDA_PART(bench_quant_cuda),
                         "bench_quant.json");
}

}  // namespace qgemm::tools
