// GPU part of `qgemm bench gemm`: qgemm int8 / fp8 scaled_mm against the
// peers an engine would otherwise use, all timed in the same process.
#include <string>
#include <vector>

#include "commands.h"
#include "cuda_bench.h"
#include "qgemm/gemm.h"

namespace qgemm::tools {

void bench_gemm_cuda(const Options& options, BenchReport& report) {
  report.set_device_name(cuda::device_name(0));
  const auto shapes = options.get_shapes("shapes", {{8192, 8192, 8192}, {16, 8192, 8192}});
  cudaStream_t stream = nullptr;
  for (const auto& s : shapes) {
    const int64_t m = s[0], n = s[1], k = s[2];
    const size_t set_bytes = m * k + n * k;
    const int sets = cuda::rotation_sets(set_bytes);
    cuda::DeviceBuffer a(m * k * sets), b(n * k * sets), out(m * n * 2), sa(m * 4), sb(n * 4), bias(n * 2);
    cuda::fill_random(a.get(), DType::kInt8, m * k * sets, -128, 127, 1, stream);
    cuda::fill_random(b.get(), DType::kInt8, n * k * sets, -128, 127, 2, stream);
    cuda::fill_random(sa.get(), DType::kFloat32, m, 1e-3, 1e-2, 3, stream);
    cuda::fill_random(sb.get(), DType::kFloat32, n, 1e-3, 1e-2, 4, stream);
    cuda::fill_random(bias.get(), DType::kBFloat16, n, -1, 1, 5, stream);
    const Device dev = Device::cuda(0);
    const TensorView out_v(out.get(), DType::kBFloat16, {m, n}, dev);
    const TensorView sa_v(sa.get(), DType::kFloat32, {m}, dev);
    const TensorView sb_v(sb.get(), DType::kFloat32, {n}, dev);
    const TensorView bias_v(bias.get(), DType::kBFloat16, {n}, dev);
    const auto stats = cuda::time_cuda(
        [&](int i) {
          const int set = i % sets;
          const TensorView a_v(a.as<int8_t>() + set * m * k, DType::kInt8, {m, k}, dev);
          const auto b_v = TensorView::strided(b.as<int8_t>() + set * n * k, DType::kInt8, {k, n}, {1, k}, dev);
          scaled_mm(out_v, a_v, b_v, sa_v, sb_v, bias_v, stream);
        },
        stream, options.get_int("warmup", 10), options.get_int("runs", 50));
    BenchRecord r;
    r.op = "scaled_mm";
    r.impl = "qgemm-int8";
    r.shape = std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k);
    r.device = "cuda";
    r.median_us = stats.median_us;
    r.min_us = stats.min_us;
    r.runs = stats.runs;
    r.ops = 2.0 * m * n * k;
    r.bytes = static_cast<double>(m * k + n * k + 2 * m * n);
    report.add(r);
  }
}

}  // namespace qgemm::tools
