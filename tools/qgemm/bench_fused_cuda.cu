// GPU part of `qgemm bench fused`: every fused op (bf16 inputs; int32 + int8
// residual for the FasterTransformer forms) at tokens × hidden, as a
// fraction of the device copy bandwidth measured in the same run, against
// the "unfused" peer of the same composite (bench_fused_peers.cuh). Inputs
// rotate through enough copies that every run reads cold (DRAM) data.
//
// Records: op = the qgemm entry ("rms_norm_quant", …), shape = "TxH" (H = the
// output width; SiLU reads [T, 2H]), impl = "qgemm-<mode>" or
// "unfused-<mode>", bytes = the minimum DRAM traffic of the op (inputs read
// once, outputs written once; per-hidden parameters left out), median_us =
// device time (launches queued behind a spin kernel, cuda::time_cuda_device),
// extra host_us = CUDA events around single host calls (includes launch and
// validation overhead when that exceeds the kernel), frac_of_copy_bw against
// the 1 GiB copy and frac_of_same_size_copy against a cudaMemcpy moving the
// same bytes (the floor any single launch of that size has). The Python
// bench adds "torch-eager-<mode>" / "torch-compile-<mode>" records of the
// same op, shape and bytes (docs/fused.md, "Benchmarks").
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench_fused_ops.h"
#include "bench_fused_peers.cuh"
#include "commands.h"
#include "cuda_bench.h"
#include "qgemm/fused.h"

