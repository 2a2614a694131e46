// `qgemm demo`: the main job. Quantizes a random Llama-sized linear layer —
// activations per token, weights per output channel, both symmetric int8, a
// bf16 bias — runs it through scaled_mm on the GPU when one is present (else
// on the CPU), and prints the error against the unquantized fp32 layer and
// the time.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "bench_common.h"
#include "commands.h"
#include "core/numeric.h"
#include "qgemm/gemm.h"
#include "qgemm/quant.h"
#include "qgemm/version.h"
#if QGEMM_WITH_CUDA
#include "cuda_bench.h"
#endif

namespace qgemm::tools {
namespace {

// Symmetric int8 quantization of `rows` vectors of `length` with one scale
// per vector (per token for activations, per output channel for weights),
// through qgemm::quantize on the CPU.
void quantize_rows(const std::vector<float>& x, int64_t rows, int64_t length,
                   std::vector<int8_t>& q, std::vector<float>& scales) {
  q.resize(rows * length);
  scales.resize(rows);
  QuantOptions options;
  options.mode = QuantMode::kDynamicPerToken;
  quantize(TensorView(q.data(), DType::kInt8, {rows, length}), TensorView(scales.data(), DType::kFloat32, {rows}),
           std::nullopt, TensorView(x.data(), DType::kFloat32, {rows, length}), options);
}

}  // namespace

int cmd_demo(int argc, char** argv) {
  const Options options(argc, argv, 2, {"device", "tokens", "hidden", "out-features"});
  const int64_t tokens = options.get_int("tokens", 128);
  const int64_t hidden = options.get_int("hidden", 4096);         // K: Llama-2-7B hidden size
  const int64_t features = options.get_int("out-features", 11008);  // N: its MLP width
  std::string device = options.get("device", qgemm::cuda_device_count() > 0 ? "cuda" : "cpu");

  std::printf("qgemm %s demo: W8A8 linear layer, %lld tokens x %lld -> %lld features\n",
              qgemm::version(), static_cast<long long>(tokens), static_cast<long long>(hidden),
              static_cast<long long>(features));
  std::mt19937_64 rng(2024);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> x(tokens * hidden), w(features * hidden), bias_f(features);
  for (auto& v : x) v = normal(rng);
  for (int64_t t = 0; t < tokens; ++t) x[t * hidden + (t * 37) % hidden] *= 20.0f;  // outliers
  for (auto& v : w) v = 0.02f * normal(rng);
  for (auto& v : bias_f) v = 0.1f * normal(rng);

  std::vector<int8_t> xq, wq;
  std::vector<float> scale_x, scale_w;
  quantize_rows(x, tokens, hidden, xq, scale_x);    // per token
  quantize_rows(w, features, hidden, wq, scale_w);  // per output channel
  std::vector<uint16_t> bias(features), out(tokens * features, 0xffff);
  for (int64_t n = 0; n < features; ++n) bias[n] = numeric::float_to_bf16_bits(bias_f[n]);

  double median_us = 0;
  auto views = [&](void* o, void* a, void* b, void* sa, void* sb, void* bs, Device d) {
    return std::make_tuple(TensorView(o, DType::kBFloat16, {tokens, features}, d),
                           TensorView(a, DType::kInt8, {tokens, hidden}, d),
                           TensorView::strided(b, DType::kInt8, {hidden, features}, {1, hidden}, d),
                           TensorView(sa, DType::kFloat32, {tokens, 1}, d),
                           TensorView(sb, DType::kFloat32, {1, features}, d),
                           TensorView(bs, DType::kBFloat16, {features}, d));
  };
  if (device == "cuda") {
#if QGEMM_WITH_CUDA
    using cuda::DeviceBuffer;
    DeviceBuffer d_out(out.size() * 2), d_a(xq.size()), d_b(wq.size()), d_sa(tokens * 4),
        d_sb(features * 4), d_bias(features * 2);
    auto up = [](DeviceBuffer& dst, const void* src) {
      cuda::check(cudaMemcpy(dst.get(), src, dst.bytes(), cudaMemcpyHostToDevice), "upload");
    };
    up(d_a, xq.data());
    up(d_b, wq.data());
    up(d_sa, scale_x.data());
    up(d_sb, scale_w.data());
    up(d_bias, bias.data());
    auto [o, a, b, sa, sb, bs] = views(d_out.get(), d_a.get(), d_b.get(), d_sa.get(), d_sb.get(),
                                       d_bias.get(), Device::cuda(0));
    const auto stats = cuda::time_cuda([&](int) { scaled_mm(o, a, b, sa, sb, bs); }, nullptr, 5, 20);
    median_us = stats.median_us;
    cuda::check(cudaMemcpy(out.data(), d_out.get(), d_out.bytes(), cudaMemcpyDeviceToHost), "download");
    std::printf("device: cuda:0 %s\n", cuda::device_name(0).c_str());
#else
    std::printf("this build has no CUDA backend: running on the CPU\n");
    device = "cpu";
#endif
  }
  if (device == "cpu") {
    auto [o, a, b, sa, sb, bs] = views(out.data(), xq.data(), wq.data(), scale_x.data(),
                                       scale_w.data(), bias.data(), Device::cpu());
    median_us = time_cpu([&] { scaled_mm(o, a, b, sa, sb, bs); }, 1, 3).median_us;
    std::printf("device: cpu %s\n", cpu_name().c_str());
  }

  // Error against the unquantized layer y = x·wᵀ + bias, in double, over a
  // sample of output columns (every token).
  double err2 = 0, ref2 = 0, max_abs = 0;
  const int64_t column_step = std::max<int64_t>(1, features / 512);
  for (int64_t t = 0; t < tokens; ++t) {
    for (int64_t n = 0; n < features; n += column_step) {
      double ref = bias_f[n];
      for (int64_t k = 0; k < hidden; ++k) ref += static_cast<double>(x[t * hidden + k]) * w[n * hidden + k];
      const double got = numeric::bf16_bits_to_float(out[t * features + n]);
      err2 += (got - ref) * (got - ref);
      ref2 += ref * ref;
      max_abs = std::max(max_abs, std::fabs(got - ref));
    }
  }
  const double ops = 2.0 * tokens * hidden * features;
  std::printf("relative error vs fp32 layer: %.3e (max abs %.3e)\n", std::sqrt(err2 / ref2), max_abs);
  std::printf("scaled_mm time: %.1f us median (%.2f TOPS)\n", median_us, ops / (median_us * 1e6));
  return 0;
}

}  // namespace qgemm::tools
