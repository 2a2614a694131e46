// `qgemm bench wonly`: times weight_only_mm. The CPU part (the reference
// backend: W4A16 group 128 with offsets and W8A16 per channel, activations
// in --dtype) lives here; the GPU part, with cuBLAS and the copy bandwidth,
// in bench_wonly_cuda.cu, its variants (--variants picks some of them; the
// CPU part times its two) in bench_wonly_variants.cpp.
#include <algorithm>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench_common.h"
#include "bench_wonly_variants.h"
#include "commands.h"
#include "core/numeric.h"
#include "qgemm/weight_only.h"

namespace qgemm::tools {

void bench_wonly_cpu(const Options& options, BenchReport& report) {
  const auto shapes = options.get_shapes("shapes", {{4096, 4096}});
  const DType dtype = wonly_bench_dtype(options);
  std::vector<int64_t> tokens;
  for (const auto& t : options.get_shapes("tokens", {{1}, {16}, {128}})) tokens.push_back(t.at(0));
  for (const auto& s : shapes) {
    if (s.size() != 2) throw std::invalid_argument("--shapes takes NxK pairs");
    const int64_t n = s[0], k = s[1];
    std::mt19937_64 rng(static_cast<uint64_t>(n * 31 + k));
    std::uniform_int_distribution<int> byte(0, 255);
    std::uniform_real_distribution<float> scale(1e-3f, 1e-2f), offset(-0.05f, 0.0f), act(-1.0f, 1.0f);
    std::vector<uint8_t> w4(static_cast<size_t>(n * k / 2)), w8(static_cast<size_t>(n * k));
    for (auto& b : w4) b = static_cast<uint8_t>(byte(rng));
    for (auto& b : w8) b = static_cast<uint8_t>(byte(rng));
    const int64_t groups = k / 128;
    std::vector<float> s4(static_cast<size_t>(n * groups)), o4(s4.size()), s8(static_cast<size_t>(n));
    for (auto& v : s4) v = scale(rng);
    for (auto& v : o4) v = offset(rng);
    for (auto& v : s8) v = scale(rng);
    const TensorView w4_v(w4.data(), DType::kUInt8, {n, k / 2}), w8_v(w8.data(), DType::kInt8, {n, k});
    const TensorView s4_v(s4.data(), DType::kFloat32, {n, groups}), o4_v(o4.data(), DType::kFloat32, {n, groups});
    const TensorView s8_v(s8.data(), DType::kFloat32, {n, 1});
    for (int64_t m : tokens) {
      std::vector<uint16_t> a(static_cast<size_t>(m * k)), out(static_cast<size_t>(m * n));
      for (auto& v : a) {
        v = dtype == DType::kFloat16 ? numeric::float_to_fp16_bits(act(rng)) : numeric::float_to_bf16_bits(act(rng));
      }
      const TensorView a_v(a.data(), dtype, {m, k}), out_v(out.data(), dtype, {m, n});
      const double ops = 2.0 * m * n * k;
      // About a second of timed work per record on slow machines.
      const int runs = options.get_int("runs", std::max(3, std::min(20, static_cast<int>(4e9 / ops))));
      const int warmup = options.get_int("warmup", 1);
      const std::string shape = std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k);
      auto add = [&](const char* impl, const TimingStats& stats, double weight_bytes) {
        BenchRecord r = timed_record("weight_only_mm", impl, shape, "cpu", stats);
        r.ops = ops;
        r.bytes = weight_bytes + static_cast<double>(m * k * 2 + m * n * 2);
        r.extra["gops"] = ops / (stats.median_us * 1e3);
        report.add(r);
      };
      add("qgemm-cpu-w4a16-g128",
          time_cpu([&] { weight_only_mm(out_v, a_v, w4_v, s4_v, o4_v, 128, std::nullopt); }, warmup, runs),
          static_cast<double>(n * k / 2 + n * groups * 8));
      add("qgemm-cpu-w8a16-channel",
          time_cpu([&] { weight_only_mm(out_v, a_v, w8_v, s8_v, std::nullopt, static_cast<int>(k), std::nullopt); },
                   warmup, runs),
          static_cast<double>(n * k + n * 4));
    }
  }
}

int cmd_bench_wonly(int argc, char** argv) {
  const Options options(argc, argv, 3,
                        {"device", "shapes", "tokens", "dtype", "variants", "sweep", "rounds", "cooldown", "json",
                         "warmup", "runs"});
  selected_wonly_variants(options, wonly_bench_dtype(options));  // a bad --dtype or --variants fails before anything runs
  return run_bench_parts(options, command_line_string(argc, argv), bench_wonly_cpu, QGEMM_CUDA_PART(bench_wonly_cuda),
                         "bench_wonly.json");
}

}  // namespace qgemm::tools