namespace qgemm::tools {
namespace {

using Op = FusedBenchOp;

struct Variant {
  Op op;
  const char* name;
  const char* mode;  // impl suffix
  bool dynamic, fp8, gelu_tanh;
};

const Variant kVariants[] = {
    {Op::kRms, "rms_norm_quant", "dynamic-int8", true, false, false},
    {Op::kRms, "rms_norm_quant", "static-fp8", false, true, false},
    {Op::kAddRms, "add_rms_norm_quant", "dynamic-int8", true, false, false},
    {Op::kAddRms, "add_rms_norm_quant", "static-fp8", false, true, false},
    {Op::kLayerNorm, "layer_norm_quant", "dynamic-int8", true, false, false},
    {Op::kLayerNorm, "layer_norm_quant", "static-int8", false, false, false},
    {Op::kLayerNormInt32, "layer_norm_quant_int32", "static-int8", false, false, false},
    {Op::kLayerNormInt32, "layer_norm_quant_int32", "dynamic-int8", true, false, false},
    {Op::kSiluMul, "silu_and_mul_quant", "dynamic-int8", true, false, false},
    {Op::kSiluMul, "silu_and_mul_quant", "static-fp8", false, true, false},
    {Op::kGelu, "bias_gelu_quant", "dynamic-int8-erf", true, false, false},
    {Op::kGelu, "bias_gelu_quant", "static-int8-tanh", false, false, true},
    {Op::kGeluInt32, "bias_gelu_quant_int32", "static-int8-tanh", false, false, true},
    {Op::kGeluInt32, "bias_gelu_quant_int32", "dynamic-int8-erf", true, false, false},
};

// Every buffer of one shape; the [T, ·] inputs hold `sets` rotating copies.
struct ShapeBuffers {
  int64_t t, h;
  int sets;
  cuda::DeviceBuffer x, acc, residual, residual_q, q, y, y2, scale, static_scale, scale_a, scale_w, weight, beta, bias;
  ShapeBuffers(int64_t tokens, int64_t hidden, cudaStream_t stream) : t(tokens), h(hidden) {
    const size_t th = static_cast<size_t>(t * h);
    sets = cuda::rotation_sets(th * (4 + 4 + 2 + 1 + 1));
    x = cuda::DeviceBuffer(th * 4 * sets);  // bf16 [T, 2H]
    acc = cuda::DeviceBuffer(th * 4 * sets);
    residual = cuda::DeviceBuffer(th * 2 * sets);
    residual_q = cuda::DeviceBuffer(th * sets);
    q = cuda::DeviceBuffer(th * sets);
    y = cuda::DeviceBuffer(th * 2);
    y2 = cuda::DeviceBuffer(th * 2);
    scale = cuda::DeviceBuffer(t * 4), static_scale = cuda::DeviceBuffer(4);
    scale_a = cuda::DeviceBuffer(t * 4), scale_w = cuda::DeviceBuffer(h * 4);
    weight = cuda::DeviceBuffer(h * 2), beta = cuda::DeviceBuffer(h * 2), bias = cuda::DeviceBuffer(h * 2);
    cuda::fill_random(x.get(), DType::kBFloat16, 2 * th * sets, -2, 2, 21, stream);
    cuda::fill_random(acc.get(), DType::kInt32, th * sets, -3000000, 3000000, 22, stream);
    cuda::fill_random(residual.get(), DType::kBFloat16, th * sets, -2, 2, 23, stream);
    cuda::fill_random(residual_q.get(), DType::kInt8, th * sets, -127, 127, 24, stream);
    cuda::fill_random(static_scale.get(), DType::kFloat32, 1, 0.02, 0.02, 25, stream);
    cuda::fill_random(scale_a.get(), DType::kFloat32, t, 0.5e-3, 1.5e-3, 26, stream);
    cuda::fill_random(scale_w.get(), DType::kFloat32, h, 0.5e-3, 1.5e-3, 27, stream);
    cuda::fill_random(weight.get(), DType::kBFloat16, h, 0.5, 1.5, 28, stream);
    cuda::fill_random(beta.get(), DType::kBFloat16, h, -0.5, 0.5, 29, stream);
    cuda::fill_random(bias.get(), DType::kBFloat16, h, -0.5, 0.5, 30, stream);
  }
  template <typename T>
  T* at(const cuda::DeviceBuffer& b, int set, size_t per_set_bytes) const {
    return reinterpret_cast<T*>(static_cast<uint8_t*>(b.get()) + set * per_set_bytes);
  }
};

// One qgemm call of `v` on rotation set `set`.
void run_qgemm(const Variant& v, const ShapeBuffers& b, int set, cudaStream_t stream) {
  const Device gpu = Device::cuda(0);
  const int64_t t = b.t, h = b.h;
  const size_t th = static_cast<size_t>(t * h);
  QuantOutput out;
  out.q = TensorView(b.at<uint8_t>(b.q, set, th), v.fp8 ? DType::kFloat8E4M3 : DType::kInt8, {t, h}, gpu);
  out.mode = v.dynamic ? FusedScale::kDynamicPerToken : FusedScale::kStatic;
  out.scale = v.dynamic ? TensorView(b.scale.get(), DType::kFloat32, {t}, gpu)
                        : TensorView(b.static_scale.get(), DType::kFloat32, {1}, gpu);
  const TensorView x(b.at<uint8_t>(b.x, set, th * 4), DType::kBFloat16, {t, v.op == Op::kSiluMul ? 2 * h : h}, gpu);
  const TensorView residual(b.at<uint8_t>(b.residual, set, th * 2), DType::kBFloat16, {t, h}, gpu);
  const TensorView weight(b.weight.get(), DType::kBFloat16, {h}, gpu), beta(b.beta.get(), DType::kBFloat16, {h}, gpu),
      bias(b.bias.get(), DType::kBFloat16, {h}, gpu);
  const Int32GemmOutput acc{TensorView(b.at<uint8_t>(b.acc, set, th * 4), DType::kInt32, {t, h}, gpu),
                            TensorView(b.scale_a.get(), DType::kFloat32, {t}, gpu),
                            TensorView(b.scale_w.get(), DType::kFloat32, {h}, gpu)};
  const auto gelu = v.gelu_tanh ? GeluApproximation::kTanh : GeluApproximation::kErf;
  switch (v.op) {
    case Op::kRms: return rms_norm_quant(out, x, weight, 1e-6f, stream);
    case Op::kAddRms: return add_rms_norm_quant(out, x, residual, weight, 1e-6f, stream);
    case Op::kLayerNorm: return layer_norm_quant(out, x, weight, beta, 1e-12f, residual, bias, stream);
    case Op::kLayerNormInt32:
      return layer_norm_quant_int32(out, acc, TensorView(b.at<uint8_t>(b.residual_q, set, th), DType::kInt8, {t, h}, gpu),
                                    TensorView(b.static_scale.get(), DType::kFloat32, {1}, gpu), weight, beta,
                                    1e-12f, bias, stream);
    case Op::kSiluMul: return silu_and_mul_quant(out, x, stream);
    case Op::kGelu: return bias_gelu_quant(out, x, bias, gelu, stream);
    case Op::kGeluInt32: return bias_gelu_quant_int32(out, acc, bias, gelu, stream);
  }
}

// The unfused composite of `v` on rotation set `set`: op kernel(s) writing
// bf16, then (dynamic) a row-amax kernel, then an elementwise quantize kernel.
void run_unfused(const Variant& v, const ShapeBuffers& b, int set, cudaStream_t stream) {
  using namespace peers;
  const int64_t t = b.t, h = b.h, count = t * h;
  const size_t th = static_cast<size_t>(count);
  const unsigned rows = static_cast<unsigned>(t), grid = 4096, block = 256;
  auto* x = b.at<__nv_bfloat16>(b.x, set, th * 4);
  auto* residual = b.at<__nv_bfloat16>(b.residual, set, th * 2);
  auto* y = b.y.as<__nv_bfloat16>();
  auto* y2 = b.y2.as<__nv_bfloat16>();
  const auto* weight = b.weight.as<__nv_bfloat16>();
  const auto* beta = b.beta.as<__nv_bfloat16>();
  const auto* bias = b.bias.as<__nv_bfloat16>();
  const auto* acc = b.at<int32_t>(b.acc, set, th * 4);
  const auto* residual_q = b.at<int8_t>(b.residual_q, set, th);
  const __nv_bfloat16* normed = y;
  switch (v.op) {
    case Op::kAddRms:
      add_kernel<<<grid, block, 0, stream>>>(residual, x, count);
      rms_norm_kernel<<<rows, 512, 0, stream>>>(y, residual, weight, h, 1e-6f);
      break;
    case Op::kRms: rms_norm_kernel<<<rows, 512, 0, stream>>>(y, x, weight, h, 1e-6f); break;
    case Op::kLayerNorm: layer_norm_kernel<<<rows, 512, 0, stream>>>(y, x, residual, bias, weight, beta, h, 1e-12f); break;
    case Op::kLayerNormInt32:
      dequant_kernel<<<grid, block, 0, stream>>>(y2, acc, b.scale_a.as<float>(), b.scale_w.as<float>(), bias,
                                                 residual_q, 0.02f, h, count);
      layer_norm_kernel<<<rows, 512, 0, stream>>>(y, y2, nullptr, nullptr, weight, beta, h, 1e-12f);
      break;
    case Op::kSiluMul: silu_mul_kernel<<<grid, block, 0, stream>>>(y, x, h, count); break;
    case Op::kGelu: bias_gelu_kernel<<<grid, block, 0, stream>>>(y, x, bias, h, count, v.gelu_tanh); break;
    case Op::kGeluInt32:
      dequant_kernel<<<grid, block, 0, stream>>>(y2, acc, b.scale_a.as<float>(), b.scale_w.as<float>(), bias,
                                                 nullptr, 0.0f, h, count);
      bias_gelu_kernel<<<grid, block, 0, stream>>>(y, y2, nullptr, h, count, v.gelu_tanh);
      break;
  }
  const float* scale = b.static_scale.as<float>();
  if (v.dynamic) {
    row_scale_kernel<<<rows, 512, 0, stream>>>(b.scale.as<float>(), normed, h, v.fp8 ? 448.0f : 127.0f);
    scale = b.scale.as<float>();
  }
  quantize_kernel<<<grid, block, 0, stream>>>(b.at<uint8_t>(b.q, set, th), normed, scale, v.dynamic, v.fp8, h, count);
}

}  // namespace

void bench_fused_cuda(const Options& options, BenchReport& report) {
  if (options.has("sweep")) {  // every launch config instead (bench_fused_sweep.cu)
    bench_fused_sweep_cuda(options, report);
    return;
  }
  report.set_device_name(cuda::device_name(0));
  cudaStream_t stream = nullptr;
  const int warmup = options.get_int("warmup", 10), runs = options.get_int("runs", 100);
  const std::string only = options.get("ops", "");  // comma-separated op names, empty: all
  const double copy_gbps = cuda::record_copy_bandwidth(report, stream);
  std::vector<std::vector<int64_t>> default_shapes;
  for (int64_t t : {16, 256, 4096, 16384}) {
    for (int64_t h : {4096, 8192}) default_shapes.push_back({t, h});
  }
  for (const auto& s : options.get_shapes("shapes", default_shapes)) {
    if (s.size() != 2) throw std::invalid_argument("--shapes takes TxH pairs");
    const ShapeBuffers buffers(s[0], s[1], stream);
    const std::string shape = std::to_string(s[0]) + "x" + std::to_string(s[1]);
    std::map<double, double> same_size_copies;  // op bytes → GB/s of a copy of that traffic
    auto same_size_copy = [&](double bytes) {
      auto it = same_size_copies.find(bytes);
      if (it != same_size_copies.end()) return it->second;
      return same_size_copies[bytes] = cuda::copy_bandwidth_gbps(static_cast<size_t>(bytes / 2), stream, warmup, runs);
    };
    for (const Variant& v : kVariants) {
      if (!only.empty() && ("," + only + ",").find("," + std::string(v.name) + ",") == std::string::npos) continue;
      const double bytes = fused_op_bytes(v.op, static_cast<double>(s[0]), static_cast<double>(s[1]), v.dynamic);
      const double same_size_gbps = same_size_copy(bytes);
      auto time = [&](auto&& launch) {
        return cuda::time_cuda_device([&](int i) { launch(v, buffers, i % buffers.sets, stream); }, stream, warmup,
                                      runs);
      };
      auto host_time = [&](auto&& launch) {
        return cuda::time_cuda([&](int i) { launch(v, buffers, i % buffers.sets, stream); }, stream, warmup, runs);
      };
      const TimingStats unfused = time(run_unfused);
      const TimingStats fused = time(run_qgemm);
      const TimingStats fused_host = host_time(run_qgemm);
      auto add = [&](const std::string& impl, const TimingStats& stats) {
        BenchRecord r = timed_record(v.name, impl + v.mode, shape, "cuda", stats);
        r.bytes = bytes;
        r.extra["frac_of_copy_bw"] = bytes / (stats.median_us * 1e3) / copy_gbps;
        r.extra["frac_of_same_size_copy"] = bytes / (stats.median_us * 1e3) / same_size_gbps;
        if (impl == "qgemm-") {
          r.extra["speedup_vs_unfused"] = unfused.median_us / stats.median_us;
          r.extra["host_us"] = fused_host.median_us;
        }
        report.add(r);
      };
      add("unfused-", unfused);
      add("qgemm-", fused);
    }
  }
}

}  // namespace qgemm::tools
