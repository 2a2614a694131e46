// `qgemm bench quant`, GPU part: every quantize / dequantize variant at the
// issue's shapes (bf16 activations), with
//   median_us        CUDA events around each call (host launch included, what
//                    an eager caller sees: cuda::time_cuda);
//   device_us        the same launches queued behind a spin kernel, so the
//                    events measure device time only (small-shape latency);
//   frac_of_copy_bw  (bytes read + written) / device_us as a fraction of the
//                    1 GiB device copy bandwidth measured in the same run;
//   frac_of_same_size_copy  … of a cudaMemcpy moving the same bytes;
//   speedup_vs_eager_composite  device time of the PyTorch-eager style peer
//                    (bench_quant_peers.cuh) over qgemm's.
// The unfused amax + quantize pair is timed for the per-token int8 case.
#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "bench_quant_peers.cuh"
#include "commands.h"
#include "cuda_bench.h"
#include "qgemm/quant.h"

namespace qgemm::tools {
namespace {

using quant_peers::EagerOp;

struct Variant {
  const char* impl;
  QuantMode mode;
  DType quant;
  bool symmetric;
  bool dequantize;
  bool scale_col_major;
  EagerOp peer;
};

// The variants and their eager peers; per-group is group_size 128.
const Variant kVariants[] = {
    {"qgemm-token-int8", QuantMode::kDynamicPerToken, DType::kInt8, true, false, false, EagerOp::kTokenInt8},
    {"qgemm-token-int8-asym", QuantMode::kDynamicPerToken, DType::kInt8, false, false, false, EagerOp::kTokenInt8Asym},
    {"qgemm-token-fp8", QuantMode::kDynamicPerToken, DType::kFloat8E4M3, true, false, false, EagerOp::kTokenFp8},
    {"qgemm-group128-int8", QuantMode::kDynamicPerGroup, DType::kInt8, true, false, false, EagerOp::kGroupInt8},
    {"qgemm-group128-int8-colmajor", QuantMode::kDynamicPerGroup, DType::kInt8, true, false, true, EagerOp::kGroupInt8},
    {"qgemm-static-int8", QuantMode::kStaticPerTensor, DType::kInt8, true, false, false, EagerOp::kStaticInt8},
    {"qgemm-dequant-token-int8", QuantMode::kDynamicPerToken, DType::kInt8, true, true, false, EagerOp::kDequantInt8},
};
constexpr int kGroup = 128;

struct Shape {
  int64_t tokens, hidden;
};

}  // namespace

void bench_quant_cuda(const Options& options, BenchReport& report) {
  report.set_device_name(cuda::device_name(0));
  cudaStream_t stream = nullptr;
  const int warmup = options.get_int("warmup", 10), runs = options.get_int("runs", 100);
  const double copy_gbps = cuda::record_copy_bandwidth(report, stream);
  const Device gpu = Device::cuda(0);
  std::vector<Shape> shapes;
  for (const auto& s : options.get_shapes("shapes", {{1, 4096}, {16, 4096}, {256, 4096}, {4096, 4096}, {16384, 8192}})) {
    shapes.push_back({s[0], s[1]});
  }
  for (const Shape& shape_th : shapes) {
    const int64_t t = shape_th.tokens, h = shape_th.hidden;
    const size_t x_bytes = t * h * 2, q_bytes = t * h;
    const int sets = cuda::rotation_sets(x_bytes + q_bytes);
    const int64_t max_scales = t * (h / kGroup > 0 ? h / kGroup : 1);
    cuda::DeviceBuffer x(x_bytes * sets), q(q_bytes * sets), scale(max_scales * 4 + 16), azp(max_scales * 4 + 16),
        workspace(quant_peers::EagerWorkspace::bytes(t, h));
    const auto ws = quant_peers::EagerWorkspace::carve(workspace.get(), t, h);
    cuda::fill_random(x.get(), DType::kBFloat16, t * h * sets, -3, 3, 11, stream);
    cuda::fill_random(q.get(), DType::kInt8, t * h * sets, -128, 127, 12, stream);
    cuda::fill_random(scale.get(), DType::kFloat32, scale.bytes() / 4, 0.01, 0.02, 13, stream);
    cuda::fill_random(azp.get(), DType::kInt32, azp.bytes() / 4, -5, 5, 14, stream);
    auto x_at = [&](int i) { return static_cast<uint8_t*>(x.get()) + (i % sets) * x_bytes; };
    auto q_at = [&](int i) { return static_cast<uint8_t*>(q.get()) + (i % sets) * q_bytes; };
    const std::string shape = std::to_string(t) + "x" + std::to_string(h);
    // Same-size copy: bytes / 2 copied = bytes read + written.
    auto copy_for = [&](double bytes) {
      return cuda::copy_bandwidth_gbps(static_cast<size_t>(bytes / 2), stream, warmup, runs);
    };
    auto record = [&](const std::string& impl, const TimingStats& host, const TimingStats& device, double bytes,
                      double same_size_gbps) {
      BenchRecord r = timed_record("quant", impl, shape, "cuda", host);
      r.bytes = bytes;
      r.extra["device_us"] = device.median_us;
      r.extra["frac_of_copy_bw"] = bytes / (device.median_us * 1e3) / copy_gbps;
      r.extra["frac_of_same_size_copy"] = bytes / (device.median_us * 1e3) / same_size_gbps;
      return r;
    };

    for (const auto& v : kVariants) {
      QuantOptions o;
      o.mode = v.mode;
      o.symmetric = v.symmetric;
      o.group_size = kGroup;
      const int64_t groups = h / kGroup;
      const int64_t scales = v.mode == QuantMode::kDynamicPerGroup ? t * groups
                             : v.mode == QuantMode::kStaticPerTensor ? 1 : t;
      TensorView scale_v(scale.get(), DType::kFloat32, {scales}, gpu);
      if (v.mode == QuantMode::kDynamicPerGroup) {
        scale_v = v.scale_col_major ? TensorView::strided(scale.get(), DType::kFloat32, {t, groups}, {1, t}, gpu)
                                    : TensorView(scale.get(), DType::kFloat32, {t, groups}, gpu);
      }
      std::optional<TensorView> azp_v;
      if (!v.symmetric) azp_v = TensorView(azp.get(), DType::kInt32, {t}, gpu);
      auto launch = [&](int i) {
        const TensorView xv(x_at(i), DType::kBFloat16, {t, h}, gpu);
        const TensorView qv(q_at(i), v.quant, {t, h}, gpu);
        if (v.dequantize) dequantize(xv, qv, scale_v, azp_v, o, stream);
        else quantize(qv, scale_v, azp_v, xv, o, stream);
      };
      const double bytes = static_cast<double>(x_bytes + q_bytes + scales * (v.symmetric ? 4 : 8));
      const auto host = cuda::time_cuda(launch, stream, warmup, runs);
      const auto device = cuda::time_cuda_device(launch, stream, warmup, runs);
      const double same_size = copy_for(bytes);
      BenchRecord r = record(v.impl, host, device, bytes, same_size);

      const int64_t peer_group = v.mode == QuantMode::kDynamicPerGroup ? kGroup : h;
      auto peer = [&](int i) {
        quant_peers::eager_composite(v.peer, x_at(i), q_at(i), scale.as<float>(), t, h, peer_group, ws, stream);
      };
      const auto peer_host = cuda::time_cuda(peer, stream, warmup, runs);
      const auto peer_device = cuda::time_cuda_device(peer, stream, warmup, runs);
      r.extra["speedup_vs_eager_composite"] = peer_device.median_us / device.median_us;
      report.add(r);
      report.add(record(std::string("eager-composite-") + (v.impl + 6), peer_host, peer_device, bytes, same_size));
    }
    auto pair = [&](int i) { quant_peers::unfused_pair(x_at(i), q_at(i), scale.as<float>(), t, h, stream); };
    const double pair_bytes = static_cast<double>(x_bytes + q_bytes + t * 4);
    report.add(record("unfused-amax+quantize-int8", cuda::time_cuda(pair, stream, warmup, runs),
                      cuda::time_cuda_device(pair, stream, warmup, runs), pair_bytes, copy_for(pair_bytes)));
  }
}

}  // namespace qgemm::tools
