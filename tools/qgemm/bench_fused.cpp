// `qgemm bench fused`: the fused norm / activation + quantization ops. The
// CPU part (the reference backend, for orientation only) lives here; the GPU
// part with the copy bandwidth and the unfused peer in bench_fused_cuda.cu.
#include <cstdio>
#include <functional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "bench_common.h"
#include "commands.h"
#include "core/numeric.h"
#include "qgemm/fused.h"

namespace qgemm::tools {
namespace {

void bench_cpu_shape(int64_t t, int64_t h, const Options& options, BenchReport& report) {
  std::vector<uint16_t> x(2 * t * h), residual(t * h), params(3 * h);
  for (size_t i = 0; i < x.size(); ++i) x[i] = numeric::float_to_bf16_bits(static_cast<float>(i % 251) / 64.0f - 2.0f);
  for (size_t i = 0; i < residual.size(); ++i) residual[i] = numeric::float_to_bf16_bits(static_cast<float>(i % 127) / 32.0f - 2.0f);
  for (size_t i = 0; i < params.size(); ++i) params[i] = numeric::float_to_bf16_bits(0.5f + static_cast<float>(i % 17) / 16.0f);
  std::vector<int8_t> q(t * h);
  std::vector<float> scale(t);
  const TensorView xv(x.data(), DType::kBFloat16, {t, h}), x2(x.data(), DType::kBFloat16, {t, 2 * h});
  const TensorView rv(residual.data(), DType::kBFloat16, {t, h});
  const TensorView w(params.data(), DType::kBFloat16, {h}), beta(params.data() + h, DType::kBFloat16, {h}),
      bias(params.data() + 2 * h, DType::kBFloat16, {h});
  QuantOutput out{TensorView(q.data(), DType::kInt8, {t, h}), TensorView(scale.data(), DType::kFloat32, {t}),
                  std::nullopt, FusedScale::kDynamicPerToken, false};
  const std::pair<const char*, std::function<void()>> ops[] = {
      {"rms_norm_quant", [&] { rms_norm_quant(out, xv, w, 1e-6f); }},
      {"add_rms_norm_quant", [&] { add_rms_norm_quant(out, xv, rv, w, 1e-6f); }},
      {"layer_norm_quant", [&] { layer_norm_quant(out, xv, w, beta, 1e-12f, rv, bias); }},
      {"silu_and_mul_quant", [&] { silu_and_mul_quant(out, x2); }},
      {"bias_gelu_quant", [&] { bias_gelu_quant(out, xv, bias, GeluApproximation::kErf); }},
  };
  for (const auto& [name, fn] : ops) {
    const auto stats = time_cpu(fn, options.get_int("warmup", 1), options.get_int("runs", 5));
    BenchRecord r =
        timed_record(name, "qgemm-cpu-dynamic-int8", std::to_string(t) + "x" + std::to_string(h), "cpu", stats);
    report.add(r);
  }
}

}  // namespace

void bench_fused_cpu(const Options& options, BenchReport& report) {
  for (const auto& s : options.get_shapes("shapes", {{16, 4096}, {256, 4096}})) {
    if (s.size() != 2) throw std::invalid_argument("--shapes takes TxH pairs");
    bench_cpu_shape(s[0], s[1], options, report);
  }
}

int cmd_bench_fused(int argc, char** argv) {
  const Options options(argc, argv, 3, {"device", "shapes", "ops", "sweep", "json", "warmup", "runs"});
  return run_bench_parts(options, command_line_string(argc, argv), bench_fused_cpu, QGEMM_CUDA_PART(bench_fused_cuda),
                         "bench_fused.json");
}

}  // namespace qgemm::tools
